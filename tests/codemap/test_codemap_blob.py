"""The stored blob is assembled around ``json`` (the references are written in
directly): it must stay byte for byte what ``json.dumps`` gives, and decode back."""

from __future__ import annotations

import json

import pytest

from tooldeck.codemap.entry import Entry, encode_rows
from tooldeck.codemap.extract import extract_rows


@pytest.mark.parametrize("refs", ["", "a B_c d9 x", 'quote " inside', "back\\slash", "new\nline", "é ü"])
@pytest.mark.parametrize("imports", [[], ["os", ".m.{a, b}"], ['odd "é" \\ name']])
def test_blob_is_what_json_dumps_gives(refs: str, imports: list[str]) -> None:
    rows = [["f", "function", 'def f(x="é\\n")', 3, None, 5, 0], ["C", "class", "class C", 7, "M", 9, 1]]
    expected = json.dumps({"i": imports, "s": rows, "r": refs, "n": 12}, ensure_ascii=False, separators=(",", ":"))
    assert encode_rows(imports, rows, refs, 12) == expected


def test_blob_of_real_source_decodes_to_its_payload() -> None:
    src = (
        b"import os\nfrom .m import a, b\n\nclass C(Base):\n    x: int = 1\n"
        b'    def f(self, y="q\\"") -> str:\n        return os.sep  # words\n'
    )
    imports, rows, refs, lines = extract_rows("python", src)
    entry = Entry("k", data=encode_rows(imports, rows, refs, lines))
    assert entry.imports == imports == ["os", ".m.{a, b}"]
    assert [(s.name, s.kind, s.signature, s.line) for s in entry.symbols] == [(r[0], r[1], r[2], r[3]) for r in rows]
    assert entry.refs == refs and "sep" in refs.split() and "words" not in refs.split()
    assert entry.lines == lines == 7

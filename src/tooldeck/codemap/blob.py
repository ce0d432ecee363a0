"""A payload's stored form: the blob text (JSON), written by the workers.

Apart from :mod:`tooldeck.codemap.entry` (which reads blobs back into
:class:`~tooldeck.codemap.model.Symbol` objects) so that a worker process,
which only extracts and encodes, imports ``json`` and nothing of the model.
The format is described in :mod:`tooldeck.codemap.entry`.
"""

from __future__ import annotations

import json
from typing import Any

# check_circular off: rows are fresh lists of str/int/None, and the check costs a dict entry per list
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)


def encode_rows(imports: list[str], rows: list[list[Any]], refs: str, lines: int) -> str:
    """The blob of a payload given as rows (see ``extract.extract_rows``).

    Byte for byte ``json.dumps({"i": ..., "s": ..., "r": ..., "n": ...},
    ensure_ascii=False, separators=(",", ":"))``, assembled by hand: the
    references are identifier characters and spaces only (nothing to escape),
    and escaping them cost half of the encoding (a worker encodes every file)."""
    if not (refs.isascii() and refs.isprintable()) or '"' in refs or "\\" in refs:  # never from extraction
        return _ENCODER.encode({"i": imports, "s": rows, "r": refs, "n": lines})
    head = _ENCODER.encode({"i": imports, "s": rows})  # one encoder call: `{"i":[...],"s":[...]}`
    return f'{head[:-1]},"r":"{refs}","n":{int(lines)}}}'


def encode_skip(reason: str) -> str:
    return json.dumps({"x": reason})

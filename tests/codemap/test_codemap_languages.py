"""Which files have a codemap: cheap to ask (no tree-sitter import), and every
language named there has a grammar and a query that compiles."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tooldeck.codemap.languages import LANGUAGES, has_codemap, language_for
from tooldeck.codemap.specs import SPECS


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b/app.py", "python"),
        ("types.pyi", "python"),
        ("App.TSX", "tsx"),
        ("index.mjs", "javascript"),
        ("lib.rs", "rust"),
        ("main.go", "go"),
        ("x.hpp", "cpp"),
        ("x.h", "c"),
        ("Program.cs", "csharp"),
        ("Rakefile", "ruby"),
        ("build.sbt", "scala"),
        ("m.mli", "ocaml_interface"),
        ("run.sh", "bash"),
        ("README.md", None),
        ("Makefile", None),
        ("archive.tar.gz", None),
    ],
)
def test_language_for(path: str, language: str | None):
    assert language_for(path) == language
    assert has_codemap(path) is (language is not None)


def test_every_language_has_a_spec():
    assert set(SPECS) >= LANGUAGES


def test_asking_imports_no_parser():
    code = (
        "import sys, tooldeck.codemap.languages as L, tooldeck.tools.structure, tooldeck.codemap.model;"
        "assert L.has_codemap('a.py');"
        "assert 'tree_sitter' not in sys.modules, 'tree_sitter imported';"
        "assert 'tooldeck.codemap.service' not in sys.modules, 'service imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("language", sorted(SPECS))
def test_every_query_compiles(language: str):
    from tooldeck.codemap import grammars

    query = grammars.definitions_query(language)
    assert query.pattern_count > 1

"""subwords splits a name in one pass; it must give what splitting at the
separators first gave (the symbol words and path words depend on it)."""

from __future__ import annotations

import random
import re

from tooldeck.context.query import _CAMEL_SPLIT, subwords


def _by_parts(identifier: str) -> list[str]:
    """The definition: split at ``._:/-`` runs and ``_``, then camel case."""
    out: list[str] = []
    for piece in re.split(r"[._:/-]+", identifier):
        for part in piece.split("_"):
            out.extend(m.lower() for m in _CAMEL_SPLIT.findall(part))
    return [w for w in out if len(w) >= 3 and not w.isdigit()]


def test_known_names() -> None:
    assert subwords("HTTPAdapter.send_request") == ["http", "adapter", "send", "request"]
    assert subwords("max_retries") == ["max", "retries"]
    assert subwords("ABC_Def-ghiJKL/x:yz123") == ["abc", "def", "ghi", "jkl"]
    assert subwords("IOError2024") == ["error"]


def test_the_same_as_splitting_at_separators_first() -> None:
    rng = random.Random(7)
    alphabet = "aAbBzZ09_._:/-é$ XYq"
    for _ in range(20_000):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        assert subwords(name) == _by_parts(name), name

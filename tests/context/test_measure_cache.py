"""Codemap token counts are kept between builds: a file whose codemap was
counted once is not rendered again, and its cost stays the real one; an edit
(a new content hash) is rendered and counted anew."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldeck.codemap.service import CodemapService
from tooldeck.context.builder import ContextBuilder
from tooldeck.runtime import Runtime


def _costs(res) -> dict[str, tuple]:  # type: ignore[no-untyped-def]
    return {c.candidate.shown: (c.candidate.codemap, c.candidate.full, c.mode) for c in res.choices}


def test_a_known_codemap_is_not_rendered_again(runtime: Runtime, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(4):
        body = "".join(f"def invoice_total_{i}_{k}(cart, rate):\n    return cart * rate\n\n" for k in range(30))
        (root / f"invoice_{i}.py").write_text(body)
    rendered: list[str] = []
    real = CodemapService.render

    def spy(self: CodemapService, cm):  # type: ignore[no-untyped-def]
        rendered.append(cm.path)
        return real(self, cm)

    monkeypatch.setattr(CodemapService, "render", spy)
    builder = ContextBuilder(runtime)
    first = builder.build("invoice total for a cart", 20000, apply=False)
    assert sorted(rendered) == [f"invoice_{i}.py" for i in range(4)]
    rendered.clear()
    second = builder.build("invoice total for a cart", 20000, apply=False)
    assert rendered == [] and _costs(second) == _costs(first)
    assert all(c.candidate.codemap for c in second.choices)

    (root / "invoice_2.py").write_text("def invoice_total_2(cart):\n    return cart\n")
    third = builder.build("invoice total for a cart", 20000, apply=False)
    assert rendered == ["invoice_2.py"]
    assert _costs(third)["invoice_2.py"][0] < _costs(first)["invoice_2.py"][0]

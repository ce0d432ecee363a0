"""context_builder end to end on a small real project: it finds what a task
names, follows references, sets the selection, and never exceeds the budget."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tooldeck.context.builder import ContextBuilder
from tooldeck.selection.service import selection_service

FILES = {
    "shop/cart.py": '''"""Shopping cart."""
from shop.pricing import apply_discount


class Cart:
    def __init__(self):
        self.items = []

    def add(self, sku: str, price: float) -> None:
        self.items.append((sku, price))

    def total(self) -> float:
        return apply_discount(sum(p for _, p in self.items))
''',
    "shop/pricing.py": '''"""Prices and discounts."""

DISCOUNT_RATE = 0.1


def apply_discount(amount: float) -> float:
    """Take the seasonal discount off ``amount``."""
    return amount * (1 - DISCOUNT_RATE)
''',
    "shop/shipping.py": '''"""Shipping costs by weight."""


def shipping_cost(weight_kg: float) -> float:
    return 4.5 + 1.2 * weight_kg
''',
    "shop/checkout.py": '''"""Checkout flow."""
from shop.cart import Cart
from shop.shipping import shipping_cost


def checkout(cart: Cart, weight_kg: float) -> float:
    return cart.total() + shipping_cost(weight_kg)
''',
    "docs/notes.md": "# Notes\n\nNothing about money here, only the weather.\n",
}


@pytest.fixture
def project(root: Path) -> Path:
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    # a big module that only a tight budget forces down to slices or codemap
    body = "\n".join(f"def helper_{i}(x):\n    return x + {i}\n" for i in range(400))
    (root / "shop" / "bulk.py").write_text('"""Bulk helpers for apply_discount."""\n' + body)
    (root / ".gitignore").write_text("ignored/\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "discount.py").write_text("def apply_discount(x):\n    return x\n")
    return root


def test_finds_the_definer_of_a_named_symbol_and_explains_why(call, project):
    out = call.ok("context_builder", {"instructions": "apply_discount rounds wrongly for large carts", "budget": 8000})
    first = out.splitlines()[1]
    assert "shop/pricing.py" in first and "defines `apply_discount`" in first
    assert "ignored/discount.py" not in out  # gitignored files are never candidates
    assert "docs/notes.md" not in out


def test_reference_graph_brings_in_callers(runtime, project):
    result = ContextBuilder(runtime).build("apply_discount is wrong", 8000, apply=False)
    chosen = {c.candidate.shown for c in result.selected}
    assert {"shop/pricing.py", "shop/cart.py"} <= chosen


def test_sets_the_selection_and_prompt_and_totals_match_the_real_package(call, runtime, project):
    call.ok("context_builder", {"instructions": "checkout adds shipping_cost to the Cart total", "budget": 6000})
    svc = selection_service(runtime)
    selected = {runtime.workspace.display(p) for p in svc.selected_paths()}
    assert {"shop/checkout.py", "shop/shipping.py"} <= selected
    assert svc.prompt() == "checkout adds shipping_cost to the Cart total"
    bd = svc.breakdown()
    assert sum(f.tokens for f in bd.files) <= 6000


@pytest.mark.parametrize("budget", [1000, 2000, 4000, 30000])
def test_selection_never_exceeds_the_budget(runtime, project, budget):
    result = ContextBuilder(runtime).build("apply_discount helper_3 bulk helpers shipping cart", budget)
    bd = selection_service(runtime).breakdown()
    files_total = sum(f.tokens for f in bd.files)
    assert files_total == result.total_tokens <= budget
    assert result.selected  # something always fits a 1000-token budget here


def test_tight_budget_steps_big_files_down(runtime, project):
    result = ContextBuilder(runtime).build("bulk helpers helper_7 apply_discount", 1500, apply=False)
    modes = {c.candidate.shown: c.mode for c in result.choices}
    assert modes["shop/bulk.py"] in ("slices", "codemap")
    sliced = [c for c in result.choices if c.mode == "slices"]
    for c in sliced:
        assert c.ranges and all(r.start <= r.end for r in c.ranges)


def test_lexical_strategy_skips_the_symbol_index(runtime, project):
    result = ContextBuilder(runtime).build("apply_discount", 8000, strategy="lexical", apply=False)
    assert "index" not in result.timings
    assert any(c.candidate.shown == "shop/pricing.py" for c in result.selected)


def test_nothing_relevant_is_reported_not_invented(call, project):
    out = call.ok("context_builder", {"instructions": "zyzzyva quuxplorator", "budget": 5000})
    assert re.search(r"0 files selected", out) and "nothing in the workspace matched" in out


def test_bad_input_is_rejected(call, project):
    call.err("context_builder", {"instructions": ""}, code="invalid_arguments")
    call.err("context_builder", {"instructions": "x", "budget": 10}, code="invalid_arguments")
    call.err("context_builder", {"instructions": "x", "response_type": "poem"}, code="invalid_arguments")


def test_response_type_without_a_model_still_builds_context(call, project):
    out = call.ok("context_builder", {"instructions": "shipping_cost", "response_type": "plan", "budget": 5000})
    assert "shop/shipping.py" in out and "no model is configured" in out


def test_a_later_call_sees_an_edit_made_outside_tooldeck(call, runtime, project):
    """The second call counts the task's words from the term index (filled
    after the first) and the watch or walk that tells it what changed."""
    from tooldeck.context.builder import context_builder_service

    call.ok("context_builder", {"instructions": "shipping cost by weight", "budget": 8000})
    context_builder_service(runtime).terms.wait()
    notes = project / "docs" / "notes.md"
    notes.write_text("# Notes\n\nThe invoice rounding rule: round each invoice line to cents.\n")
    out = call.ok("context_builder", {"instructions": "invoice rounding is off by a cent", "budget": 8000})
    assert context_builder_service(runtime).terms.ready_for(runtime.workspace)
    first = out.splitlines()[1]
    assert "docs/notes.md" in first and "invoice" in first, out

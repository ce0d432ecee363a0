"""The model loop's items as the session store keeps them, both ways: the
store (``state/agent_sessions.py``) holds plain fields and never imports the
model loop; this module is the one place that converts."""

from __future__ import annotations

from tooldeck.llm.types import FunctionCall, FunctionResult, Item, Message, Reasoning
from tooldeck.state.agent_sessions import ItemFields, ItemRow


def item_fields(item: Item) -> ItemFields:
    """(kind, role, name, call_id, text, is_error) of a loop item."""
    if isinstance(item, Message):
        return "message", item.role, None, None, item.text, False
    if isinstance(item, Reasoning):
        return "reasoning", None, None, None, item.text, False
    if isinstance(item, FunctionCall):
        return "call", None, item.name, item.call_id, item.arguments, False
    return "result", None, item.name, item.call_id, item.output, item.is_error


def to_item(row: ItemRow) -> Item:
    if row.kind == "message":
        return Message(row.role or "user", row.text)  # type: ignore[arg-type]
    if row.kind == "reasoning":
        return Reasoning(row.text)
    if row.kind == "call":
        return FunctionCall(row.call_id or "", row.name or "", row.text)
    return FunctionResult(row.call_id or "", row.name or "", row.text, row.is_error)

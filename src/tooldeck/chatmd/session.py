"""A document made ready to run: its tools, conversation, model and options.

Shared by the runner (``tooldeck run``) and agent tools (a prompt run as a
sub-conversation), so both read ``<config>`` and declarations the same way.
Everything that can be wrong with a file is found here, before the first
model call.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tooldeck.chatmd.conversation import items_of
from tooldeck.chatmd.declarations import LoadContext, build_toolbox
from tooldeck.chatmd.document import Document
from tooldeck.config import ConfigError, load_config
from tooldeck.core.toolbox import Toolbox
from tooldeck.llm.errors import ModelError
from tooldeck.llm.provider import Provider
from tooldeck.llm.settings import ModelConfig, resolve_model
from tooldeck.llm.types import Item
from tooldeck.markup.element import ChatmdError, Element
from tooldeck.runtime import Runtime

CONFIG_ATTRS = {"model", "max_tokens", "temperature", "reasoning_effort", "show_tool_call", "api", "stream"}
EFFORTS = ("minimal", "low", "medium", "high", "none", "xhigh")


@dataclass
class Session:
    doc: Document
    toolbox: Toolbox
    items: list[Item]
    model: ModelConfig
    show_tool_call: bool = False

    def provider(self) -> Provider:
        return Provider(self.model)


def _number(el: Element, key: str, kind: type, low: float, high: float) -> Any:
    raw = el.get(key)
    if raw is None:
        return None
    try:
        value = kind(raw)
    except ValueError as exc:
        raise ChatmdError(el.pos, f"<config {key}={raw!r}>: expected a {kind.__name__}") from exc
    if not low <= value <= high:
        raise ChatmdError(el.pos, f"<config {key}={raw!r}>: must be between {low:g} and {high:g}")
    return value


def config_of(doc: Document) -> tuple[dict[str, Any], bool]:
    """Model overrides from the ``<config>`` elements (later ones win) and show_tool_call."""
    out: dict[str, Any] = {}
    show = False
    for el in doc.of("config"):
        unknown = sorted(set(el.attrs) - CONFIG_ATTRS)
        if unknown:
            raise ChatmdError(
                el.pos, f"<config> has no attribute {unknown[0]!r}; known: {', '.join(sorted(CONFIG_ATTRS))}"
            )
        if el.get("model"):
            out["model"] = el.get("model")
        if (v := _number(el, "max_tokens", int, 1, 10_000_000)) is not None:
            out["max_tokens"] = v
        if (v := _number(el, "temperature", float, 0, 2)) is not None:
            out["temperature"] = v
        effort = el.get("reasoning_effort")
        if effort is not None:
            if effort not in EFFORTS:
                raise ChatmdError(el.pos, f"<config reasoning_effort={effort!r}>: one of {', '.join(EFFORTS)}")
            out["reasoning_effort"] = effort
        if el.get("api") is not None:
            if el.get("api") not in ("chat", "responses"):
                raise ChatmdError(el.pos, "<config api=...> is 'chat' (Chat Completions) or 'responses'")
            out["api"] = el.get("api")
        if el.has("stream"):
            out["stream"] = (el.get("stream") or "true").lower() not in ("false", "0", "no", "off")
        if el.has("show_tool_call"):
            show = (el.get("show_tool_call") or "true").lower() not in ("false", "0", "no", "off")
    return out, show


def prepare(
    doc: Document, rt: Runtime, *, depth: int = 0, fallback: ModelConfig | None = None, model: str | None = None
) -> Session:
    """Check and build everything a run needs. Raises ChatmdError or ModelError (config).

    ``model`` is a model the person named for this run (``tooldeck chat
    --model``): it wins over ``<config model>``; the file's other ``<config>``
    values still apply."""
    overrides, show = config_of(doc)
    ctx = LoadContext.for_document(doc, rt, depth=depth, prepare=prepare)  # binds rt's roots if unset
    toolbox = build_toolbox(doc, ctx)  # an agent it declares prepares its prompt here again
    items = items_of(doc)
    model_name = overrides.pop("model", None)
    if model is not None:
        model_name = model
    if model_name is None and fallback is not None:
        model = dataclasses.replace(fallback, **overrides)
    else:
        try:
            cfg = load_config(rt.workspace.primary.path, state_dir=rt.state_dir)
        except ConfigError as exc:
            raise ModelError("config", str(exc)) from exc
        model = resolve_model(cfg, model_name, rt=rt, **overrides)
    return Session(doc, toolbox, items, model, show)

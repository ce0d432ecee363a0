"""Custom tools with ``tooldeck.core`` (the Python counterpart of seed 001's ochat_function).

Three tools, each built the way the seed describes, dispatched offline (no
model, no key, no network) through a Toolbox, as a host would:

* ``word_count``: a typed function tool (``@tool``): its pydantic input model
  is the JSON Schema, it returns structured data (MCP ``structuredContent``);
* ``echo``: the seed's ``create_streaming_function`` with an explicit schema
  and decoder; it reports progress on the ``activity`` channel;
* ``calc``: a ``custom`` tool: raw text input described by a Lark grammar
  (as ``apply_patch``), not JSON.

Run it: ``python examples/custom_tools.py`` (it checks its own claims and
exits non-zero if one does not hold; ``tests/core/test_examples.py`` runs it).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from typing import Any

from pydantic import Field

from tooldeck.core import (
    Invocation,
    Output,
    Progress,
    Toolbox,
    ToolInput,
    ToolStarted,
    create_streaming_function,
    custom_tool,
    invalid_arguments,
    tool,
)


# 1. a typed function tool ------------------------------------------------------------------
class WordCountInput(ToolInput):
    text: str = Field(description="The text to count.")
    top: int = Field(3, ge=1, le=20, description="How many of the most frequent words to list.")


@tool(read_only=True, idempotent=True)
def word_count(args: WordCountInput) -> Output:
    """Count the words of a text and name the most frequent ones."""
    words = re.findall(r"[A-Za-z']+", args.text.lower())
    freq: dict[str, int] = {}
    for w in words:
        freq[w] = freq.get(w, 0) + 1
    top = sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[: args.top]
    summary = f"{len(words)} words; most frequent: " + ", ".join(f"{w} ({n})" for w, n in top)
    return Output.text(summary, structured={"words": len(words), "top": [w for w, _ in top]})


# 2. a streaming tool with an explicit schema and decoder (the seed's Echo) --------------------
ECHO_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}


def decode_echo(raw: Any) -> str:
    """The seed's ``input_of_string``: the decoder may reject input."""
    data = json.loads(raw) if isinstance(raw, (str, bytes)) else dict(raw or {})
    text = data.get("text") if isinstance(data, dict) else None
    if not isinstance(text, str):
        raise invalid_arguments("field `text`: a string is required", field="text")
    return text


def run_echo(text: str, invocation: Invocation) -> str:
    invocation.emit_text("activity", "Preparing response", replace=True)
    if invocation.is_observed:  # display-only work, skipped when nobody listens
        invocation.emit_text("activity", f"{len(text)} characters")
    return text


echo = create_streaming_function(
    name="echo", description="Return the supplied text.", parameters=ECHO_SCHEMA, run=run_echo, decode=decode_echo
)


# 3. a custom tool: raw text described by a grammar --------------------------------------------
CALC_GRAMMAR = r"""
start: expr
expr: term (("+" | "-") term)*
term: NUMBER
NUMBER: /-?[0-9]+/
%ignore " "
"""


def run_calc(source: str, invocation: Invocation) -> str:
    tokens = re.findall(r"\d+|[+-]|\S", source)
    if tokens[:1] == ["-"] and len(tokens) > 1:  # a leading sign belongs to the first number
        tokens = ["-" + tokens[1], *tokens[2:]]
    numbers, ops = tokens[0::2], tokens[1::2]
    if not tokens or len(tokens) % 2 == 0 or any(not re.fullmatch(r"-?\d+", n) for n in numbers):
        raise invalid_arguments("expected a sum of integers such as `1 + 2 - 3`")
    if any(op not in ("+", "-") for op in ops):
        raise invalid_arguments("only + and - are understood; send a sum such as `1 + 2 - 3`")
    total = int(numbers[0])
    for op, num in zip(ops, numbers[1:], strict=True):
        total = total + int(num) if op == "+" else total - int(num)
    return str(total)


calc = custom_tool(
    name="calc",
    description="Add and subtract integers, e.g. `1 + 2 - 3`. Send the expression itself.",
    grammar={"type": "grammar", "syntax": "lark", "definition": CALC_GRAMMAR},
    run=run_calc,
)


# dispatch, as a host does ---------------------------------------------------------------------
def check(claim: str, ok: bool) -> None:
    print(f"{'ok ' if ok else 'FAIL'} {claim}")
    if not ok:
        sys.exit(1)


async def main() -> None:
    box = Toolbox([word_count, echo, calc])
    print("tools:", ", ".join(f"{t.name} ({t.kind}, strict={t.strict})" for t in box))
    check("word_count's schema comes from its input model", "top" in word_count.parameters["properties"])

    counted = await box.call("word_count", '{"text": "the cat saw the other cat", "top": 2}')
    print(counted.text)
    assert counted.output is not None
    check("a typed tool returns structured data", counted.output.structured == {"words": 6, "top": ["cat", "the"]})

    silent = await box.call("echo", {"text": "Hello"})  # no observer: nothing to show, same result
    seen: list[Progress] = []
    traced: list[str] = []
    inv = Invocation.create_with_trace(seen.append, lambda e: traced.append(type(e).__name__))
    observed = await box.call("echo", '{"text": "Hello"}', invocation=inv)
    print("progress:", [(str(p.channel), type(p.update).__name__, p.update.text) for p in seen])
    check("silent and observed runs give the same output", silent.text == observed.text == "Hello")
    check("progress reaches the observer, never the result", len(seen) == 2 and "Preparing" not in observed.text)
    check("the host traces the call", traced[:1] == [ToolStarted.__name__])

    summed = await box.call("calc", "40 + 5 - 3")
    print("calc:", summed.text)
    check("a custom tool takes raw text", summed.text == "42")
    check("MCP clients send custom input as {input}", (await box.call("calc", {"input": "1+1"})).text == "2")

    bad = await box.call("echo", '{"txt": "typo"}')
    print(bad.text)
    check("bad input is an error result, not a crash", bad.is_error and bad.error is not None
          and bad.error.code == "invalid_arguments")  # fmt: skip
    check("a failing custom input is an error result", (await box.call("calc", "1 + + 2")).is_error)
    try:
        Toolbox([echo, echo])
    except ValueError as exc:
        check(f"duplicate names raise at construction ({exc})", True)
    else:
        check("duplicate names raise at construction", False)


if __name__ == "__main__":
    asyncio.run(main())

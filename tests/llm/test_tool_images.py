"""What of a tool's image results goes to the model: the checked ones, up to the limit.

The model loop in process, the endpoint the scripted server on 127.0.0.1 (the
request body it received is what the model would have seen)."""

from __future__ import annotations

import asyncio
import base64
import json

from tests.chatmd.test_run_parity import png
from tests.support.openai_server import Reply, ScriptedOpenAI
from tooldeck.core import ImagePart, Output, TextPart, Toolbox, tool
from tooldeck.imaging import MAX_SEND_BYTES
from tooldeck.llm.loop import MAX_IMAGES, run_conversation
from tooldeck.llm.provider import Provider
from tooldeck.llm.settings import ModelConfig
from tooldeck.llm.types import Message

GOOD = "data:image/png;base64," + base64.b64encode(png()).decode()


def test_only_checked_images_within_the_limit_reach_the_model(server: ScriptedOpenAI) -> None:
    @tool
    def shots() -> Output:
        "Screenshots of every kind."
        big = "data:image/png;base64," + "A" * (MAX_SEND_BYTES * 4 // 3 + 8)
        bad = [
            ImagePart("data:image/png;base64,!!not base64!!"),
            ImagePart("data:image/png;base64," + base64.b64encode(b"PK\x03\x04 a zip").decode()),
            ImagePart("data:image/svg+xml;base64," + base64.b64encode(b"<svg/>").decode()),
            ImagePart(big),
        ]
        return Output.of_parts([TextPart("here"), *bad, *[ImagePart(GOOD)] * (MAX_IMAGES + 2)])

    server.push(Reply.call(("shots", {})), Reply.answer("seen"))

    async def go() -> None:
        p = Provider(ModelConfig(model="m", base_url=server.url, api_key="k"))
        try:
            await run_conversation(p, [Message("user", "look")], Toolbox([shots]))
        finally:
            await p.aclose()

    asyncio.run(go())
    msgs = server.requests[1]["body"]["messages"]
    sent = [p["image_url"]["url"] for m in msgs if m["role"] == "user" and isinstance(m["content"], list)
            for p in m["content"] if p["type"] == "image_url"]  # fmt: skip
    assert sent == [GOOD] * MAX_IMAGES
    tool_text = next(m["content"] for m in msgs if m["role"] == "tool")
    for why in ("not valid base64", "not a image/png image", "image/svg+xml is not PNG", "over the",
                f"over {MAX_IMAGES} images"):  # fmt: skip
        assert why in tool_text, tool_text
    assert len(json.dumps(server.requests[1]["body"])) < MAX_SEND_BYTES  # the big one never left

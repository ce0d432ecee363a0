"""An OpenAI-compatible model endpoint, through the ``openai`` package.

Why our own retry loop around the SDK (whose own retries are switched off):
the person watching a run should see "rate limited, retrying in 20 s", and
the wait must honour the server's ``retry-after``; 5xx answers and a
connection that broke mid-request back off exponentially. What cannot
recover by waiting fails at once with a message saying what to fix: a
connection refused, a host name that does not resolve, a time-out (already
the configured ``timeout`` long), a 401 (naming the key variables). A
missing API key is named in every connection error. The SDK does the HTTP,
SSE and typing.

Error messages go to the model (chat_send, agent runs), so what the endpoint
wrote reaches them only through :func:`tooldeck.remote_errors.reason`: the
status always, a short sanitised reason from a public provider, nothing of a
reply from a private or loopback address, and never the key.
"""

from __future__ import annotations

import asyncio
import email.utils
import errno
import random
import socket
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tooldeck.core.output import valid_text
from tooldeck.core.tool import Tool
from tooldeck.llm import wire_chat, wire_responses
from tooldeck.llm.errors import ModelError
from tooldeck.llm.settings import ModelConfig
from tooldeck.llm.types import (
    Event,
    FunctionCall,
    Item,
    Reasoning,
    ReasoningDelta,
    RequestOptions,
    Retrying,
    TextDelta,
    Turn,
)
from tooldeck.remote_errors import json_message, reason, shown_url

if TYPE_CHECKING:
    import openai

DEFAULT_URL = "https://api.openai.com/v1"  # the SDK's own default when no base URL is set
MAX_RETRY_AFTER = 120.0  # seconds; a longer retry-after fails instead of hanging the run


def _no_event(_: Event) -> None:
    return None


def retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed is not None else None


class Provider:
    """One endpoint + model; :meth:`complete` runs one model turn."""

    def __init__(self, config: ModelConfig) -> None:
        import openai  # imported here: ~1 s of pydantic types, not paid by a file that fails to load

        self.config = config
        self.client: openai.AsyncOpenAI = openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=config.api_key or "unset",  # local servers take any key; OpenAI answers 401
            max_retries=0,
            timeout=config.timeout,
        )

    async def aclose(self) -> None:
        """Close the HTTP client (call it on the event loop that used it)."""
        await self.client.close()

    def options(self, **overrides: Any) -> RequestOptions:
        base = {
            "model": self.config.model,
            "max_tokens": self.config.max_tokens,
            "temperature": self.config.temperature,
            "reasoning_effort": self.config.reasoning_effort,
        }
        base.update({k: v for k, v in overrides.items() if v is not None})
        return RequestOptions(**base)

    async def complete(
        self,
        items: Sequence[Item],
        tools: Sequence[Tool] = (),
        opts: RequestOptions | None = None,
        on_event: Callable[[Event], None] | None = None,
    ) -> Turn:
        import openai

        emit = _valid_events(on_event or _no_event)
        opts = opts or self.options()
        attempt = 0
        while True:
            try:
                return _valid_turn(await self._once(items, tools, opts, emit))
            except (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError) as exc:
                attempt += 1
                why = _retry_reason(exc)
                wait = self._wait(exc, attempt) if why is not None else None
                if attempt > self.config.max_retries or wait is None:
                    raise self._error(exc, attempt) from exc
                emit(Retrying(getattr(exc, "status_code", None), wait, attempt, why or ""))
                await asyncio.sleep(wait)
            except openai.APIError as exc:  # any other status, an error event mid-stream, an unreadable reply
                raise self._error(exc, attempt) from exc
            except ModelError as exc:
                if exc.remote is None:
                    raise
                raise self._remote(exc) from exc

    async def _once(self, items: Sequence[Item], tools: Sequence[Tool], opts: RequestOptions, emit: Any) -> Turn:
        stream = self.config.stream
        if self.config.api == "responses":
            kw = wire_responses.request(items, tools, opts, stream)
            resp = await self.client.responses.create(**kw)
            return await wire_responses.consume(resp, emit) if stream else wire_responses.parse(resp)
        kw = wire_chat.request(items, tools, opts, stream)
        resp = await self.client.chat.completions.create(**kw)
        return await wire_chat.consume(resp, emit) if stream else wire_chat.parse(resp)

    def _wait(self, exc: Exception, attempt: int) -> float | None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
        told = retry_after(headers)
        if told is not None:
            return told if told <= MAX_RETRY_AFTER else None
        base = self.config.backoff_seconds * (2 ** (attempt - 1))
        return min(base, 30.0) * (1 + random.random() * 0.25)

    def _key_note(self) -> str:
        """Names the missing key: an endpoint that answers will want one."""
        if self.config.api_key:
            return ""
        return (
            "; no API key is set either (OPENAI_API_KEY, `tooldeck settings set models.api_key -`, or "
            "api_key under [models] in the user config)"
        )

    def _reason(self, text: str | None) -> str:
        """`` (why)`` for a message, or nothing (see :mod:`tooldeck.remote_errors`)."""
        why = reason(self.config.base_url or DEFAULT_URL, text, secrets=[self.config.api_key])
        return f" ({why})" if why else ""

    def _remote(self, exc: ModelError) -> ModelError:
        """A ModelError the wire raised with the endpoint's own words, made safe to show."""
        url = shown_url(self.config.base_url or DEFAULT_URL)
        return ModelError(exc.kind, f"{exc.message} at {url}{self._reason(exc.remote)}", exc.status)

    def _error(self, exc: Exception, attempts: int) -> ModelError:
        import openai

        url = shown_url(self.config.base_url or DEFAULT_URL)
        status = getattr(exc, "status_code", None)
        detail = self._reason(json_message(getattr(exc, "body", None)))
        tries = f" after {attempts} attempt{'s' if attempts != 1 else ''}" if attempts > 1 else ""
        if isinstance(exc, openai.AuthenticationError):
            return ModelError(
                "auth",
                f"401 from {url}: the API key was refused{detail}; the person sets it with OPENAI_API_KEY, "
                "`tooldeck settings set models.api_key -`, or api_key under [models] in the user config",
                status,
            )
        if isinstance(exc, openai.RateLimitError):
            return ModelError("rate_limit", f"429 rate limited by {url}{tries}{detail}; wait and run again", status)
        if isinstance(exc, openai.APIConnectionError):
            what = _connect_failure(exc) or (
                f"timed out after {self.config.timeout:g} s" if isinstance(exc, openai.APITimeoutError)
                else "the connection broke"
            )
            return ModelError(
                "connection",
                f"cannot reach the model endpoint {url}{tries} ({what}); the person sets it with OPENAI_BASE_URL "
                f"or `tooldeck settings set models.base_url URL`{self._key_note()}",
            )
        if status is not None and status >= 500:
            return ModelError("server", f"{status} server error from {url}{tries}{detail}; run again later", status)
        if status == 404:
            return ModelError(
                "bad_request", f"404 from {url}{detail}; check the model name ({self.config.model!r}) and the api"
            )
        if isinstance(exc, openai.APIResponseValidationError):
            return ModelError("malformed", f"{url} sent a reply that is not an OpenAI-compatible response")
        if status is not None:
            return ModelError("bad_request", f"{status} from {url}{detail}", status)
        return ModelError("server", f"the model endpoint {url} reported an error{detail}")


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it, outermost first (the SDK wraps its HTTP
    library's error, which wraps the socket's)."""
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in out and len(out) < 10:
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def _connect_failure(exc: BaseException) -> str | None:
    """Why no connection could be made (refused, no such host, unreachable,
    connect timed out), or None when one was made and broke or timed out later:
    waiting does not bring a server up or make a name resolve."""
    chain = _causes(exc)
    for c in chain:
        if isinstance(c, socket.gaierror):
            return "the host name does not resolve"
        if isinstance(c, ConnectionRefusedError):
            return "connection refused: is the server running?"
        if isinstance(c, OSError) and c.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return "the network or host is unreachable"
    for c in chain:  # the HTTP library's own classes (httpx or its fork, not imported here)
        names = {k.__name__ for k in type(c).__mro__}
        if "ConnectTimeout" in names:
            return "the connection could not be made in time"
        if "ConnectError" in names:
            return "the connection could not be made"
    return None


def _retry_reason(exc: BaseException) -> str | None:
    """Why a retry may help, or None when it cannot (see the module docstring)."""
    import openai

    status = getattr(exc, "status_code", None)
    if isinstance(exc, openai.RateLimitError):
        return f"HTTP {status} rate limited"
    if isinstance(exc, openai.InternalServerError):
        return f"HTTP {status} server error"
    if isinstance(exc, openai.APITimeoutError) or _connect_failure(exc) is not None:
        return None
    return "the connection broke"


def _valid_events(emit: Callable[[Event], None]) -> Callable[[Event], None]:
    """Deltas as valid UTF-8 (a JSON escape can carry a lone surrogate no terminal can print)."""

    def checked(event: Event) -> None:
        if isinstance(event, (TextDelta, ReasoningDelta)):
            event = type(event)(valid_text(event.text))
        emit(event)

    return checked


def _valid_turn(turn: Turn) -> Turn:
    """Model text as valid UTF-8 before anyone writes, prints or sends it back."""
    turn.text = valid_text(turn.text)
    if turn.reasoning is not None:
        turn.reasoning = Reasoning(valid_text(turn.reasoning.text), turn.reasoning.id)
    turn.calls = [FunctionCall(valid_text(c.call_id), valid_text(c.name), valid_text(c.arguments)) for c in turn.calls]
    return turn

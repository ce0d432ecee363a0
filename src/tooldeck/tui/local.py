"""The native host: the conversation runs in this process, on the engine thread.

Exactly what ``tooldeck run`` does, one user message at a time: the file is
loaded and checked once (declarations, authority, model), each message is
appended to it as a ``<user>`` element, then the same model loop runs and
every finished item is appended as it completes. A message typed while a turn
runs joins the conversation at the next model turn (the loop's inbox), in
file order. Cancelling (Esc, Ctrl-C) cancels the turn's task: what was
written stays, a half-streamed reply is not written, a call left without its
result is closed as "interrupted" the way ``tooldeck run`` resumes a file.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldeck.llm.errors import ModelError
from tooldeck.llm.types import (
    Event as LoopEvent,
)
from tooldeck.llm.types import (
    Item,
    Message,
    ReasoningDelta,
    Retrying,
    TextDelta,
    ToolDone,
    ToolOutput,
    ToolStart,
    TurnDone,
)
from tooldeck.shell.approval import ApprovalAnswer, ApprovalRequest, approver_scope, format_request
from tooldeck.tui.blocks import warm_up
from tooldeck.tui.events import (
    Added,
    Ask,
    Busy,
    Event,
    Failed,
    Notice,
    Opened,
    Reloaded,
    Settled,
    Stream,
    Tokens,
    ToolState,
)
from tooldeck.tui.timeline import awaiting_answer
from tooldeck.tui.worker import EngineThread

if TYPE_CHECKING:
    from tooldeck.llm.provider import Provider

log = logging.getLogger("tooldeck.tui")
Emit = Callable[[Event], None]


class ScreenApprover:
    """A shell ``ask`` answered on the screen: accept once, for the session, or decline with a reason."""

    def __init__(self, emit: Emit) -> None:
        self.emit = emit

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer:
        ask = Ask("shell", f"{request.tool} wants to run a command", format_request(request))
        self.emit(ask)
        try:
            answer = await asyncio.wrap_future(ask.answer)
        except asyncio.CancelledError:
            ask.answer.cancel()
            raise
        except Exception:  # a broken answer approves nothing
            return ApprovalAnswer(False, "once", "chat")
        response = answer.get("response")
        if response == "accept":
            return ApprovalAnswer(True, "once", "chat")
        if response == "accept_for_session":
            return ApprovalAnswer(True, "session", "chat")
        return ApprovalAnswer(False, "once", "chat", reason=answer.get("reason"))


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class LocalChat:
    """One conversation file driven by the model loop on the engine thread."""

    def __init__(
        self,
        path: Path,
        emit: Emit,
        *,
        roots: list[str] | None = None,
        model: str | None = None,
        parallel: bool = True,
        state_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.path = path
        self.emit = emit
        self.roots = roots
        self.model_flag = model
        self.parallel = parallel
        self.state_dir = state_dir
        self.items: list[Item] = []
        self.exists = path.exists()
        self._engine = EngineThread()
        self._task: asyncio.Task[None] | None = None
        self._inbox: list[Item] = []
        self._inbox_lock = threading.Lock()
        self._stat: tuple[int, int] | None = None
        self._session: Any = None
        self._named: Any = None  # the engine's NamedFile: loads judged against the transcript record
        self._on_item: Any = None  # appends an element to the file and saves the record
        self._provider: Provider | None = None
        self._approver = ScreenApprover(emit)

    # the screen's side ------------------------------------------------------------
    def open(self) -> None:
        self._engine.submit(self._open())

    def send(self, text: str) -> None:
        self._engine.call(self._on_send, text)

    def cancel(self) -> None:
        self._engine.call(self._on_cancel)

    def close(self) -> None:
        async def shutdown() -> None:
            task = self._task
            if task is not None and not task.done():
                task.cancel()
                await asyncio.wait([task], timeout=5)
            if self._provider is not None:
                await self._provider.aclose()

        try:
            self._engine.submit(shutdown()).result(10)
        except Exception:
            log.exception("chat shutdown")
        self._engine.stop()

    # the engine's side -------------------------------------------------------------
    async def _open(self) -> None:
        from tooldeck import authority  # lazy: the engine's modules load on the engine thread, not the screen's
        from tooldeck.tui import engine as eng  # lazy: ChatMD (~200 modules) loads on the engine thread

        warm_up()
        authority.announce_to(lambda n: self.emit(Notice(n.text(), "warning")))
        try:
            rt = eng.runtime_for(self.roots, self.state_dir)
            self._named = eng.named_file(self.path, rt)
            doc, self.exists = eng.open_document(self._named, self.model_flag)
            self._session = eng.session_for(doc, rt, self.model_flag)
            self._named.save()  # what this chat honours, before the model can touch the file
        except eng.ChatmdError as exc:
            self.emit(Failed(str(exc)))
            return
        except ModelError as exc:
            self.emit(Failed(exc.message))
            return
        except (OSError, ValueError) as exc:
            self.emit(Failed(f"{self.path}: {exc}"))
            return
        self._on_item = self._named.recording(self._session.show_tool_call)
        self.items = list(self._session.items)
        self._stat = _stat(self.path)
        roots = tuple(f"{r.id}={r.path}" for r in rt.workspace.roots)
        self.emit(Opened(self.path, self.exists, self._session.model.model, roots, tuple(self.items)))
        try:  # the model client (~1 s of imports) while the person reads and types, not after Enter
            self._provider = self._session.provider()
        except Exception:  # it is made again, and reports, at the first message
            log.debug("model client not ready", exc_info=True)
        self.emit(Settled())

    def _on_send(self, text: str) -> None:
        if self._session is None:
            self.emit(Notice("the conversation is not open (see the error above)", "error"))
            return
        running = self._task is not None and not self._task.done()
        if running and text:
            with self._inbox_lock:
                self._inbox.append(Message("user", text))
            self.emit(Notice("queued: your message joins the conversation at the next model turn"))
        elif not running:
            self._task = asyncio.get_running_loop().create_task(self._turn(Message("user", text) if text else None))

    def _on_cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def _drain(self) -> list[Item]:
        with self._inbox_lock:
            got, self._inbox = self._inbox, []
        return got

    def _persist(self, item: Item) -> None:
        """The engine's on_item: the element goes to the file, then to the screen."""
        self._on_item(item)
        self.items.append(item)
        self._stat = _stat(self.path)
        self.emit(Added(item))

    def _create_file(self) -> None:
        from tooldeck.tui import engine as eng  # lazy: ChatMD (~200 modules) loads on the engine thread

        eng.create_conversation(self.path, self.model_flag)
        self.exists = True
        self.emit(Notice(f"created {self.path}"))

    def _reload_if_changed(self) -> None:
        """Someone else wrote the file (``tooldeck run``, an editor): it is the truth."""
        from tooldeck.tui import engine as eng  # lazy: ChatMD (~200 modules) loads on the engine thread

        if self._stat is not None and _stat(self.path) != self._stat:
            self.items = eng.read_items(self._named)
            self._stat = _stat(self.path)
            self.emit(Reloaded(tuple(self.items)))
            self.emit(Notice("the file changed outside the chat; reloaded it", "warning"))

    async def _turn(self, first: Item | None) -> None:
        """One turn: ``first`` (the typed message) appended, then the model loop; with
        no message, the conversation as the file holds it (as ``tooldeck run``)."""
        from tooldeck.llm.loop import run_conversation  # lazy: on the engine thread, not the screen's
        from tooldeck.tui import engine as eng  # lazy: ChatMD (~200 modules) loads on the engine thread

        self.emit(Busy(True))
        outcome, message = "answer", ""
        try:
            if not self.exists:
                self._create_file()
            else:
                self._reload_if_changed()
            if first is not None:
                self._persist(first)
            elif not awaiting_answer(self.items):
                outcome, message = "answer", "nothing to answer: the last message is the assistant's; type one"
                return
            if self._provider is None:
                self._provider = self._session.provider()
            with approver_scope(self._approver):
                while True:
                    result = await run_conversation(
                        self._provider, self.items, self._session.toolbox, parallel=self.parallel,
                        on_event=self._on_event, on_item=self._persist, inbox=self._drain,
                    )  # fmt: skip
                    late = self._drain()  # typed as the answer ended: a new turn, in file order
                    if not late:
                        break
                    for item in late:
                        self._persist(item)
            if result.stopped == "max_turns":
                outcome, message = "error", f"stopped after {result.turns} model calls without a final answer"
        except asyncio.CancelledError:
            outcome, message = "cancelled", "cancelled: the file keeps every complete element"
            self.items = eng.close_dangling(self.items)
        except ModelError as exc:
            outcome, message = "error", exc.message
        except OSError as exc:
            outcome, message = "error", f"cannot write the transcript to {self.path}: {exc.strerror or exc}"
        except eng.ChatmdError as exc:
            outcome, message = "error", str(exc)
        except Exception as exc:  # the screen must hear about anything, and stay up
            log.exception("chat turn failed")
            outcome, message = "error", f"internal error: {type(exc).__name__}: {exc}"
        finally:
            self.emit(Busy(False, outcome, message))  # type: ignore[arg-type]

    def _on_event(self, event: LoopEvent) -> None:
        emit = self.emit
        if isinstance(event, TextDelta):
            emit(Stream("text", event.text))
        elif isinstance(event, ReasoningDelta):
            emit(Stream("reasoning", event.text))
        elif isinstance(event, TurnDone):
            u = event.turn.usage
            emit(Tokens(u, known=bool(u.input_tokens or u.output_tokens)))
        elif isinstance(event, ToolStart):
            emit(ToolState(event.call.call_id, event.call.name, "running"))
        elif isinstance(event, ToolOutput):
            emit(ToolState(event.call_id, event.name, "progress", event.text))
        elif isinstance(event, ToolDone):
            r = event.result
            emit(ToolState(r.call_id, r.name, "done", r.output, r.is_error))
        elif isinstance(event, Retrying):
            what = f"HTTP {event.status}" if event.status else "connection error"
            emit(Notice(f"model endpoint: {what}; retry {event.attempt} in {event.wait_seconds:.1f}s", "warning"))


__all__ = ["LocalChat", "Reloaded", "ScreenApprover"]

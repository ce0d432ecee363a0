"""A conversation file the person named (``tooldeck run FILE``, ``tooldeck chat FILE``).

Why one place: such a file has the person's authority, but the model can
edit it while a run is going (it usually lies inside a root), so its
authority is bounded by its transcript record (:mod:`tooldeck.chatmd.record`).
Every host that drives a named file — the batch runner, the interactive
chat — must load it against that record, save the record before the model
can touch the file, and again after each element tooldeck appends (with the
payload files tooldeck wrote). A host that loaded the file any other way
(a reload after an outside edit, say) would honour whatever the model
added; so hosts load it only through :class:`NamedFile`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from tooldeck.chatmd import asks
from tooldeck.chatmd.document import Document, load, loads
from tooldeck.chatmd.grants import Grants
from tooldeck.chatmd.record import Record
from tooldeck.chatmd.transcript import Transcript
from tooldeck.llm.types import Item
from tooldeck.runtime import Runtime


class NamedFile:
    """The named file of one run, judged against its record at every load."""

    def __init__(self, path: Path, rt: Runtime) -> None:
        self.path = Path(path).absolute()
        self.rt = rt
        self.record = Record(rt.state_dir)
        self.grants = self._grants()

    def _grants(self) -> Grants:
        rt = self.rt
        return Grants(lambda: rt.workspace, rt.state_dir, named=self.path, record=self.record.honoured(self.path))

    def load(self, text: str | None = None) -> Document:
        """The file as it is now (or ``text`` standing for it: a file not yet
        written), judged afresh against the latest record: raises ChatmdError
        (an AuthorityError for a declaration the record does not hold)."""
        self.grants = self._grants()
        if text is not None:
            return loads(text, self.path, grants=self.grants)
        return load(self.path, grants=self.grants)

    def save(self) -> None:
        """Record what this run honours (before the model can touch the file)."""
        self.record.save(self.path, self.grants.used)

    def transcript(self, show_tool_call: bool) -> Transcript:
        """The file's transcript; each payload file tooldeck writes is recorded
        as honoured (it is read back at the next run)."""

        def on_payload(target: Path) -> None:
            self.grants.used.add(asks.doc_key(os.path.realpath(target)))

        return Transcript(self.path, show_tool_call=show_tool_call, state_dir=self.rt.state_dir, on_payload=on_payload)

    def recording(self, show_tool_call: bool) -> Callable[[Item], None]:
        """The model loop's ``on_item``: append to the file, then save the record."""
        transcript = self.transcript(show_tool_call)

        def on_item(item: Item) -> None:
            transcript.append(item)
            self.save()

        return on_item

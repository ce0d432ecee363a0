"""The ``apply_patch`` custom tool: raw V4A text in, A/M/D lines and short diffs out.

Registered as a ``custom`` tool whose ``parameters`` is the Lark grammar
object OpenAI's custom tools take (``{"type": "grammar", "syntax": "lark",
"definition": ...}``), so a model constrained by the grammar can only emit a
well-formed patch. Over MCP the host turns it into a function tool taking
``{"input": patch}``; the decoder also accepts a JSON string or
``{"patch": ...}``, and ``expected_hashes`` alongside.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from tooldeck.core.invocation import Invocation
from tooldeck.core.output import Output
from tooldeck.core.tool import RawArguments, Tool, ToolAnnotations, custom_tool
from tooldeck.runtime import Runtime
from tooldeck.tools.edits.engine import apply_patch_text
from tooldeck.tools.edits.render import render_outcome
from tooldeck.tools.edits.v4a_parser import unwrap_input
from tooldeck.workspace import journal

DESCRIPTION = """\
Edit files with a patch in the V4A format (Codex apply_patch). Send the patch text itself, not JSON:
*** Begin Patch
*** Update File: src/app.py
@@ def greet():
-    print("Hi")
+    print("Hello")
*** Add File: docs/notes.md
+# Notes
*** Delete File: old.txt
*** End Patch
Every line of an added file starts with +. In an update, give about 3 unchanged context lines (leading space) \
around each change, copied exactly; when that is not unique, add '@@ <class or def line>' (several @@ lines \
narrow step by step). '*** Move to: new/path' right after an Update renames the file; '*** End of File' pins a \
chunk to the end. Paths are relative to the first root (absolute paths inside a root also work). Optional \
'[hash=H]' after a path (H from read_file) refuses the patch if that file changed since you read it.
The patch is all or nothing: on any error no file changes and the error names the file, the chunk and the \
nearest lines the file really has."""


def grammar() -> dict[str, Any]:
    definition = resources.files("tooldeck.tools.edits").joinpath("apply_patch.lark").read_text("utf-8")
    return {"type": "grammar", "syntax": "lark", "definition": definition}


def decode(raw: RawArguments) -> tuple[str, dict[str, str]]:
    return unwrap_input(raw)


def build(rt: Runtime) -> Tool:
    def run(args: tuple[str, dict[str, str]], inv: Invocation) -> Output:
        text, expected = args
        with journal.after_reply():  # backups and the journal are removed once the reply is made
            # per call: the workspace can be switched
            outcome = apply_patch_text(rt.workspace, text, expected, state_dir=rt.state_dir)
            rendered = render_outcome(outcome)
            structured = {
                "added": [w.shown for w in outcome.files if w.event.kind == "A"],
                "modified": [w.shown for w in outcome.files if w.event.kind == "M"],
                "deleted": [w.shown for w in outcome.files if w.event.kind == "D"],
                "hashes": {w.shown: w.digest for w in outcome.files if w.digest},
            }
            return Output.text(rendered, structured)

    return custom_tool(
        name="apply_patch",
        description=DESCRIPTION,
        grammar=grammar(),
        run=run,
        decode=decode,
        annotations=ToolAnnotations(title="Apply a V4A patch", destructive=True),
    )

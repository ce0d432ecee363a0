"""A shell tool spec + its runtime → a model-facing :class:`Tool`.

The input schema depends on the mode (``structured`` takes ``{program,
arguments}``, ``chain`` a ``command`` string, ``raw`` a ``code`` string, ``fixed``
and ``script`` optional literal ``arguments``), plus ``rationale`` and
``stdin`` where the declaration asks for them. The description tells the
model what the runtime allows, so it does not have to learn it by refusals.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, create_model

from tooldeck.core.errors import invalid_arguments
from tooldeck.core.invocation import Invocation
from tooldeck.core.output import Output
from tooldeck.core.schema import ToolInput, decode_model, model_schema
from tooldeck.core.tool import Tool, ToolAnnotations
from tooldeck.shell.chain import ChainSyntaxError, parse_chain
from tooldeck.shell.profiles import ShellRuntime
from tooldeck.shell.request import ShellRequest
from tooldeck.shell.service import ShellService
from tooldeck.shell.spec import ShellToolSpec

ARGS_DOC = ("Literal arguments, one per list item: nothing is expanded or interpreted (no globs, quotes, "
            "variables, ;, |, $()).")  # fmt: skip
MODE_DOC = {
    "structured": "Run one program with literal arguments (no shell: pipes, redirection and globs do not exist).",
    "chain": "Run a command line of programs joined by |, ;, && and || (no redirection, $(), backticks, globs, "
    "variables or &: the message of a refused line says what to do instead).",
    "raw": "Run a program text with {interpreter} (arbitrary code; the runtime allows it).",
    "fixed": "Run `{command}`.",
    "script": "Run the script {script} (its hash is checked before each run).",
}


def _fields(spec: ShellToolSpec) -> dict[str, Any]:
    f: dict[str, Any] = {}
    if spec.mode == "structured":
        desc = "The program: a name found on the runtime PATH, or a path."
        f["program"] = (str, Field(min_length=1, description=desc))
        f["arguments"] = (list[str], Field(default_factory=list, description=ARGS_DOC))
    elif spec.mode == "chain":
        f["command"] = (str, Field(min_length=1, description="The command line, e.g. `git log --oneline | head -n 5`."))
    elif spec.mode == "raw":
        f["code"] = (str, Field(min_length=1, description="The program text given to the interpreter."))
    elif spec.arguments == "append":
        f["arguments"] = (list[str], Field(default_factory=list, description=ARGS_DOC + " Appended to the command."))
    if spec.mode in ("structured", "chain") and spec.cwd_field:
        f["cwd"] = (str | None, Field(None, description="Working directory relative to the first root (default: the "
                                            "runtime's cwd)."))  # fmt: skip
    if spec.rationale != "none":
        desc = "Why this command is needed (shown to the person asked to approve it, and audited)."
        f["rationale"] = (str, Field(min_length=1, description=desc)) if spec.rationale == "required" else (
            str | None, Field(None, description=desc))  # fmt: skip
    if spec.stdin:
        f["stdin"] = (str | None, Field(None, description="Text given to the command's standard input."))
    return f


def describe(spec: ShellToolSpec, rt: ShellRuntime) -> str:
    if spec.description:
        head = spec.description
    else:
        head = MODE_DOC[spec.mode].format(
            interpreter=" ".join(spec.command), command=" ".join(spec.command), script=spec.script
        )
    sb = rt.sandbox
    writes = "the workspace" if "workspace" in sb.write else ", ".join(sb.write) or "nothing (read-only)"
    lines = [
        head,
        f"Runtime {rt.id}: writes {writes}; network {'on' if sb.network else 'off'}; "
        f"{'sandboxed' if sb.mode == 'required' else 'NOT sandboxed'}; policy default {rt.policy.default}; "
        f"limits {rt.limits.wall_seconds:g}s wall, {rt.limits.output_bytes} bytes of output (head and tail kept).",
    ]
    return "\n".join(lines)


def _steps(spec: ShellToolSpec, args: Any, service: ShellService) -> list[tuple[str | None, list[list[str]]]]:
    if spec.mode == "structured":
        return [(None, [[args.program, *args.arguments]])]
    if spec.mode == "chain":
        try:
            chain = parse_chain(args.command)
        except ChainSyntaxError as exc:  # refused before the service: audit it here
            service.audit.write("request", tool=spec.name, runtime=spec.runtime, mode="chain", command=args.command)
            service.audit.write("decision", tool=spec.name, action="deny", reason=f"chain syntax: {exc}")
            raise invalid_arguments(str(exc), field="command") from exc
        return [(step.op, [list(a) for a in step.pipeline]) for step in chain.steps]
    if spec.mode == "raw":
        return [(None, [[*spec.command, args.code]])]
    extra = list(getattr(args, "arguments", []) or [])
    if spec.mode == "script":
        assert spec.script is not None
        return [(None, [[*spec.command, spec.script, *extra] if spec.command else [spec.script, *extra]])]
    return [(None, [[*spec.command, *extra]])]


def make_tool(spec: ShellToolSpec, rt: ShellRuntime, service: ShellService) -> Tool:
    model = create_model(f"{spec.name}_input", __base__=ToolInput, **_fields(spec))  # type: ignore[call-overload]

    async def handler(args: Any, inv: Invocation) -> Output:
        for field_name in ("program", "command", "code"):
            if "\x00" in str(getattr(args, field_name, "")):
                raise invalid_arguments(f"{field_name} contains a NUL byte", field=field_name)
        req = ShellRequest(
            tool=spec.name,
            mode=spec.mode,
            runtime=rt,
            steps=_steps(spec, args, service),
            result=spec.result,
            declared=spec.mode in ("fixed", "script"),
            raw_code=spec.mode == "raw",
            stdin=getattr(args, "stdin", None),
            cwd=getattr(args, "cwd", None),
            rationale=getattr(args, "rationale", None),
            script=(spec.script, spec.sha256) if spec.script and spec.sha256 else None,
            extra_ro=(spec.script,) if spec.script else (),
        )
        if any("\x00" in a for _op, stages in req.steps for argv in stages for a in argv):
            raise invalid_arguments("an argument contains a NUL byte", field="arguments")
        return await service.execute(req, inv)

    sb = rt.sandbox
    return Tool(
        name=spec.name,
        description=describe(spec, rt),
        parameters=model_schema(model),
        decode=lambda raw: decode_model(model, raw),
        handler=handler,
        annotations=ToolAnnotations(
            title=f"shell ({spec.mode})",
            read_only=not sb.write,
            destructive=bool(sb.write),
            open_world=sb.network,
        ),
        input_model=model,
    )

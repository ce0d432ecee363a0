"""Authority in ChatMD files (SPEC §3): only a file the person named or approved may ask for it.

``tooldeck run`` against the scripted OpenAI-compatible server: a person's
file that imports (or ``agent=``s) a file inside the root does not lend it
authority; a declaration the model adds to the transcript during a run is
refused at the next run; the person's own declarations keep working run
after run. Effects are checked from the host (a marker file a command would
write, the requests the model received). ``Approvals.allow`` is what
``tooldeck trust allow`` calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.chatmd.test_runner import run, run_here
from tests.support.openai_server import Reply, ScriptedOpenAI
from tooldeck.chatmd.declarations import LoadContext, build_toolbox
from tooldeck.chatmd.document import load
from tooldeck.chatmd.session import prepare
from tooldeck.markup.element import ChatmdError
from tooldeck.runtime import Runtime
from tooldeck.state.approvals import Approvals

pytestmark = pytest.mark.timeout(120)
SECRET = "TOPSECRET-7d0a"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The root the runs start in (cwd); ``outside`` beside it holds a secret."""
    d = tmp_path / "work"
    (d / "lib").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(SECRET + "\n")
    return d


def state_of(work: Path) -> Path:
    return work.parent / "state"  # where test_runner's env_for points TOOLDECK_STATE_DIR


def mcp_line(marker: Path) -> str:
    return f"<tool mcp_server=\"stdio:sh -c 'touch {marker}'\"/>"


def seen_by_model(server: ScriptedOpenAI) -> str:
    return json.dumps([r["body"] for r in server.requests])


def test_an_import_inside_the_root_mounts_nothing_until_approved(work: Path, server: ScriptedOpenAI) -> None:
    marker = work.parent / "RAN"
    lib = work / "lib" / "tools.chatmd"
    lib.write_text(f"<!-- shared tools -->\n{mcp_line(marker)}\n")
    main = work / "main.chatmd"
    main.write_text('<config model="m"/>\n<import src="lib/tools.chatmd"/>\n<user>hi</user>\n')
    r = run(main, server)
    flat = " ".join(r.stderr.split())
    assert not marker.exists() and server.requests == []
    assert r.returncode == 2 and f"{lib}:2: a stdio MCP server" in flat and f"tooldeck trust allow {lib}" in flat

    Approvals(state_of(work)).allow([lib])
    run(main, server)  # not an MCP server: the mount fails, after the command ran
    assert marker.exists()


def test_an_import_outside_every_root_has_no_authority_either(work: Path, server: ScriptedOpenAI) -> None:
    """Location is not evidence of authorship: only the person's approval is."""
    marker = work.parent / "RAN"
    shared = work.parent / "outside" / "shared.chatmd"
    shared.write_text(mcp_line(marker) + "\n")
    main = work / "main.chatmd"
    main.write_text(f'<config model="m"/>\n<import src="{shared}"/>\n<user>hi</user>\n')
    r = run(main, server)
    assert not marker.exists()
    assert r.returncode == 2 and f"{shared}:1: a stdio MCP server" in " ".join(r.stderr.split())


def test_an_agent_prompt_inside_the_root_is_judged_on_its_own(
    work: Path, server: ScriptedOpenAI, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    marker = work.parent / "RAN"
    helper = work / "lib" / "helper.chatmd"
    helper.write_text(f'<config model="m"/>\n{mcp_line(marker)}\n<user>help</user>\n')
    main = work / "main.chatmd"
    main.write_text('<config model="m"/>\n<tool name="helper" agent="lib/helper.chatmd"/>\n<user>ask it</user>\n')
    server.push(Reply.call(("helper", {"input": "go"})), Reply.answer("it was refused"))
    r = run_here(main, server, monkeypatch, capsys)
    assert r.returncode == 0, r.stderr
    assert not marker.exists()
    answer = server.requests[1]["body"]["messages"][-1]
    assert answer["role"] == "tool" and "error [denied]" in answer["content"]
    assert f"{helper}:2: a stdio MCP server" in answer["content"] and "tooldeck trust allow" in answer["content"]


def test_an_agent_prompt_linked_out_of_the_root_is_not_read(work: Path, runtime_for) -> None:  # type: ignore[no-untyped-def]
    secret = work.parent / "outside" / "secret.txt"
    (work / "lib" / "decl.chatmd").write_text('<tool name="peek" agent="peek.chatmd"/>\n')
    main = work / "main.chatmd"
    main.write_text('<import src="lib/decl.chatmd"/>\n')
    rt = runtime_for(work)
    (work / "peek.chatmd").symlink_to(secret)  # linked when declared: refused at load
    with pytest.raises(ChatmdError, match=r"decl.chatmd:1: <tool agent='peek.chatmd'>.*secret.txt"):
        build(main, rt)
    (work / "peek.chatmd").unlink()
    (work / "peek.chatmd").write_text("<user>x</user>\n")
    box = build_toolbox(*_doc_ctx(main, rt))
    (work / "peek.chatmd").unlink()
    (work / "peek.chatmd").symlink_to(secret)  # swapped for a link after: refused when called
    res = box.call_sync("peek", {"input": "x"})
    assert res.is_error and "outside the workspace roots" in res.text and SECRET not in res.text, res.text


PATCHED = '<config model="m"/>\n<tool name="apply_patch"/>\n<user>\ntidy up\n</user>\n'


@pytest.mark.parametrize("added", ["mcp", "doc"])
def test_a_declaration_the_model_adds_to_its_transcript_is_refused_next_run(
    work: Path, server: ScriptedOpenAI, added: str
) -> None:
    marker = work.parent / "RAN"
    line = mcp_line(marker) if added == "mcp" else f'<user><doc src="{work.parent}/outside/secret.txt" local/></user>'
    f = work / "chat.chatmd"
    f.write_text(PATCHED)
    patch = f'*** Begin Patch\n*** Update File: chat.chatmd\n@@\n <tool name="apply_patch"/>\n+{line}\n*** End Patch'
    server.push(Reply.call(("apply_patch", {"input": patch})), Reply.answer("done"))
    first = run(f, server)
    assert first.returncode == 0, first.stderr
    assert line in f.read_text()  # the model edited the transcript it runs in

    f.write_text(f.read_text() + "<user>\nnext\n</user>\n")  # the person's next turn
    server.push(Reply.answer("next done"))
    second = run(f, server)
    flat = " ".join(second.stderr.split())
    assert not marker.exists() and SECRET not in seen_by_model(server)  # checked from the host first
    assert second.returncode == 2, second.stdout + second.stderr
    assert f"{f}:3:" in flat and "was not in this file when tooldeck last ran it" in flat
    assert f"tooldeck trust allow {f}" in flat
    assert not marker.exists() and SECRET not in seen_by_model(server) and len(server.requests) == 2

    Approvals(state_of(work)).allow([f])  # the person read it and wants it
    third = run(f, server)
    if added == "mcp":
        assert marker.exists()
    else:
        assert third.returncode == 0, third.stderr
        assert SECRET in seen_by_model(server)


def test_the_persons_own_declarations_survive_the_runs_appends(
    work: Path, server: ScriptedOpenAI, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    """A file outside the root (the run starts in ``work``), reading a file
    outside it too: the person's declaration and tooldeck's own payloads
    (written next to the file) are honoured run after run."""
    outside = work.parent / "outside"
    (work / "a.txt").write_text("alpha\n")
    f = outside / "chat.chatmd"
    f.write_text('<config model="m"/>\n<tool name="read_file"/>\n<user>see <doc src="secret.txt" local/></user>\n')
    server.push(Reply.call(("read_file", {"file": "a.txt"})), Reply.answer("read"))
    r = run_file_in(work, f, server, monkeypatch, capsys)
    assert r.returncode == 0, r.stderr
    assert any((outside / ".chatmd" / "chat").iterdir())
    f.write_text(f.read_text() + "<user>\nagain\n</user>\n")
    server.push(Reply.answer("again"))
    r = run_file_in(work, f, server, monkeypatch, capsys)
    assert r.returncode == 0, r.stderr
    last = json.dumps(server.requests[-1]["body"])
    assert SECRET in last and "alpha" in last  # the outside doc and the outside payload, read back

    # a declaration the person adds later is refused until approved (the cost of the record)
    marker = outside / "RAN"
    f.write_text(f.read_text().replace("<tool name=", mcp_line(marker) + "\n<tool name=", 1) + "<user>3</user>\n")
    r = run_file_in(work, f, server, monkeypatch, capsys)
    assert r.returncode == 2 and "was not in this file" in r.stderr and not marker.exists()
    Approvals(state_of(work)).allow([f])
    run_file_in(work, f, server, monkeypatch, capsys)
    assert marker.exists()


# load-level checks (nothing runs) -------------------------------------------------------------
@pytest.fixture
def runtime_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TOOLDECK_STATE_DIR", str(tmp_path / "state"))  # where approvals are looked up

    def make(root: Path) -> Runtime:
        return Runtime.for_dirs([root], state_dir=tmp_path / "state")

    return make


def _doc_ctx(main: Path, rt: Runtime) -> tuple[Any, LoadContext]:
    doc = load(main)
    return doc, LoadContext.for_document(doc, rt, prepare=prepare)


def build(main: Path, rt: Runtime) -> list[str]:
    return build_toolbox(*_doc_ctx(main, rt)).names


SHELL_WIDENING = {
    "network": ('<sandbox network="on"/>', "opens the network"),
    "hooks": ('<hooks><hook event="before" command="/bin/true"/></hooks>', "runs hooks `/bin/true`"),
    "allow": ('<policy default="allow"/>', "allows every command without asking"),
    "raw": ('<policy raw="allow"/>', "allows raw code"),
    "rule": ('<policy><rule id="py" action="allow" basename="python3"/></policy>', "rules py"),
    "env": ('<environment inherit="HOME PATH"/>', "passes the host's $HOME, $PATH"),
    "set": ('<environment><set name="GIT_PAGER" value="sh"/></environment>', "sets GIT_PAGER"),
    "secrets": ('<secrets env="OPENAI_API_KEY"/>', "passes the secrets $OPENAI_API_KEY"),
    "read": ('<sandbox read="/"/>', "reads / (outside the roots)"),
    "off": ('<sandbox mode="off"/>', "turns the sandbox off"),
}


@pytest.mark.parametrize("kind", sorted(SHELL_WIDENING))
def test_a_shell_runtime_that_widens_needs_authority(work: Path, runtime_for, kind: str) -> None:  # type: ignore[no-untyped-def]
    section, what = SHELL_WIDENING[kind]
    lib = work / "lib" / "shell.chatmd"
    lib.write_text(
        f'<shell_access id="wide" extends="builtin:workspace-development@1">\n{section}\n</shell_access>\n'
        '<tool name="run" type="shell" mode="structured" runtime="wide"/>\n'
    )
    main = work / "main.chatmd"
    main.write_text('<import src="lib/shell.chatmd"/>\n')
    rt = runtime_for(work)
    with pytest.raises(ChatmdError) as info:
        build(main, rt)
    flat = " ".join(str(info.value).split())
    assert f"{lib}:1: the shell runtime `wide`" in flat and what in flat and "tooldeck trust allow" in flat
    Approvals(rt.state_dir).allow([lib])
    assert build(main, rt) == ["run"]


def test_a_narrower_runtime_and_the_builtin_ones_need_none(work: Path, runtime_for) -> None:  # type: ignore[no-untyped-def]
    (work / "lib" / "shell.chatmd").write_text(
        '<shell_access id="slow"><limits wall="5s"/><policy><rule id="no-rm" action="deny" basename="rm"/></policy>'
        "</shell_access>\n"
        '<tool name="ls" type="shell" mode="fixed" runtime="slow"><command program="ls"/></tool>\n'
        '<tool name="dev" type="shell" mode="structured" runtime="builtin:workspace-development@1"/>\n'
        '<tool name="listing" command="ls"/>\n'
    )
    main = work / "main.chatmd"
    main.write_text('<import src="lib/shell.chatmd"/>\n')
    assert build(main, runtime_for(work)) == ["ls", "dev", "listing"]


def test_a_tool_on_an_approved_runtime_is_part_of_what_was_approved(work: Path, runtime_for) -> None:  # type: ignore[no-untyped-def]
    """A raw tool the model adds on the person's wide runtime is refused with the runtime approved in a record."""
    f = work / "main.chatmd"
    f.write_text(
        '<shell_access id="net"><sandbox network="on"/></shell_access>\n'
        '<tool name="fetch" type="shell" mode="fixed" runtime="net"><command program="curl"/></tool>\n'
    )
    from tooldeck.chatmd.grants import Grants

    rt = runtime_for(work)
    grants = Grants(lambda: rt.workspace, rt.state_dir, named=f)
    doc = load(f, grants=grants)
    build_toolbox(doc, LoadContext.for_document(doc, rt))
    honoured = frozenset(grants.used)
    f.write_text(f.read_text() + '<tool name="sh" type="shell" mode="structured" runtime="net"/>\n')
    again = Grants(lambda: rt.workspace, rt.state_dir, named=f, record=honoured)
    doc = load(f, grants=again)
    with pytest.raises(ChatmdError, match=r"main.chatmd:3: the shell tool `sh` on the runtime `net`"):
        build_toolbox(doc, LoadContext.for_document(doc, rt))


def test_read_roots_outside_the_workspace_need_authority(work: Path, runtime_for, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "outside"
    (work / "inner").mkdir()
    (work / "escape").symlink_to(outside)
    lib = work / "lib" / "roots.chatmd"
    main = work / "main.chatmd"
    main.write_text('<import src="lib/roots.chatmd"/>\n')
    rt = runtime_for(work)
    cases = [("/", "/"), (str(outside / "nope"), str(outside / "nope")), ("${workspace}/escape", str(outside))]
    for path, real in cases:
        lib.write_text(f'<tool name="read_file"><read id="r" path="{path}"/></tool>\n')
        with pytest.raises(ChatmdError, match=rf"roots.chatmd:1: a root {real} \(outside"):
            build(main, rt)
    lib.write_text('<tool name="read_file"><read id="r" path="${workspace}/inner"/></tool>\n')
    assert build(main, rt) == ["read_file"]


def test_a_read_root_inside_a_read_only_root_stays_read_only(tmp_path: Path) -> None:
    from tooldeck.workspace.roots import Workspace, make_root

    root = tmp_path / "ro"
    (root / "sub").mkdir(parents=True)
    main = tmp_path / "main.chatmd"
    (root / "lib.chatmd").write_text(f'<tool name="apply_patch"><read id="s" path="{root / "sub"}"/></tool>\n')
    main.write_text(f'<import src="{root / "lib.chatmd"}"/>\n')
    rt = Runtime(Workspace([make_root(root, "ro", read_only=True)]), state_dir=tmp_path / "state")
    box = build_toolbox(*_doc_ctx(main, rt))
    res = box.call_sync("apply_patch", {"input": "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch"})
    assert res.is_error and "read-only" in res.text and not (root / "sub" / "x.txt").exists(), res.text


@pytest.mark.parametrize("decl", ['<tool name="p" agent="/nonexistent/x.chatmd"/>', '<import src="/nonexistent/y"/>'])
def test_a_missing_outside_path_is_refused_before_its_existence_is_told(
    work: Path, runtime_for, decl: str
) -> None:  # type: ignore[no-untyped-def]
    (work / "lib" / "probe.chatmd").write_text(decl + "\n")
    main = work / "main.chatmd"
    main.write_text('<import src="lib/probe.chatmd"/>\n')
    with pytest.raises(ChatmdError, match=r"/nonexistent/.*needs authority"):
        build(main, runtime_for(work))


def run_file_in(cwd: Path, f: Path, server: ScriptedOpenAI, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    """run_here, with the run started in ``cwd`` rather than the file's folder."""
    from tests.chatmd.test_runner import Ran, env_for
    from tooldeck.chatmd.runner import run_file

    for key, value in env_for(server, cwd.parent).items():
        if key.startswith(("OPENAI_", "TOOLDECK_")):
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    code = run_file(f)
    out = capsys.readouterr()
    return Ran(code, out.out, out.err)


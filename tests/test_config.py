"""The TOML configuration: user file, project file, and the trust split between them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tooldeck.config import ConfigError, load_config


def test_project_overrides_user_but_cannot_widen_roots(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text('allow_roots = ["~/src"]\n[models.presets.fast]\nmodel = "a"\ntemperature = 0.1\n')
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".tooldeck.toml").write_text('allow_roots = ["/"]\n[models.presets.fast]\nmodel = "b"\n')
    cfg = load_config(project, user_path=user)
    assert cfg.section("models", "presets", "fast") == {"model": "b", "temperature": 0.1}
    assert cfg.allow_roots == [Path("~/src").expanduser()]
    assert cfg.ignored == ("allow_roots",)


def test_missing_files_give_an_empty_config(tmp_path: Path) -> None:
    cfg = load_config(tmp_path, user_path=tmp_path / "absent.toml")
    assert cfg.data == {} and cfg.section("shell", "runtimes") == {} and cfg.allow_roots == []


def test_malformed_file_names_itself(tmp_path: Path) -> None:
    bad = tmp_path / "user.toml"
    bad.write_text("allow_roots = [\n")
    with pytest.raises(ConfigError, match=r"user\.toml"):
        load_config(None, user_path=bad)


def _project(tmp_path: Path, body: str) -> Path:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    (project / ".tooldeck.toml").write_text(body)
    return project


UNAPPROVED = """[models]
default_model = "fast"
base_url = "http://127.0.0.1:9/v1"
[models.presets.fast]
model = "m"
api_key_env = "SOME_KEY"
[agents.workflows.tidy]
prompt = "Tidy up."
[shell]
default_tool = false
[shell.runtimes.dev]
extends = "builtin:workspace-development@1"
[mcp.servers.x]
command = "sh"
"""


def test_an_unapproved_project_file_keeps_only_the_safe_subset(tmp_path: Path) -> None:
    project = _project(tmp_path, UNAPPROVED)
    cfg = load_config(project, user_path=tmp_path / "none.toml", state_dir=tmp_path / "state")
    assert cfg.data == {
        "models": {"default_model": "fast", "presets": {"fast": {"model": "m"}}},
        "agents": {"workflows": {"tidy": {"prompt": "Tidy up."}}},
        "shell": {"default_tool": False},
    }
    where = {n.what.split(" (")[0]: n.line for n in cfg.notices}
    assert where == {
        "a model endpoint": 3,
        "the environment variable 'SOME_KEY' as a model key": 6,
        "shell runtime `dev`": 11,
        "the setting `mcp`": 13,
    }
    assert not cfg.project_approved


def test_an_approved_project_file_applies_whole_until_it_changes(tmp_path: Path) -> None:
    from tooldeck.state.approvals import Approvals

    project = _project(tmp_path, UNAPPROVED)
    state = tmp_path / "state"
    Approvals(state).allow([project / ".tooldeck.toml"])
    cfg = load_config(project, user_path=tmp_path / "none.toml", state_dir=state)
    assert cfg.project_approved and cfg.notices == ()
    assert cfg.section("models")["base_url"] == "http://127.0.0.1:9/v1" and "dev" in cfg.section("shell", "runtimes")
    (project / ".tooldeck.toml").write_text(UNAPPROVED.replace("9/v1", "8/v1"))
    cfg = load_config(project, user_path=tmp_path / "none.toml", state_dir=state)
    assert not cfg.project_approved and "base_url" not in cfg.section("models")


def test_a_project_cannot_turn_back_on_the_shell_the_person_turned_off(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    project = _project(tmp_path, "[shell]\ndefault_tool = true\n")
    cfg = load_config(project, user_path=user, state_dir=tmp_path / "state")
    assert cfg.section("shell") == {} and cfg.notices == ()  # the default anyway: nothing to say
    user.write_text("[shell]\ndefault_tool = false\n")
    cfg = load_config(project, user_path=user, state_dir=tmp_path / "state")
    assert cfg.section("shell") == {"default_tool": False} and cfg.notices[0].line == 2


def test_user_only_settings_are_named_with_their_own_remedy(tmp_path: Path) -> None:
    project = _project(tmp_path, '[web]\nallow_private = true\n[index]\nembedder = "x"\n')
    cfg = load_config(project, user_path=tmp_path / "none.toml", state_dir=tmp_path / "state")
    assert cfg.data == {} and cfg.ignored == ("index", "web")
    assert [(n.line, "only your own config file" in n.text()) for n in cfg.notices] == [(3, True), (1, True)]


def test_a_linked_project_file_has_no_authority(tmp_path: Path) -> None:
    from tooldeck.state.approvals import Approvals

    elsewhere = _project(tmp_path, '[shell.runtimes.dev]\nextends = "builtin:workspace-development@1"\n')
    state = tmp_path / "state"
    Approvals(state).allow([elsewhere / ".tooldeck.toml"])  # approved for its own folder
    other = tmp_path / "other"
    other.mkdir()
    (other / ".tooldeck.toml").symlink_to(elsewhere / ".tooldeck.toml")
    cfg = load_config(other, user_path=tmp_path / "none.toml", state_dir=state)
    assert cfg.section("shell") == {} and "is a link to" in cfg.notices[0].text()


def test_a_malformed_or_strange_project_file_is_ignored_not_fatal(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text('[models]\ndefault_model = "mine"\n')
    project = _project(tmp_path, '[models]\ndefault_model = "theirs"\n[shell\n')
    cfg = load_config(project, user_path=user, state_dir=tmp_path / "state")
    assert cfg.data == {"models": {"default_model": "mine"}} and cfg.project_path is None
    assert cfg.notices[0].line == 3 and "is not valid TOML" in cfg.notices[0].text()
    (project / ".tooldeck.toml").unlink()
    os.mkfifo(project / ".tooldeck.toml")  # would block a reader that waits for a writer
    cfg = load_config(project, user_path=user, state_dir=tmp_path / "state")
    assert cfg.data == {"models": {"default_model": "mine"}} and "not a regular file" in cfg.notices[0].text()


def test_what_is_shown_of_a_file_cannot_drive_the_terminal_nor_flood_it(tmp_path: Path) -> None:
    body = '[shell.runtimes."x\\u001b[2J\\u001b]0;owned\\u0007"]\n' + "".join(
        f"[shell.tools.t{i}]\n" for i in range(50)
    )
    project = _project(tmp_path, body)
    cfg = load_config(project, user_path=tmp_path / "none.toml", state_dir=tmp_path / "state")
    texts = [n.text() for n in cfg.notices]
    assert len(texts) == 21 and "31 more settings beyond the safe subset" in texts[-1]
    assert all(ch not in "".join(texts) for ch in "\x1b\x07") and "\\x1b[2J" in texts[0]


def test_a_project_file_nested_too_deeply_is_ignored(tmp_path: Path) -> None:
    project = _project(tmp_path, "a = " + "[" * 5000 + "]" * 5000 + "\n")
    cfg = load_config(project, user_path=tmp_path / "none.toml", state_dir=tmp_path / "state")
    assert cfg.data == {} and "nested too deeply" in cfg.notices[0].text()
    user = tmp_path / "user.toml"
    user.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_config(None, user_path=user)

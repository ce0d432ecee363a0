"""The TOML configuration: user file, project file, and the trust split between them."""

from __future__ import annotations

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

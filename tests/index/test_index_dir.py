"""The index folder is the person's to choose (ochat's ``.md_index``): ``--index-dir``
and ``[index] dir`` in the user config; never a project file, never the model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.index.indexkit import DOCS, write_tree

pytestmark = pytest.mark.timeout(180)


def run(args: list[str], cwd: Path, state: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state), "TOOLDECK_CONFIG": str(config)}
    return subprocess.run([sys.executable, "-m", "tooldeck", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=150)  # fmt: skip


def test_index_dir_from_the_command_line_and_the_user_config(
    root: Path, state_dir: Path, hermetic_config: Path
) -> None:
    write_tree(root / "docs", DOCS)
    r = run(["index", "docs", "docs", "--name", "manual", "--index-dir", ".md_index"], root, state_dir, hermetic_config)
    assert r.returncode == 0, r.stderr
    assert (root / ".md_index" / "manual" / "CURRENT").is_file()
    assert not (state_dir / "indexes").exists()
    r = run(["search", "colored text in the terminal", "--index", "manual", "--index-dir", ".md_index"], root,
            state_dir, hermetic_config)  # fmt: skip
    assert r.returncode == 0 and "docs/guide/colors.md" in r.stdout, r.stdout + r.stderr
    # the default place does not have it
    r = run(["search", "colored text", "--index", "manual"], root, state_dir, hermetic_config)
    assert r.returncode == 1 and "no index named 'manual'" in r.stderr
    # the person's config names the folder for every host: the tools find it
    hermetic_config.write_text('[index]\ndir = ".md_index"\n')
    r = run(["call", "markdown_search", '{"query": "colored text in the terminal", "index_name": "manual"}'], root,
            state_dir, hermetic_config)  # fmt: skip
    assert r.returncode == 0 and "docs/guide/colors.md" in r.stdout, r.stderr


def test_a_project_file_cannot_move_the_indexes(root: Path, state_dir: Path, hermetic_config: Path,
                                                tmp_path: Path) -> None:  # fmt: skip
    write_tree(root / "docs", DOCS)
    elsewhere = tmp_path / "elsewhere"
    (root / ".tooldeck.toml").write_text(f'[index]\ndir = "{elsewhere}"\n')
    r = run(["call", "index_markdown_docs", '{"root": "docs", "index_name": "manual"}'], root, state_dir,
            hermetic_config)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert not elsewhere.exists()
    assert (state_dir / "indexes" / "manual" / "CURRENT").is_file()


def test_an_index_folder_that_is_a_link_is_refused(root: Path, state_dir: Path, hermetic_config: Path,
                                                   tmp_path: Path) -> None:  # fmt: skip
    write_tree(root / "docs", DOCS)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".md_index").mkdir()
    (root / ".md_index" / "manual").symlink_to(outside)  # what a model with a shell could plant
    hermetic_config.write_text('[index]\ndir = ".md_index"\n')
    r = run(["call", "index_markdown_docs", '{"root": "docs", "index_name": "manual"}'], root, state_dir,
            hermetic_config)  # fmt: skip
    assert r.returncode == 1 and "symbolic link" in r.stderr
    assert list(outside.iterdir()) == []


def test_an_index_dir_that_is_a_link_is_refused(root: Path, state_dir: Path, hermetic_config: Path,
                                                tmp_path: Path) -> None:  # fmt: skip
    write_tree(root / "docs", DOCS)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".md_index").symlink_to(outside)
    hermetic_config.write_text('[index]\ndir = ".md_index"\n')
    r = run(["call", "index_markdown_docs", '{"root": "docs", "index_name": "manual"}'], root, state_dir,
            hermetic_config)  # fmt: skip
    assert r.returncode == 1 and "symbolic link" in r.stderr
    assert list(outside.iterdir()) == []

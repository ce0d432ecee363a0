"""Approving a project file as the person would (``tooldeck trust allow``), for
tests whose subject is what an approved file declares, not the approval."""

from __future__ import annotations

from pathlib import Path

from tooldeck.state.approvals import Approvals


def approve(root: Path, state_dir: Path) -> None:
    """Approve ``root/.tooldeck.toml`` as it is now, in ``state_dir``."""
    Approvals(state_dir).allow([root / ".tooldeck.toml"])


def write_approved(root: Path, state_dir: Path, body: str) -> None:
    """Write ``root/.tooldeck.toml`` and approve it, as the person who wrote it would."""
    (root / ".tooldeck.toml").write_text(body)
    approve(root, state_dir)

"""Model-backed tests: a scripted OpenAI-compatible server on 127.0.0.1 per test."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root, for ``tests.support``

from tests.support.fixtures import server  # noqa: F401

"""The dashboard's tests drive agent sessions: the same scripted model server and presets as tests/agents."""

from __future__ import annotations

from tests.agents.conftest import model_env  # noqa: F401
from tests.support.fixtures import server  # noqa: F401

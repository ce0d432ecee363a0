"""Model-backed tests: a scripted OpenAI-compatible server on 127.0.0.1 per test."""

from __future__ import annotations

from tests.support.fixtures import server  # noqa: F401

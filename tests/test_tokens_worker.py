"""The token worker (tooldeck.tokens): a server's counts come from a child
process, exact and identical to in-process counts once it is ready, and a
count asked before then never waits for the encoder to load."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import pytest

from tooldeck import tokens
from tooldeck.tokens import (
    TokenCounter,
    TokenWorker,
    count_here,
    count_many,
    count_texts,
    count_with,
    decode_request,
    encode_request,
)

pytestmark = pytest.mark.timeout(120)
TEXTS = ["", "hello world", "x\ud800y lone surrogate", "def f(a, b):\n    return a + b\n" * 400, "é" * 5000]
NEVER_READY = [sys.executable, "-c", "import time; time.sleep(120)"]


@pytest.fixture
def installed() -> Iterator[list[TokenWorker]]:
    """Workers made by a test (installed as the process's token worker), closed afterwards."""
    made: list[TokenWorker] = []
    yield made
    for w in made:
        w.close()


def _install(monkeypatch: pytest.MonkeyPatch, made: list[TokenWorker], command: list[str] | None = None) -> TokenWorker:
    worker = TokenWorker(command)
    made.append(worker)
    monkeypatch.setattr(tokens, "_worker", worker)
    return worker


def test_wire_round_trip() -> None:
    payload = encode_request("o200k_base", TEXTS)
    assert decode_request(payload[4:]) == ("o200k_base", TEXTS)


def test_worker_counts_equal_in_process_counts(monkeypatch: pytest.MonkeyPatch, installed: list[TokenWorker]) -> None:
    worker = _install(monkeypatch, installed)
    assert worker.wait_ready(60)
    big = ["word " * 30_000, "x = 1\n" * 20_000]  # more than one request chunk
    counts, exact = count_texts("o200k_base", TEXTS + big)
    assert exact and counts == [count_here("o200k_base", t) for t in TEXTS + big]
    assert count_with("cl100k_base", TEXTS[3]) == count_here("cl100k_base", TEXTS[3])
    assert count_many(TEXTS) == counts[: len(TEXTS)]


def test_a_count_before_the_worker_is_ready_does_not_wait(
    monkeypatch: pytest.MonkeyPatch, installed: list[TokenWorker]
) -> None:
    _install(monkeypatch, installed, NEVER_READY)  # a child that never finishes loading
    t0 = time.perf_counter()
    counts, exact = count_texts("o200k_base", TEXTS)
    elapsed = time.perf_counter() - t0
    assert not exact and elapsed < 5  # the estimate, at once: this worker never gets ready, waiting would hang
    assert all(est >= count_here("o200k_base", t) for est, t in zip(counts, TEXTS, strict=True))  # errs high

    class Db:
        saved: dict[str, int] = {}

        def token_counts(self, keys: list[str]) -> dict[str, int]:
            return {}

        def save_token_counts(self, counts: dict[str, int]) -> None:
            self.saved.update(counts)

    db = Db()
    counter = TokenCounter(db, lambda: "o200k_base")
    counter.count_many(TEXTS)
    assert db.saved == {} and counter.computed == 0  # estimates are never cached


def test_a_dead_worker_falls_back_to_counting_here(
    monkeypatch: pytest.MonkeyPatch, installed: list[TokenWorker]
) -> None:
    worker = _install(monkeypatch, installed, [sys.executable, "-c", "import sys; sys.stdout.write('R')"])
    assert worker.wait_ready(30)
    counts, exact = count_texts("o200k_base", TEXTS)  # the child exits instead of answering
    assert worker.dead
    counts, exact = count_texts("o200k_base", TEXTS)
    assert exact and counts == [count_here("o200k_base", t) for t in TEXTS]


@pytest.fixture
def armed_clean() -> Iterator[None]:
    """No worker before the test; the one it armed or started stopped after it."""
    tokens.stop_worker()
    yield
    tokens.stop_worker()


def _alive(worker: TokenWorker | None) -> bool:
    return worker is not None and worker._proc.poll() is None


def test_an_armed_worker_waits_for_its_delay_or_the_first_count(armed_clean: None) -> None:
    """A server arms the worker at start-up: no child until the first count
    (which is an estimate, never a wait), exact counts once it is ready."""
    tokens.arm_worker(600)
    assert tokens._worker is None  # nothing spawned: a server that never counts never loads the encoder
    counts, exact = count_texts("o200k_base", TEXTS)
    worker = tokens._worker
    assert _alive(worker) and not exact  # the count started it, and did not wait for its load
    assert worker is not None and worker.wait_ready(60)
    assert count_texts("o200k_base", TEXTS) == ([count_here("o200k_base", t) for t in TEXTS], True)


def test_an_armed_worker_starts_after_its_delay_without_a_count(armed_clean: None) -> None:
    tokens.arm_worker(0.05)
    deadline = time.monotonic() + 30
    while tokens._worker is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _alive(tokens._worker)


def test_a_worker_stopped_before_its_delay_never_starts(armed_clean: None) -> None:
    tokens.arm_worker(0.2)
    tokens.stop_worker()  # the server exits first
    time.sleep(0.6)
    assert tokens._worker is None and tokens.current_worker() is None


def test_no_worker_is_armed_when_switched_off(armed_clean: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tokens.WORKER_ENV, "0")
    tokens.arm_worker(0)
    time.sleep(0.2)
    assert tokens.current_worker() is None

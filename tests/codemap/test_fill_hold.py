"""A background fill's worker processes stop between files while a request
is served (not only between the fill's chunks), and go on when it ends or
someone waits for the fill."""

from __future__ import annotations

from concurrent.futures import TimeoutError as FutureTimeout

import pytest

from tooldeck.codemap import pool
from tooldeck.codemap.fill import LowPriorityPool
from tooldeck.core import foreground

ITEMS = [("python", b"def f():\n    return 1\n")] * 3


@pytest.fixture
def fill_pool(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TOOLDECK_CODEMAP_WORKERS", "1")
    urgent = {"set": False}
    p = LowPriorityPool(lambda: urgent["set"])
    warm = p.submit(ITEMS)  # started and confined before the timed part: a parse then takes ms
    if warm is None:
        pytest.skip("no worker processes here")
    assert len(warm.result(timeout=120)) == 3
    try:
        yield p, urgent
    finally:
        p.shutdown()


def test_workers_wait_while_a_request_is_served(fill_pool) -> None:  # type: ignore[no-untyped-def]
    p, _urgent = fill_pool
    with foreground.serving():
        fut = p.submit(ITEMS)
        assert fut is not None
        with pytest.raises(FutureTimeout):
            fut.result(timeout=2.0)  # three tiny files: parsed in ms were the worker not held
    assert len(fut.result(timeout=60)) == 3  # the request ended: the worker goes on


def test_someone_waiting_for_the_fill_releases_the_workers(fill_pool) -> None:  # type: ignore[no-untyped-def]
    p, urgent = fill_pool
    with foreground.serving():
        fut = p.submit(ITEMS)
        assert fut is not None
        with pytest.raises(FutureTimeout):
            fut.result(timeout=1.0)
        urgent["set"] = True
        p.release_hold()
        assert len(fut.result(timeout=60)) == 3  # while the request is still in flight


def test_a_shut_down_pool_no_longer_watches_requests(fill_pool) -> None:  # type: ignore[no-untyped-def]
    p, _urgent = fill_pool
    p.shutdown()
    assert p._hold is not None and p._hold.value == 0
    with foreground.serving():
        assert p._hold.value == 0


def test_a_worker_of_the_shared_pool_is_never_held() -> None:
    assert pool._hold is None  # this process: the flag exists only in a fill's workers
    assert pool.extract_group(ITEMS[:1])[0]

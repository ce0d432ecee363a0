"""Background work pauses while a request is served, and stops pausing when
someone waits for it or the pause runs out."""

from __future__ import annotations

import threading

from tooldeck.core import foreground


def _paused_worker(urgent: threading.Event, max_pause: float | None = None) -> tuple[threading.Thread, list[float]]:
    out: list[float] = []
    t = threading.Thread(target=lambda: out.append(foreground.yield_to_requests(urgent.is_set, max_pause)))
    t.start()
    return t, out


def _until(cond, timeout: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    done = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if cond():
            return True
        done.wait(0.01)
    return False


def test_no_request_no_pause() -> None:
    assert foreground.in_flight() == 0
    assert foreground.yield_to_requests() == 0.0


def test_a_worker_waits_until_the_request_ends() -> None:
    urgent = threading.Event()
    with foreground.serving():
        assert foreground.in_flight() == 1
        t, out = _paused_worker(urgent, max_pause=60)
        assert _until(lambda: foreground.waiting() == 1)
        assert t.is_alive()  # still paused: the request is in flight
    t.join(30)
    assert not t.is_alive() and out and out[0] > 0
    assert foreground.in_flight() == 0 and foreground.waiting() == 0


def test_nested_requests_keep_it_paused_until_the_last_ends() -> None:
    urgent = threading.Event()
    with foreground.serving():
        t, _out = _paused_worker(urgent, max_pause=60)
        with foreground.serving():
            assert _until(lambda: foreground.waiting() == 1)
        assert foreground.in_flight() == 1 and t.is_alive()
    t.join(30)
    assert not t.is_alive()


def test_urgent_ends_the_pause() -> None:
    urgent = threading.Event()
    with foreground.serving():
        t, _out = _paused_worker(urgent, max_pause=60)
        assert _until(lambda: foreground.waiting() == 1)
        urgent.set()  # someone (maybe this request) waits for the worker
        t.join(30)
        assert not t.is_alive()


def test_a_pause_is_bounded() -> None:
    with foreground.serving():
        t, out = _paused_worker(threading.Event(), max_pause=0.05)
        t.join(30)
        assert not t.is_alive() and out[0] >= 0.05


def test_watchers_hear_the_first_request_start_and_the_last_end() -> None:
    heard: list[bool] = []
    stop = foreground.watch(heard.append)
    try:
        assert heard == [False]  # the state now
        with foreground.serving():
            with foreground.serving():
                pass
            assert heard == [False, True]  # the nested request told nothing
        assert heard == [False, True, False]
    finally:
        stop()
    with foreground.serving():
        pass
    assert heard == [False, True, False]  # stopped: told nothing more

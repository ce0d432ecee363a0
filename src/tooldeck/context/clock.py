"""Wall and CPU time per stage of a context build."""

from __future__ import annotations

import time
from collections.abc import Callable


class StageClock:
    """Wall and this thread's CPU time per stage (a build runs in a worker
    thread: process CPU would count the other threads too)."""

    def __init__(self) -> None:
        self.start = self.wall = time.perf_counter()
        self.cpu_start = self.cpu = time.thread_time()
        self.timings: dict[str, float] = {}
        self.cpus: dict[str, float] = {}

    def lap(self, stage: str) -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        self.timings[stage], self.cpus[stage] = wall - self.wall, cpu - self.cpu
        self.wall, self.cpu = wall, cpu

    def done(self) -> tuple[dict[str, float], dict[str, float]]:
        self.timings["total"] = time.perf_counter() - self.start
        self.cpus["total"] = time.thread_time() - self.cpu_start
        return self.timings, self.cpus


Progress = Callable[[str], None]


def stage_reporter(progress: Progress | None, stop: Callable[[], None]) -> Progress:
    """Reports a stage, after the cancel check (a cancelled build stops there)."""

    def say(message: str) -> None:
        stop()
        if progress is not None:
            progress(message)

    return say

"""Python ``ast`` objects built one thread at a time (tooldeck.ast_lock):
on CPython 3.11 a parse beside a ``.npy`` load in another thread, with the
collector running finalizers meanwhile, failed with ``SystemError: AST
constructor recursion depth mismatch``."""

from __future__ import annotations

import ast
import threading
import time
from pathlib import Path

import numpy as np

from tooldeck.index.chunk_pydoc import chunk_pydoc
from tooldeck.index.dense import load_vectors, write_vectors

SECONDS = 1.0  # without the lock it failed within 0.1-0.3 s in each of 5 runs


class _Cycle:
    """Garbage the collector must finalize: its runs let another thread in."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        pass


def test_a_parse_beside_vector_loads_in_other_threads_never_fails(tmp_path: Path) -> None:
    source = Path(ast.__file__).read_text()  # a big module: a long conversion to ast objects
    vectors = tmp_path / "vectors.npy"
    write_vectors(vectors, np.zeros((4, 8), dtype=np.float32))
    failures: list[BaseException] = []
    stop = threading.Event()

    def parse() -> None:
        while not stop.is_set():
            try:
                assert chunk_pydoc("ast.py", source)
            except BaseException as exc:
                failures.append(exc)
                stop.set()

    def load() -> None:
        while not stop.is_set():
            try:
                load_vectors(vectors)
                [_Cycle() for _ in range(50)]
            except BaseException as exc:
                failures.append(exc)
                stop.set()

    threads = [threading.Thread(target=parse), threading.Thread(target=load), threading.Thread(target=load)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline and not stop.is_set():
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join()
    assert not failures, repr(failures[0])

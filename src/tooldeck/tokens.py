"""Token counts: the one home of everything that counts tokens.

A real BPE tokenizer that works offline (quicktok: tiktoken-identical ids for
o200k_base and cl100k_base, no downloads); the token worker, a child process
that counts for a server; and a counter cached by content hash for texts that
are counted again and again. :meth:`tooldeck.runtime.Runtime.count_tokens` is
this module's :func:`count_with` under the person's ``tokens.encoding``
setting.

This module imports only the standard library (quicktok when an encoding is
first needed): the worker must start fast, and the stdio server imports this
module before its first answer. A host arms the worker at start-up
(:func:`arm_worker`: it starts a few seconds later, or at the first count);
``python -m tooldeck.tokens`` is the child.

Why a worker process, not a thread: loading an encoding takes ~0.6 s of CPU inside
one call of the tokenizer's C++ extension that holds the GIL (measured: a
thread ticking every millisecond stalls for the whole load). Loaded in any
thread of the server, it freezes every call for that long; loaded on first
use, the first call that needs a count waits for it. In a child process it
loads on the other core, and the server never waits: until the child says it
is ready, counts are estimated (:func:`estimate`, bytes / 2 + 1: above the
true count for code and prose, so a budget it enforces is kept), exact from
then on; estimates are never cached. A count also costs the server no CPU:
its thread waits on a pipe (GIL released) while the child runs the BPE, which
keeps long counts off the event loop. The child counts with
:func:`count_here`, the function the server would use in-process: the same
numbers.

Wire (pipes, little-endian): a request is ``<I`` payload length, then the
encoding name (``<B`` length + ASCII), ``<I`` text count, and per text ``<I``
length + UTF-8 (``surrogatepass``: the child sees the exact string); the
answer is one ``<q`` per text. The child writes ``R`` once its default
encoding is loaded, and exits when its stdin closes.

Why a cache: a selection breakdown re-counts the same file texts on every
``workspace_context`` call; BPE over a large selection costs far more than
hashing it. :class:`TokenCounter` keeps counts in memory and in a persistent
table (key = encoding + BLAKE2 of the exact text; the store's
``token_counts`` table, reached through the small :class:`CountStore`
protocol so this module imports no store), so a repeated call, or a new CLI
process, only tokenizes what changed, and often never loads the encoder.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
import subprocess
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, BinaryIO, Protocol

log = logging.getLogger("tooldeck.tokens")

DEFAULT_ENCODING = "o200k_base"
WORKER_ENV = "TOOLDECK_TOKEN_WORKER"  # "0": count in-process (the load then stalls once)
CHUNK_BYTES = 256 * 1024  # per request: a caller on the event loop waits behind at most one chunk
_lock = threading.Lock()
_LEN = struct.Struct("<I")


@lru_cache(maxsize=4)
def get_encoding(name: str = DEFAULT_ENCODING) -> Any:
    with _lock:
        import quicktok

        return quicktok.get_encoding(name)


def count_here(encoding: str, text: str) -> int:
    """Tokens of ``text`` under ``encoding``, counted in this process (loads
    the encoding on first use: ~0.6 s holding the GIL)."""
    if not text:
        return 0
    enc = get_encoding(encoding)
    try:
        return int(enc.count(text))  # = len(encode_ordinary(text)), without building the ids
    except (UnicodeEncodeError, ValueError, TypeError):  # lone surrogates
        return int(enc.count(text.encode("utf-8", "replace").decode("utf-8", "replace")))


def read_exact(stream: BinaryIO, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        got = stream.read(n - len(data))
        if not got:
            raise EOFError("token worker pipe closed")
        data += got
    return bytes(data)


def encode_request(encoding: str, texts: Sequence[str]) -> bytes:
    name = encoding.encode("ascii")
    parts = [bytes([len(name)]), name, _LEN.pack(len(texts))]
    for text in texts:
        raw = text.encode("utf-8", "surrogatepass")
        parts += [_LEN.pack(len(raw)), raw]
    payload = b"".join(parts)
    return _LEN.pack(len(payload)) + payload


def decode_request(payload: bytes) -> tuple[str, list[str]]:
    n = payload[0]
    encoding = payload[1 : 1 + n].decode("ascii")
    pos = 1 + n
    (count,) = _LEN.unpack_from(payload, pos)
    pos += 4
    texts = []
    for _ in range(count):
        (size,) = _LEN.unpack_from(payload, pos)
        pos += 4
        texts.append(payload[pos : pos + size].decode("utf-8", "surrogatepass"))
        pos += size
    return encoding, texts


def read_counts(stream: BinaryIO, n: int) -> list[int]:
    return list(struct.unpack(f"<{n}q", read_exact(stream, 8 * n)))


def child_main() -> None:
    """The child: load the default encoding, say ``R``, answer requests."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C in the terminal is the server's to handle
    _confine()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    get_encoding(DEFAULT_ENCODING)
    stdout.write(b"R")
    stdout.flush()
    while True:
        try:
            (size,) = _LEN.unpack(read_exact(stdin, 4))
            encoding, texts = decode_request(read_exact(stdin, size))
        except EOFError:
            return
        counts = [count_here(encoding, t) for t in texts]
        stdout.write(struct.pack(f"<{len(counts)}q", *counts))
        stdout.flush()


def _confine() -> None:
    """The worker reads only its pipes: confine it to importing (Landlock
    where the kernel has it; no file of the person's, no execution, no
    capability). A worker that cannot be confined there exits, and the
    server counts in-process."""
    # lazy: the server loads this module before its first stdio answer: stdlib only there
    from tooldeck.confine.policy import python_worker
    from tooldeck.confine.process import confine_self  # lazy: ctypes and Landlock: in the worker only

    try:
        confine_self(python_worker("tokens"))
    except OSError as exc:
        sys.stderr.write(f"tooldeck token worker: cannot confine itself ({exc}); exiting\n")
        raise SystemExit(1) from exc


class TokenWorker:
    """The server's side: spawns the child and asks it for counts.

    :meth:`counts` never waits for the child to load: it returns None until
    the child is ready, and None for good if the child died (the caller then
    counts in-process). Thread-safe; requests are serialized."""

    def __init__(self, command: list[str] | None = None) -> None:
        cmd = command or [sys.executable, "-m", "tooldeck.tokens"]
        # stderr to /dev/null: the child must not hold the server's stderr open after the
        # server exits (a client reading it to EOF would wait for the child's load); a
        # child that fails is seen as dead here and counting falls back in-process
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
        )
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self.dead = False
        threading.Thread(target=self._await_ready, name="tooldeck-tokens-ready", daemon=True).start()

    def _await_ready(self) -> None:
        assert self._proc.stdout is not None
        try:
            if self._proc.stdout.read(1) == b"R":
                self._ready.set()
                return
        except (OSError, ValueError):
            pass
        self.dead = True

    @property
    def ready(self) -> bool:
        return self._ready.is_set() and not self.dead

    def wait_ready(self, timeout: float) -> bool:
        """For tests and benchmarks only: hosts never wait."""
        return self._ready.wait(timeout) and not self.dead

    def counts(self, encoding: str, texts: Sequence[str]) -> list[int] | None:
        if not self.ready:
            return None
        out: list[int] = []
        with self._lock:
            try:
                for chunk in _chunks(texts):
                    out += self._request(encoding, chunk)
            except (OSError, EOFError, ValueError, struct.error):
                log.warning("tooldeck: the token worker stopped; counting in-process from now on")
                self.dead = True
                return None
        return out

    def _request(self, encoding: str, texts: Sequence[str]) -> list[int]:
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(encode_request(encoding, texts))
        return read_counts(stdout, len(texts))

    def close(self) -> None:
        """End the child (closing its stdin is enough; it exits on EOF)."""
        self.dead = True
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        try:
            self._proc.wait(2)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def _chunks(texts: Sequence[str]) -> list[Sequence[str]]:
    """Requests of at most about CHUNK_BYTES (a bigger single text is one request)."""
    out: list[Sequence[str]] = []
    start = size = 0
    for i, text in enumerate(texts):
        if size and size + len(text) > CHUNK_BYTES:
            out.append(texts[start:i])
            start, size = i, 0
        size += len(text)
    if start < len(texts) or not texts:
        out.append(texts[start:])
    return out


_worker: TokenWorker | None = None
_armed = False  # a host asked for the worker later (arm_worker): the first count starts it sooner


def _wanted() -> bool:
    return os.environ.get(WORKER_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def start_worker() -> TokenWorker | None:
    """Count in a child process from now on. Returns the worker, or None when
    ``$TOOLDECK_TOKEN_WORKER`` is ``0``."""
    global _worker
    if not _wanted():
        return None
    with _lock:
        if _worker is None or _worker.dead:
            _worker = TokenWorker()
        return _worker


def arm_worker(delay: float) -> None:
    """Have the worker start ``delay`` seconds from now, or at the first count
    before then (hosts that must never stall call this at start-up).

    Why not at once: loading the encoder costs the worker ~0.7 s of CPU, paid
    by every server, including those that end within seconds having counted
    nothing (a script's, a test's, a client that only listed the tools), and
    on a busy machine it competes with the start itself. A client's first
    counted result comes after its model's first turn, seconds away; a count
    before the worker is ready is an estimate, as it always was in the
    load's window."""
    global _armed
    if not _wanted():
        return
    with _lock:
        if _armed:
            return
        _armed = True
    timer = threading.Timer(delay, _start_armed)
    timer.daemon = True
    timer.name = "tooldeck-tokens-arm"
    timer.start()


def _start_armed() -> None:
    with _lock:
        armed = _armed and _worker is None
    if armed:
        start_worker()


def current_worker() -> TokenWorker | None:
    """The worker, started now if a host armed it and none runs yet."""
    if _worker is None and _armed:
        return start_worker()
    return _worker


def stop_worker() -> None:
    global _worker, _armed
    with _lock:
        worker, _worker, _armed = _worker, None, False
    if worker is not None:
        worker.close()


# Older OpenAI chat models use cl100k; everything newer (and every non-OpenAI
# model, for which o200k is the documented approximation) uses o200k.
_CL100K_PREFIXES = ("gpt-4-", "gpt-4", "gpt-3.5", "text-embedding-3", "text-embedding-ada")
_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt")


def encoding_name_for(model: str | None) -> str:
    if not model:
        return DEFAULT_ENCODING
    m = model.lower().rsplit("/", 1)[-1]
    if m.startswith(_O200K_PREFIXES):
        return "o200k_base"
    if m.startswith(_CL100K_PREFIXES):
        return "cl100k_base"
    return DEFAULT_ENCODING


def estimate(text: str) -> int:
    """The count used while the token worker is still loading: UTF-8 bytes / 2
    + 1. BPE tokens of code and prose cover 2.5-4.5 bytes (non-Latin letters
    about 2), so this errs high and a budget enforced with it is kept; it can
    be low only for text of mostly one-byte tokens (dense punctuation,
    binary-like data)."""
    return len(text.encode("utf-8", "surrogatepass")) // 2 + 1 if text else 0


def count_texts(encoding: str, texts: Sequence[str]) -> tuple[list[int], bool]:
    """Counts of ``texts`` and whether they are exact (False: estimates,
    given while the token worker is loading; never wait for it)."""
    worker = current_worker()
    if worker is not None and not worker.dead:
        got = worker.counts(encoding, texts)
        if got is not None:
            return got, True
        if not worker.dead:
            return [estimate(t) for t in texts], False
    return [count_here(encoding, t) for t in texts], True


def count_with(encoding: str, text: str) -> int:
    """Tokens of ``text`` under the encoding named ``encoding`` (o200k_base / cl100k_base)."""
    if not text:
        return 0
    if current_worker() is not None:
        return count_texts(encoding, [text])[0][0]
    return count_here(encoding, text)


def count_tokens(text: str, model: str | None = None) -> int:
    """Number of BPE tokens in ``text`` for ``model`` (default o200k)."""
    return count_with(encoding_name_for(model), text)


def count_many(texts: list[str], model: str | None = None) -> list[int]:
    """Token counts of many texts (encoded in parallel by the tokenizer)."""
    if not texts:
        return []
    if current_worker() is not None:
        return count_texts(encoding_name_for(model), texts)[0]
    enc = get_encoding(encoding_name_for(model))
    try:
        _ids, offsets = enc.encode_batch(texts)  # doc i is ids[offsets[i]:offsets[i + 1]]
    except (UnicodeEncodeError, ValueError, TypeError):
        return [count_tokens(t, model) for t in texts]
    bounds = offsets.tolist()
    return [bounds[i + 1] - bounds[i] for i in range(len(texts))]


def warm_up() -> None:
    """Load the default encoding now. It takes ~0.6 s and holds the GIL (the
    whole process stalls), so hosts call it when idle, never on a hot path;
    with a token worker (which loads itself) it does nothing."""
    if current_worker() is None:
        get_encoding()


MEMORY_ENTRIES = 50_000


class CountStore(Protocol):
    """Where cached counts persist (``state.tables.ContextDB`` implements it)."""

    def token_counts(self, keys: Sequence[str]) -> dict[str, int]: ...

    def save_token_counts(self, counts: dict[str, int]) -> None: ...


class TokenCounter:
    """Counts cached in memory (LRU) and in a :class:`CountStore`, keyed by encoding + text hash."""

    def __init__(self, db: CountStore, encoding: Callable[[], str]) -> None:
        self.db = db
        self.encoding = encoding
        self._memory: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        self.computed = 0  # texts actually tokenized (for tests and benchmarks)

    @staticmethod
    def key(encoding: str, text: str) -> str:
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        return f"{encoding}:{digest}"

    def count(self, text: str) -> int:
        return self.count_many([text])[0]

    def count_many(self, texts: list[str]) -> list[int]:
        encoding = self.encoding()
        keys = [self.key(encoding, t) if t else "" for t in texts]
        found: dict[str, int] = {"": 0}
        with self._lock:
            for k in keys:
                if k in self._memory:
                    self._memory.move_to_end(k)
                    found[k] = self._memory[k]
        missing = sorted({k for k in keys if k not in found})
        if missing:
            found.update(self.db.token_counts(missing))
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        exact = True
        if todo:
            counts, exact = count_texts(encoding, list(todo.values()))
            fresh = dict(zip(todo, counts, strict=True))
            found.update(fresh)
            if exact:  # an estimate (the worker still loading) is never kept
                self.computed += len(fresh)
                self.db.save_token_counts(fresh)
        with self._lock:
            for k in keys:
                if k and (exact or k not in todo):
                    self._memory[k] = found[k]
                    self._memory.move_to_end(k)
            while len(self._memory) > MEMORY_ENTRIES:
                self._memory.popitem(last=False)
        return [found[k] for k in keys]


if __name__ == "__main__":
    child_main()

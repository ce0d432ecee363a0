"""The one token service: a real BPE tokenizer that works offline (quicktok:
tiktoken-identical ids for o200k_base and cl100k_base, no downloads), and a
counter cached by content hash for texts that are counted again and again.

Loading an encoding takes about half a second, so it happens on first use (or
in a background warm-up started by a host), never at import time. That load
holds the GIL for its whole length, so a server does not load it at all: it
calls :func:`start_worker`, and its counts are made by a child process
(:mod:`tooldeck.tokenizer`) that loads on the other core. Until
the child is ready a count is an estimate (:func:`estimate`, bytes / 2 + 1:
above the true count for code and prose, so a budget it enforces is kept);
exact afterwards; estimates are never cached.

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
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Protocol

from tooldeck.tokenizer import (  # noqa: F401 - start_worker / stop_worker: part of this service's interface
    DEFAULT_ENCODING,
    count_here,
    current_worker,
    get_encoding,
    start_worker,
    stop_worker,
)

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

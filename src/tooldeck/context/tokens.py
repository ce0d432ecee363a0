"""Token counts for selections, cached by content hash.

A breakdown re-counts the same file texts on every ``workspace_context`` call;
BPE over a large selection costs far more than hashing it. Counts are cached
in memory and in the store (key = encoding + BLAKE2 of the exact text), so a
repeated call, or a new CLI process, only tokenizes what changed, and often
never loads the encoder at all.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable

from tooldeck.context.db import ContextDB
from tooldeck.workspace.tokens import get_encoding

MEMORY_ENTRIES = 50_000


def count_with(encoding: str, text: str) -> int:
    """Tokens of ``text`` under ``encoding`` (o200k_base / cl100k_base)."""
    if not text:
        return 0
    enc = get_encoding(encoding)
    try:
        return len(enc.encode_ordinary(text))
    except (UnicodeEncodeError, ValueError, TypeError):  # lone surrogates
        return len(enc.encode_ordinary(text.encode("utf-8", "replace").decode("utf-8", "replace")))


class TokenCounter:
    def __init__(self, db: ContextDB, encoding: Callable[[], str]) -> None:
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
        fresh: dict[str, int] = {}
        for k, t in zip(keys, texts, strict=True):
            if k not in found:
                found[k] = fresh[k] = count_with(encoding, t)
                self.computed += 1
        if fresh:
            self.db.save_token_counts(fresh)
        with self._lock:
            for k in keys:
                if k:
                    self._memory[k] = found[k]
                    self._memory.move_to_end(k)
            while len(self._memory) > MEMORY_ENTRIES:
                self._memory.popitem(last=False)
        return [found[k] for k in keys]

"""Token counting with a real BPE tokenizer that works offline (quicktok:
tiktoken-identical ids for o200k_base and cl100k_base, no downloads).

Loading an encoding takes about half a second, so it happens on first use (or
in a background warm-up started by a host), never at import time.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

DEFAULT_ENCODING = "o200k_base"
_lock = threading.Lock()

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


@lru_cache(maxsize=4)
def get_encoding(name: str = DEFAULT_ENCODING) -> Any:
    with _lock:
        import quicktok

        return quicktok.get_encoding(name)


def count_tokens(text: str, model: str | None = None) -> int:
    """Number of BPE tokens in ``text`` for ``model`` (default o200k)."""
    if not text:
        return 0
    enc = get_encoding(encoding_name_for(model))
    try:
        return int(enc.count(text))  # = len(encode_ordinary(text)), without building the ids
    except (UnicodeEncodeError, ValueError, TypeError):  # lone surrogates
        return int(enc.count(text.encode("utf-8", "replace").decode("utf-8", "replace")))


def count_many(texts: list[str], model: str | None = None) -> list[int]:
    """Token counts of many texts (encoded in parallel by the tokenizer)."""
    if not texts:
        return []
    enc = get_encoding(encoding_name_for(model))
    try:
        _ids, offsets = enc.encode_batch(texts)  # doc i is ids[offsets[i]:offsets[i + 1]]
    except (UnicodeEncodeError, ValueError, TypeError):
        return [count_tokens(t, model) for t in texts]
    bounds = offsets.tolist()
    return [bounds[i + 1] - bounds[i] for i in range(len(texts))]


def warm_up() -> None:
    """Load the default encoding now. It takes ~0.6 s and holds the GIL (the
    whole process stalls), so hosts call it when idle, never on a hot path."""
    get_encoding()

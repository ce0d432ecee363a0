"""Token counting in-process: the real BPE, the model's encoding, odd input."""

from __future__ import annotations

import threading

from tooldeck.tokens import count_many, count_tokens, encoding_name_for, get_encoding


def test_count_tokens_is_the_real_bpe() -> None:
    enc = get_encoding("o200k_base")
    text = "def hello(name: str) -> str:\n    return f'hi {name}'\n"
    assert count_tokens(text) == len(enc.encode_ordinary(text))
    assert enc.decode(enc.encode_ordinary(text)) == text
    assert count_tokens("") == 0
    assert count_many([text, "x", ""]) == [count_tokens(text), 1, 0]


def test_model_to_encoding() -> None:
    assert encoding_name_for("gpt-4o-mini") == "o200k_base"
    assert encoding_name_for("openai/gpt-4.1") == "o200k_base"
    assert encoding_name_for("gpt-4-turbo") == "cl100k_base"
    assert encoding_name_for("gpt-3.5-turbo") == "cl100k_base"
    assert encoding_name_for("claude-sonnet") == "o200k_base"  # documented approximation
    assert encoding_name_for(None) == "o200k_base"


def test_count_tokens_survives_lone_surrogates_and_threads() -> None:
    assert count_tokens("file-\udcff-name") > 0
    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(count_tokens("same text " * 50))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1 and len(results) == 8

"""``Runtime.count_tokens`` keeps the counts of the last few large texts: a
tool that counted its whole result to fit it spares the toolbox counting it
again for the output budget (issue 35). Equal text, equal count; an
estimate (the token worker still loading) is never kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldeck import runtime as runtime_module
from tooldeck import settings as settings_module
from tooldeck.runtime import RECENT_COUNT_MIN_CHARS, RECENT_COUNTS, Runtime
from tooldeck.tokens import count_here


@pytest.fixture
def rt(tmp_path: Path) -> Runtime:
    (tmp_path / "root").mkdir()
    return Runtime.for_dirs([tmp_path / "root"], state_dir=tmp_path / "state")


def _counting(monkeypatch: pytest.MonkeyPatch, exact: bool = True) -> list[int]:
    calls: list[int] = []

    def count_texts(encoding: str, texts: list[str]) -> tuple[list[int], bool]:
        calls.append(len(texts))
        return [count_here(encoding, t) for t in texts], exact

    monkeypatch.setattr(runtime_module, "count_texts", count_texts)
    return calls


def test_a_large_text_counted_again_is_not_tokenized_again(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    text = "def f(x):\n    return x + 1\n" * (RECENT_COUNT_MIN_CHARS // 10)
    first = rt.count_tokens(text)
    assert first == count_here("o200k_base", text)
    assert rt.count_tokens("".join(list(text))) == first  # an equal string, another object
    assert calls == [1]
    assert rt.count_tokens(text + "y") != first or calls == [1, 1]
    assert len(calls) == 2


def test_only_the_last_few_are_kept(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    texts = [f"{i} " + "word " * RECENT_COUNT_MIN_CHARS for i in range(RECENT_COUNTS + 1)]
    for t in texts:
        rt.count_tokens(t)
    rt.count_tokens(texts[-1])
    assert len(calls) == RECENT_COUNTS + 1
    rt.count_tokens(texts[0])  # the oldest was dropped
    assert len(calls) == RECENT_COUNTS + 2


def test_an_estimate_is_never_kept(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch, exact=False)
    text = "x = 1\n" * RECENT_COUNT_MIN_CHARS
    rt.count_tokens(text)
    rt.count_tokens(text)
    assert len(calls) == 2


def test_a_changed_encoding_is_another_count(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    _counting(monkeypatch)
    text = "Привет мир " * RECENT_COUNT_MIN_CHARS  # 3 tokens in o200k, 5 in cl100k
    o200k = rt.count_tokens(text)
    real = settings_module.setting
    monkeypatch.setattr(  # the name the runtime reads the setting through
        runtime_module, "setting", lambda r, key: "cl100k_base" if key == "tokens.encoding" else real(r, key)
    )
    assert rt.count_tokens(text) == count_here("cl100k_base", text) != o200k

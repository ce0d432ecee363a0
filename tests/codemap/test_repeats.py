"""Repeated long texts in a codemap are shown once and referenced after."""

from __future__ import annotations

import random

from tooldeck.codemap import repeats
from tooldeck.codemap.extract import extract
from tooldeck.codemap.model import Codemap
from tooldeck.codemap.render import render

MODELS = "Literal[" + ",".join(f'"model-{i}"' for i in range(12)) + "]"

GENERATED = f"""
from typing import Literal, Union, overload

class Client:
    @overload
    def create(self, *, model: Union[{MODELS}, str], stream: Literal[False] = False) -> str: ...
    @overload
    def create(self, *, model: Union[{MODELS}, str], stream: Literal[True]) -> bytes: ...
    def create(self, *, model: Union[{MODELS}, str], stream: bool = False) -> str | bytes:
        return ""

class AsyncClient:
    async def create(self, *, model: Union[{MODELS}, str], stream: bool = False) -> str | bytes:
        return ""
"""


def _map(src: str) -> str:
    payload = extract("python", src.encode())
    return render(Codemap("gen.py", "python", payload.imports, payload.symbols, payload.references, "h", payload.lines))


def test_a_repeated_annotation_is_shown_once_and_every_name_stays() -> None:
    shown = _map(GENERATED)
    assert shown.count('"model-11"') == 1  # four copies before
    rows = [r for r in shown.splitlines() if "create" in r]
    assert len(rows) == 4
    assert all("create(" in r or "create«" in r for r in rows)  # the name on every line
    assert "«1=Union[Literal[" in rows[0]
    assert "model:«1»" in rows[1] and "model:«1»" in rows[2]
    assert rows[2].endswith("create«2=(*,model:«1»,stream:bool=False)»->str|bytes")
    assert rows[3].endswith("async create«2»->str|bytes")  # the async twin: the same parameters


def test_expanding_gives_the_unfolded_rows_back() -> None:
    folded = _map(GENERATED).splitlines()
    plain = [r.replace("«", "").replace("»", "") for r in folded]
    assert plain != folded
    full = repeats.expand(folded)
    assert sum(r.count('"model-11"') for r in full) == 4
    assert not any("«" in r or "»" in r for r in full)
    for row in full:
        if "create" in row:
            assert f"model:Union[{MODELS},str]" in row


def test_short_or_single_texts_are_left_as_written() -> None:
    rows = ["f(a:List[int])->None", "g(a:List[int])->None", f"h(x:{MODELS})"]
    assert repeats.fold(rows) == rows  # the short one repeats, the long one does not


def test_brackets_inside_strings_do_not_open_spans() -> None:
    long_value = '"[' + "x" * 80 + '"'
    rows = [f"f(a:str={long_value})->None", f"g(a:str={long_value})->None"]
    folded = repeats.fold(rows)
    assert folded[1].startswith("g«1»")  # the whole parameter list repeats: the string's `[` did not count
    assert repeats.expand(folded) == rows


def test_nested_repeats_keep_their_own_labels() -> None:
    inner = "Literal[" + ",".join(f'"v{i}"' for i in range(20)) + "]"
    rows = [
        f"a(x:Union[{inner},int],y:bool)",
        f"b(x:Union[{inner},int],z:bool)",
        f"c(x:Dict[str,{inner}])",
    ]
    folded = repeats.fold(rows)
    assert folded[1] == "b(x:«1»,z:bool)"
    assert folded[2] == "c(x:Dict[str,«2»])"
    assert folded[0].count("«") == 2  # the outer label and the inner one
    assert repeats.expand(folded) == rows


def test_fold_then_expand_is_the_identity_on_random_rows() -> None:
    rng = random.Random(14)
    parts = [MODELS, "Optional[Dict[str,List[int]]]", "Callable[[int,str],Awaitable[None]]", '"[("', "x"]
    for _ in range(200):
        rows = []
        for _ in range(rng.randint(1, 6)):
            params = ",".join(f"p{i}:{rng.choice(parts)}" for i in range(rng.randint(0, 4)))
            rows.append(f"f{rng.randint(0, 3)}({params})->{rng.choice(parts)}")
        assert repeats.expand(repeats.fold(rows)) == rows


def test_rows_holding_the_marks_already_are_not_folded() -> None:
    shown = _map(GENERATED.replace("stream: bool = False", 'stream: str = "«1»"'))
    assert shown.count('"model-11"') == 4

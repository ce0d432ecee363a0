"""Reading a task description for retrieval: which identifiers, paths and
words it names.

Commit messages and task descriptions mix prose ("fix the retry when the
connection drops") with code names (``HTTPAdapter``, ``max_retries``,
``utils.py``). Code names are matched exactly against the symbol index and
paths; words are matched case-insensitively against paths and content, weighted
by rarity later. Nothing here touches the disk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[./:-][A-Za-z0-9_]+)*")
_CAMEL_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

STOPWORDS = frozenset(
    "a about above after again against all also am an and any are as at be because been before being below "
    "between both but by can could did do does doing down during each few for from further had has have having "
    "he her here hers him his how i if in into is it its itself just let me more most my no nor not now of off "
    "on once only or other our out over own same she should so some such than that the their them then there "
    "these they this those through to too under until up very was we were what when where which while who whom "
    "why will with would you your add added adds adding fix fixed fixes fixing use used uses using make makes "
    "made new old update updated updates change changed changes changing remove removed removes support "
    "supports allow allows instead like via get set also into when now more less should must need needs one "
    "two way ways work works case cases thing things file files code test tests issue bug bugs version release "
    "merge pull request see note e g ie etc default".split()
)
# Words every program is full of: they say nothing about which file a task needs.
CODE_WORDS = frozenset(
    "self cls def class return import from none true false null nil function func fn const var let public "
    "private protected static void int str string bool float double char long async await yield lambda pass "
    "raise try except finally catch throw throws new this super else elif while for break continue switch "
    "type types value values data result results args kwargs param params object list dict tuple map err "
    "error nil println printf print len range assert".split()
)


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    identifiers: tuple[str, ...] = field(default=())  # code-like names, as written
    paths: tuple[str, ...] = field(default=())  # path-like tokens (a/b.py, b.py)
    words: tuple[str, ...] = field(default=())  # lowercase keywords (subwords of identifiers included)
    names: tuple[str, ...] = field(default=())  # other words as written (``Pager``), to look up as symbols

    @property
    def terms(self) -> tuple[str, ...]:
        """Everything worth looking for lexically, most specific first."""
        seen: dict[str, None] = {}
        for t in (*self.identifiers, *self.words):
            seen.setdefault(t, None)
        return tuple(seen)


def is_code_like(token: str) -> bool:
    """``snake_case``, ``CamelCase``, ``mixedCase``, dotted names, ALLCAPS_CONST."""
    if "_" in token.strip("_") or "." in token:
        return True
    if any(c.isupper() for c in token[1:]) and any(c.islower() for c in token):
        return True
    return token.isupper() and len(token) >= 3


def subwords(identifier: str) -> list[str]:
    """``HTTPAdapter.send_request`` → ["http", "adapter", "send", "request"]."""
    # one pass over the whole name: a match holds only ASCII letters and digits, and its lookahead
    # only letters, so the separators (``._:/-``) split nothing a match could span
    return [w for w in map(str.lower, _CAMEL_SPLIT.findall(identifier)) if len(w) >= 3 and not w.isdigit()]


def parse_query(text: str) -> Query:
    identifiers: dict[str, None] = {}
    paths: dict[str, None] = {}
    words: dict[str, None] = {}
    names: dict[str, None] = {}
    for raw in _TOKEN.findall(text):
        token = raw.strip(".:-/")
        if not token:
            continue
        if "/" in token or ("." in token and token.rsplit(".", 1)[-1].lower() in _EXTENSIONS):
            paths.setdefault(token, None)
            for w in subwords(token.rsplit(".", 1)[0]):
                if w not in STOPWORDS and w not in CODE_WORDS:
                    words.setdefault(w, None)
            continue
        if is_code_like(token):
            identifiers.setdefault(token, None)
            for part in re.split(r"[./:-]", token):
                if part and is_code_like(part):
                    identifiers.setdefault(part, None)
            for w in subwords(token):
                if w not in STOPWORDS and w not in CODE_WORDS:
                    words.setdefault(w, None)
            continue
        low = token.lower()
        if len(low) >= 3 and low not in STOPWORDS and low not in CODE_WORDS and not low.isdigit():
            words.setdefault(low, None)
            names.setdefault(token, None)
            single = low[:-1]
            if len(low) > 4 and low.endswith("s") and not low.endswith("ss") and single not in CODE_WORDS:
                words.setdefault(single, None)  # crude plural folding: "sessions" → "session"
    # a bare word that names a path ("cli", "README") counts as a word; a
    # word that is also a code identifier's subword keeps one entry
    return Query(text, tuple(identifiers), tuple(paths), tuple(words), tuple(names))


_EXTENSIONS = frozenset(
    "py pyi js jsx ts tsx mjs cjs go rs java c h cc cpp hpp cs rb php swift kt kts sh bash scala ml mli md rst "
    "txt toml yaml yml json cfg ini lock html css scss sql".split()
)

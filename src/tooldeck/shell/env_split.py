"""``env -S STRING``: split STRING into words the way GNU env does.

Why: ``env -S 'rm v'`` (also ``-iS``, ``-Srm``, ``--split-string=...``) runs
``rm v``; the policy must see those words, not one opaque string. The rules
(coreutils' env.c, ``parse_split_string``): blanks separate words; single
quotes keep everything but ``\\'`` and ``\\\\``; double quotes and bare text
know the escapes ``\\c \\f \\n \\r \\t \\v \\# \\$ \\_ \\" \\' \\\\``; ``\\_`` is a
separator outside quotes and a space inside; ``#`` at the start of a word
ends the string; ``\\c`` ends it too. ``${NAME}`` takes its value from the
environment, which tooldeck does not know at decision time, so a string
that expands a variable (or has any escape env rejects) cannot be split
here: :class:`SplitError`.
"""

from __future__ import annotations

_ESCAPES = {"f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "#": "#", "$": "$", '"': '"', "'": "'", "\\": "\\"}


class SplitError(ValueError):
    pass


def split_string(text: str) -> list[str]:
    words: list[str] = []
    cur: list[str] = []
    in_word = False
    quote: str | None = None
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if quote == "'":
            if c == "'":
                quote = None
            elif c == "\\" and i + 1 < n and text[i + 1] in "'\\":
                cur.append(text[i + 1])
                i += 1
            else:
                cur.append(c)
        elif c == "$":
            raise SplitError("env -S expands ${NAME} from an environment tooldeck cannot see")
        elif c == "\\":
            if i + 1 >= n:
                raise SplitError("a trailing backslash")
            e = text[i + 1]
            i += 1
            if e == "c":
                if quote:
                    raise SplitError("\\c inside double quotes")
                break
            if e == "_":
                if quote:
                    cur.append(" ")
                else:
                    if in_word:
                        words.append("".join(cur))
                    cur, in_word = [], False
                    i += 1
                    continue
            elif e in _ESCAPES:
                cur.append(_ESCAPES[e])
            else:
                raise SplitError(f"invalid escape \\{e}")
            in_word = True
        elif quote == '"':
            if c == '"':
                quote = None
            else:
                cur.append(c)
        elif c in " \t\n\v\f\r":
            if in_word:
                words.append("".join(cur))
            cur, in_word = [], False
        elif c == "#" and not in_word:
            break
        elif c in "'\"":
            quote, in_word = c, True
        else:
            cur.append(c)
            in_word = True
        i += 1
    if quote:
        raise SplitError("an unterminated quote")
    if in_word:
        words.append("".join(cur))
    return words

"""Python ``ast`` objects built one thread at a time.

CPython 3.11 counts the AST constructor's recursion depth in the
interpreter's state, not the thread's. When two threads turn a parse into
``ast`` objects at once (``ast.parse``, ``ast.literal_eval``, and so numpy's
``.npy`` header reader) and the collector runs a finalizer in the middle of
one (which lets the other thread run), the count is corrupted and the call
fails with ``SystemError: AST constructor recursion depth mismatch``. The
suite saw it: a search's ``np.load`` beside another thread's parse. Every
such call of tooldeck takes :data:`AST_LOCK` (calls made by other libraries
in other threads are not covered; tooldeck makes none of them concurrently).
"""

from __future__ import annotations

import ast
import threading

AST_LOCK = threading.Lock()


def parse(text: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse`` under :data:`AST_LOCK`."""
    with AST_LOCK:
        return ast.parse(text, filename=filename)

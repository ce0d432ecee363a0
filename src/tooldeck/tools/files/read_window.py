"""read_file's window: which lines its arguments (``read_args.ReadArgs``) ask
for, rendered with the header and the truncation note; shared by the in-memory path (``read.py``)
and the streamed path for large files (``read_large.py``), which import this
module and not each other."""

from __future__ import annotations

from tooldeck.core.errors import invalid_arguments
from tooldeck.tools.files.read_args import ReadArgs

MAX_BYTES = 380_928


def split_lines(text: str) -> list[str]:
    """Lines without their ``\\n`` (only ``\\n`` separates lines; a trailing
    newline does not make an extra empty line)."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def window(shown: str, total: int, args: ReadArgs) -> tuple[int, int]:
    """The 0-based line range ``[start, end)`` the arguments ask for."""
    count = args.line_count if args.line_count is not None else args.limit
    if args.start_line is not None and args.start_line < 0:
        start = max(0, total + args.start_line)
    elif args.start_line is not None:
        start = args.start_line - 1
    else:
        start = args.offset or 0
    if start >= total and total > 0:
        field = "offset" if args.offset is not None else "start_line"
        raise invalid_arguments(
            f"field `{field}`: line {start + 1} is past the end of {shown} (total_lines={total}); "
            f"start at a line ≤ {total}",
            field=field,
        )
    return start, total if count is None else min(total, start + count)


def render(shown: str, text: str, digest: str, args: ReadArgs) -> str:
    lines = split_lines(text)
    total = len(lines)
    start, end = window(shown, total, args)
    return render_window(shown, lines[start:end], start, end, total, digest)


def render_window(shown: str, lines: list[str], start: int, end: int, total: int, digest: str) -> str:
    """The output for lines ``start..end`` of a file of ``total`` lines.
    ``lines`` begins at line ``start``; it may stop early (a streamed read
    holds only what can be shown) as long as it reaches past ``MAX_BYTES``."""
    lines = lines[: end - start]
    body: list[str] = []
    used = 0
    shown_end = start
    cut_line = False
    joined = "\n".join(lines)
    # fast path: the whole range fits (one encode instead of one per line)
    if len(lines) == end - start and (len(joined) * 4 < MAX_BYTES or len(joined.encode("utf-8")) + 1 <= MAX_BYTES):
        header = f"{shown}:{start + 1 if end > start else start}-{end} [total_lines={total}] [hash={digest}]"
        return header + "\n" + joined
    for k, line in enumerate(lines):
        i = start + k
        cost = len(line.encode("utf-8")) + 1
        if used + cost > MAX_BYTES:
            if not body:  # one huge line: keep its head, cut at a character boundary
                head = line.encode("utf-8")[:MAX_BYTES].decode("utf-8", "ignore")
                body.append(head)
                shown_end = i + 1
                cut_line = True
            break
        body.append(line)
        used += cost
        shown_end = i + 1
    first = start + 1 if shown_end > start else start
    header = f"{shown}:{first}-{shown_end} [total_lines={total}] [hash={digest}]"
    out = header + "\n" + "\n".join(body)
    more = end - shown_end
    if more > 0 or cut_line:
        note = f"[File truncated: {more} more lines not shown]"
        if cut_line:
            note = f"[File truncated: line {shown_end} cut at {MAX_BYTES} bytes; {more} more lines not shown]"
        out += "\n---\n" + note
    return out

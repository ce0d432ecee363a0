"""Server-rendered HTML for the dashboard: plain markup, a little CSS, one script.

Why no front-end build: the dashboard must work on a fresh machine from the
Python package alone. Each live region is an element with an id that the
script refreshes from a ``/fragment/...`` URL when the event stream says
something changed, so the server owns all rendering.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from html import escape
from typing import Any

from tooldeck.agents.audit import AuditEntry
from tooldeck.selection.types import Breakdown
from tooldeck.state.agent_sessions import ItemRow, SessionRow
from tooldeck.state.chats import ChatMessage, ChatRow

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:10px 20px;display:flex;gap:18px;align-items:center}
header a{color:#cfd6e4;text-decoration:none}header a.on{color:#fff;font-weight:600}
header b{margin-right:12px}main{padding:16px 20px;max-width:1200px}
table{border-collapse:collapse;width:100%;background:#fff}th,td{padding:6px 8px;border-bottom:1px solid #e4e7ec;
text-align:left;vertical-align:top}th{background:#eef1f5;font-weight:600}td.num,th.num{text-align:right}
.status{font-weight:600}.s-running{color:#1d6fd6}.s-waiting_for_input{color:#b26a00}.s-completed{color:#1b8a3a}
.s-failed,.s-cancelled{color:#c0392b}.s-expired{color:#777}
.item{background:#fff;border:1px solid #e4e7ec;border-radius:6px;margin:8px 0;padding:8px 10px}
.item h4{margin:0 0 4px;font-size:12px;text-transform:uppercase;color:#667}
.item.user{border-left:4px solid #1d6fd6}.item.assistant{border-left:4px solid #1b8a3a}
.item.call{border-left:4px solid #8e44ad}.item.result{border-left:4px solid #95a5a6}
.item.error{border-left-color:#c0392b}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font:12px/1.4 ui-monospace,monospace}
.muted{color:#778}.err{color:#c0392b}.ok{color:#1b8a3a}
"""

SCRIPT = """
(function(){
  const live = document.querySelectorAll('[data-fragment]');
  if (!live.length || !window.EventSource) return;
  let timer = null;
  const refresh = () => { timer = null; live.forEach(async el => {
      const r = await fetch(el.dataset.fragment, {credentials: 'same-origin'});
      if (r.ok) el.innerHTML = await r.text(); }); };
  const es = new EventSource('/events');
  es.addEventListener('session', ev => {
    const snap = JSON.parse(ev.data);
    const only = document.body.dataset.session;
    if (only && only !== snap.session_id) return;
    if (!timer) timer = setTimeout(refresh, 150);
  });
  window.addEventListener('beforeunload', () => es.close());
})();
"""

NAV = (("/", "Sessions"), ("/selection", "Selection"), ("/chats", "Chats"), ("/audit", "Audit"))


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S")


def page(title: str, active: str, body: str, *, session: str | None = None) -> str:
    nav = "".join(f'<a href="{href}" class="{"on" if href == active else ""}">{name}</a>' for href, name in NAV)
    data = f' data-session="{escape(session)}"' if session else ""
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)} · tooldeck</title>"
            f"<style>{CSS}</style></head><body{data}><header><b>tooldeck</b>{nav}</header><main>"
            f"<h2>{escape(title)}</h2>{body}</main><script>{SCRIPT}</script></body></html>")  # fmt: skip


def status_cell(status: str) -> str:
    return f'<span class="status s-{escape(status)}">{escape(status)}</span>'


def sessions_table(rows: list[tuple[SessionRow, dict[str, Any]]]) -> str:
    if not rows:
        return '<p class="muted" id="no-sessions">No agent sessions yet. Start one with agent_run op=start.</p>'
    out = ['<table id="sessions-table"><thead><tr><th>Session</th><th>Status</th><th>Activity</th>'
           '<th class=num>Items</th><th>Model</th><th>Updated</th></tr></thead><tbody>']  # fmt: skip
    for row, snap in rows:
        sid = escape(row.id)
        out.append(
            f'<tr data-session-id="{sid}"><td><a href="/sessions/{sid}">{escape(row.name)}</a><br>'
            f'<span class="muted">{sid}</span></td><td class="status-cell">{status_cell(snap["status"])}</td>'
            f'<td>{escape(snap["status_text"][:120])}</td><td class=num>{snap["transcript_item_count"]}</td>'
            f'<td>{escape(row.model or "")}</td><td>{_when(row.updated)}</td></tr>'
        )
    out.append("</tbody></table>")
    return "".join(out)


def _pretty(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return text


def transcript(row: SessionRow, snap: dict[str, Any], items: list[ItemRow]) -> str:
    head = (f'<p>Status: <span id="session-status">{status_cell(snap["status"])}</span> '
            f'<span class="muted">{escape(snap["status_text"])}</span>'
            + (f' · failure_reason: <b class="err">{escape(snap["failure_reason"])}</b>'
               if snap.get("failure_reason") else "")
            + f' · model {escape(row.model or "")} · {len(items)} items</p>')  # fmt: skip
    if snap.get("interaction"):
        i = snap["interaction"]
        head += f'<p class="item" id="interaction">Waiting for {escape(i["kind"])} <b>{escape(i["id"])}</b>: ' \
                f'{escape(i["prompt"])}</p>'  # fmt: skip
    blocks = [head, '<div id="transcript">']
    for it in items:
        if it.kind == "message":
            blocks.append(f'<div class="item {escape(it.role or "")}"><h4>{escape(it.role or "")}</h4>'
                          f"<pre>{escape(it.text)}</pre></div>")  # fmt: skip
        elif it.kind == "reasoning":
            blocks.append(f'<div class="item"><h4>reasoning</h4><pre class="muted">{escape(it.text)}</pre></div>')
        elif it.kind == "call":
            blocks.append(f'<div class="item call"><h4>tool call · {escape(it.name or "")}</h4>'
                          f"<pre>{escape(_pretty(it.text))}</pre></div>")  # fmt: skip
        else:
            cls = "result error" if it.is_error else "result"
            label = "tool error" if it.is_error else "tool result"
            blocks.append(f'<div class="item {cls}"><h4>{label} · {escape(it.name or "")}</h4>'
                          f"<pre>{escape(it.text[:20000])}</pre></div>")  # fmt: skip
    blocks.append("</div>")
    return "".join(blocks)


def selection_view(bd: Breakdown, prompt: str) -> str:
    if not bd.files:
        files = '<p class="muted">Nothing selected. Use manage_selection to add files.</p>'
    else:
        rows = "".join(f'<tr><td>{escape(f.shown)}</td><td>{escape(f.mode)}{" (auto)" if f.auto else ""}</td>'
                       f'<td class=num>{f.tokens:,}</td><td class="muted">{escape(f.status or "")}</td></tr>'
                       for f in bd.files)  # fmt: skip
        files = (f'<table id="selection-table"><thead><tr><th>File</th><th>Mode</th><th class=num>Tokens</th>'
                 f"<th></th></tr></thead><tbody>{rows}</tbody></table>")  # fmt: skip
    totals = (f'<p>Total <b id="selection-total">{bd.total:,}</b> tokens: files {sum(f.tokens for f in bd.files):,}'
              f", prompt {bd.prompt:,}, tree {bd.tree:,}, framing {bd.framing:,}.</p>")  # fmt: skip
    shown_prompt = f"<h3>Prompt</h3><pre>{escape(prompt)}</pre>" if prompt.strip() else ""
    return totals + files + shown_prompt


def chats_table(rows: list[ChatRow]) -> str:
    if not rows:
        return '<p class="muted">No chats yet. Use chat_send.</p>'
    body = "".join(f'<tr><td><a href="/chats/{escape(r.id)}">{escape(r.name)}</a></td><td class=num>'
                   f"{r.message_count}</td><td>{escape(r.model or '')}</td><td>{_when(r.updated)}</td></tr>"
                   for r in rows)  # fmt: skip
    return (f'<table id="chats-table"><thead><tr><th>Chat</th><th class=num>Messages</th><th>Model</th>'
            f"<th>Updated</th></tr></thead><tbody>{body}</tbody></table>")  # fmt: skip


def chat_view(msgs: list[ChatMessage]) -> str:
    out = []
    for m in msgs:
        extra = ""
        if m.diffs:
            extra = ('<p class="ok">edits applied: ' + escape(", ".join(m.diffs.get("modified", []) +
                     m.diffs.get("added", []))) + "</p>") if m.diffs.get("applied") else \
                f'<p class="err">edits not applied: {escape(str(m.diffs.get("error", ""))[:300])}</p>'  # fmt: skip
        out.append(f'<div class="item {escape(m.role)}"><h4>{escape(m.role)} · {escape(m.mode)}</h4>'
                   f"<pre>{escape(m.text)}</pre>{extra}</div>")  # fmt: skip
    return "".join(out) or '<p class="muted">(empty)</p>'


def audit_table(entries: list[AuditEntry]) -> str:
    if not entries:
        return '<p class="muted">No tool calls yet.</p>'
    body = "".join(
        f'<tr><td>{_when(e.at)}</td><td>{escape(e.source)}</td><td>{escape(e.tool)}</td>'
        f'<td><pre>{escape(e.arguments)}</pre></td><td class="{"ok" if e.ok else "err"}">'
        f'{"ok" if e.ok else escape(e.code or "error")}</td><td class=num>{e.ms:.1f}</td></tr>'
        for e in entries
    )
    return (f'<table id="audit-table"><thead><tr><th>When (UTC)</th><th>Caller</th><th>Tool</th><th>Arguments</th>'
            f"<th>Result</th><th class=num>ms</th></tr></thead><tbody>{body}</tbody></table>")  # fmt: skip

"""``tooldeck chat``: the interactive terminal host (Textual), local or connected.

A host beside ``mcp/``, ``chatmd/``, the CLI and the dashboard (SPEC §1): it
imports none of them. The ChatMD engine it drives is reached through one
bridge, :mod:`tooldeck.tui.engine`; connected mode speaks MCP to a running
``tooldeck serve --http`` with the SDK's own client.

One module per concern:

* ``engine.py``: the bridge to the ChatMD engine (parse, prepare, transcript);
* ``worker.py``: the engine's own thread and event loop (the UI loop only draws);
* ``events.py``: what a backend tells the UI;
* ``local.py``: the native host (the model loop in this process);
* ``remote.py`` + ``links.py``: connected mode (an agent session on the server;
  which file follows which session);
* ``blocks.py`` (what a message looks like), ``view.py`` (the virtualised
  transcript), ``composer.py`` (the input box), ``ask.py`` (approvals and
  questions), ``status.py`` (the status line), ``app.py`` (the screen).
"""

"""ChatMD host: the ``.chatmd`` prompt format, its parser, and the model loop runner.

Pipeline, one module per stage:

* ``parser.py``: text -> :class:`~tooldeck.markup.element.Element` (no I/O);
* ``document.py``: a file -> a Document with its ``<import>``s spliced;
* ``declarations.py``: ``<tool>`` elements -> a Toolbox (``external.py``
  hooks the shell runtime and MCP mounts; ``agents.py`` agent tools and fork);
* ``conversation.py``: messages -> :mod:`tooldeck.llm` items;
* ``session.py``: all of the above plus ``<config>`` -> a Session ready to run;
* ``runner.py``: ``tooldeck run`` (``transcript.py`` appends, ``display.py`` shows).

Authority (SPEC §3) runs through every stage: ``grants.py`` decides, per file
and on the bytes parsed, whether a file may ask for it; ``asks.py`` names what
each declaration asks; ``record.py`` keeps what ``tooldeck run`` honoured in a
transcript, so a declaration the model adds during a run is refused next time.
"""

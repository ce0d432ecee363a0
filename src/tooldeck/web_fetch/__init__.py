"""Fetching web pages for models: policy (what may be reached), fetch (I/O),
convert (HTML → Markdown), github (blob fast path), service (cache)."""

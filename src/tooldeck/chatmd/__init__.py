"""ChatMD host: the ``.chatmd`` prompt format, its parser, and the model loop runner."""

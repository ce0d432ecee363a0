"""llm: OpenAI-compatible model access and the model -> tools -> model loop.

Independent of ChatMD: a caller builds a list of items
(:mod:`tooldeck.llm.types`), a :class:`~tooldeck.llm.provider.Provider`
(:func:`tooldeck.llm.settings.resolve_model`) and a Toolbox, and calls
:func:`tooldeck.llm.loop.run_conversation`.
"""

"""The built-in catalog, one package per domain. Each domain package exposes
``tools(runtime) -> list[Tool]``; :mod:`tooldeck.catalog` assembles them."""

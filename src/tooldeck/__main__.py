"""``python -m tooldeck`` is the ``tooldeck`` command."""

from tooldeck.cli import main

main()

"""``python -m tooldeck`` is the ``tooldeck`` command."""

from tooldeck.launch import main

main()

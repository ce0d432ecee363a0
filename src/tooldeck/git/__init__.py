"""Git service: run git safely and parse what it prints.

No tool or host imports here: ``runner`` (argv, environment, errors),
``repo`` (finding a checkout, worktrees, resolving revisions), ``compare``
(compare specs → diff arguments), ``changes`` (changed files and patches),
``status``, ``history`` (log, show, blame) and ``artifacts`` (diff snapshots
on disk). The ``git`` tool in :mod:`tooldeck.tools.git` renders them.
"""

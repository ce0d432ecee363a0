"""Shell service (SPEC §4 Shell, seed 000): runtimes, policy, sandbox, limits, audit.

Pipeline, one module per stage: ``profiles`` (runtime data and built-ins) →
``declare``/``spec`` (TOML and ChatMD declarations, via ``toml_decl`` and
``chatmd_decl``) → ``chain`` (the chain-mode grammar) → ``wrappers`` and
``policy`` (what would run, and allow/ask/deny) → ``approval`` (ask the host)
→ ``sandbox`` (the bubblewrap command line) → ``execute`` (pipes, limits,
killing the tree; ``cgroup``) → ``shaping``/``render`` (bounded, clean,
redacted output) with ``audit`` recording each step. ``service`` runs one
request through all of it; ``tool_factory`` makes model-facing tools.
"""

"""Defence in depth for git in every command's environment (``GIT_CONFIG_*``).

The policy keeps an allow-listed ``git`` away from repositories a model could
have made (:mod:`tooldeck.shell.git_args`), but a command the person
approved, or a runtime whose default is ``allow``, may still run git in
such a repository. Configuration given through ``GIT_CONFIG_COUNT`` /
``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n`` is git's *command* scope: it
overrides every configuration file and counts as protected configuration.

What is set, and why each cannot break ordinary git use:

* ``core.fsmonitor=false``: the fsmonitor hook is a command git runs on
  ``status``/``diff``; the setting only ever makes git faster.
* ``safe.bareRepository=explicit``: git no longer treats a directory that
  merely looks like a bare repository (``HEAD``, ``objects/``, ``refs/`` — files
  a model can write) as one; ``--git-dir`` still opens a bare repository.
* ``core.hooksPath=/dev/null`` (sandboxed runs only): no hook runs. In the
  sandbox the roots' own ``.git`` is read-only, so git can only write — and
  so only ever fire hooks in — repositories made inside a write root, which
  are exactly the ones whose hooks a model could have planted. Unsandboxed
  runtimes (``sandbox.mode = "off"``, the person's own choice) keep their
  hooks.

Not set: ``protocol.allow=never`` (it would break fetch and clone in a
runtime given the network; ``ext::`` transports are already off by
default), ``core.pager`` (no pager runs without a terminal).

The entries are appended after any the runtime sets itself, so they win.
"""

from __future__ import annotations

ALWAYS: tuple[tuple[str, str], ...] = (("core.fsmonitor", "false"), ("safe.bareRepository", "explicit"))
SANDBOXED: tuple[tuple[str, str], ...] = (("core.hooksPath", "/dev/null"),)


def harden(env: dict[str, str], *, sandboxed: bool) -> dict[str, str]:
    """``env`` with tooldeck's git settings appended to its ``GIT_CONFIG_*``."""
    out = dict(env)
    try:
        n = max(0, int(out.get("GIT_CONFIG_COUNT", "0")))
    except ValueError:
        n = 0
    for key, value in (*ALWAYS, *(SANDBOXED if sandboxed else ())):
        out[f"GIT_CONFIG_KEY_{n}"] = key
        out[f"GIT_CONFIG_VALUE_{n}"] = value
        n += 1
    out["GIT_CONFIG_COUNT"] = str(n)
    return out

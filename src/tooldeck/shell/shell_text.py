"""A shell invoked as a wrapper: which text it runs, and what that text runs.

``bash --rcfile ls -c 'rm v'`` runs ``rm v``, not ``ls``: a shell's options
are read the way bash and dash read them (long options first, values of
``--rcfile``/``--init-file``/``-o``/``-O``/``+O`` skipped, clustered letters,
``-c`` anywhere in a cluster), so the text after them is the one inspected.
The text is parsed with the chain grammar, and a text that needs more than
the grammar has — ``if``/``for``/``case``, builtins such as ``alias``,
``hash``, ``export``, ``cd`` or ``trap``, redirections, expansions — is
refused as arbitrary code rather than approximated: a command the policy
cannot read must not run as something it did not judge. ``-l``/``-i``
startup files come from the system and from ``HOME`` (the sandbox's own
``/tmp``, new for every command); an interactive shell given
``--rcfile FILE`` would run FILE, and is refused.

Only POSIX shells (sh, bash, dash, ash) have their text read; zsh, ksh,
fish, csh... have syntax of their own (``=rm`` is a path in zsh), so their
``-c`` text is arbitrary code.
"""

from __future__ import annotations

from tooldeck.shell.argscan import OPEN
from tooldeck.shell.chain import ChainSyntaxError, parse_chain

POSIX_SHELLS = frozenset({"sh", "bash", "dash", "ash"})
SHELLS = POSIX_SHELLS | frozenset({"zsh", "ksh", "ksh93", "mksh", "pdksh", "yash", "fish", "csh", "tcsh", "hush",
                                   "rbash", "posh", "elvish", "nu", "xonsh", "pwsh"})  # fmt: skip
RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for", "in",
                      "function", "select", "coproc", "{", "}", "!", "[[", "]]"})  # fmt: skip
# builtins that change how later commands are found or run (also if a system ships a binary of that name)
RISKY_BUILTINS = frozenset(
    {"alias", "unalias", "hash", "enable", "trap", "source", ".", "eval", "exec", "command", "builtin", "shopt",
     "set", "export", "readonly", "declare", "typeset", "local", "unset", "cd", "pushd", "popd", "read", "mapfile",
     "readarray", "let", "fc", "bind", "complete", "compgen", "umask", "ulimit", "shift", "getopts", "type",
     "wait", "jobs", "fg", "bg", "disown", "history", "dirs", "suspend", "return", "exit", "break", "continue",
     "logout", "times", "caller", "help"}
)  # fmt: skip
SAFE_BUILTINS = frozenset({":", "echo", "printf", "test", "true", "false", "pwd"})
_LONG_WITH_VALUE = frozenset({"--rcfile", "--init-file"})


def shell_body(text: str) -> tuple[list[tuple[str, ...]], str | None]:
    """The argvs a POSIX shell text runs, or why the text cannot be inspected."""
    if OPEN in text:
        return [], "shell code filled in at run time"
    try:
        argvs = parse_chain(text).argvs()
    except ChainSyntaxError as exc:
        return [], f"shell code outside the chain grammar ({exc})"
    for argv in argvs:
        if argv[0] in RESERVED:
            return [], f"`{argv[0]}` is shell syntax outside the chain grammar"
        if argv[0] in RISKY_BUILTINS:
            return [], (f"the shell builtin `{argv[0]}` changes what later commands do (run the commands "
                        "directly; the tool's cwd field sets the directory)")  # fmt: skip
    return argvs, None


def _options(name: str, args: list[str]) -> tuple[int, set[str], str | None]:
    """(index after the options, the letters given, why it is arbitrary)."""
    letters: set[str] = set()
    i = 0
    while i < len(args) and args[i].startswith("--") and args[i] != "--":
        if OPEN in args[i]:
            return i, letters, f"`{name}`'s options would be filled in at run time"
        if args[i] in _LONG_WITH_VALUE:
            letters.add("rcfile")
        i += 2 if args[i] in _LONG_WITH_VALUE else 1
    while i < len(args) and args[i][:1] in ("-", "+") and args[i] not in ("-", "--", "+"):
        word = args[i]
        if OPEN in word:
            return i, letters, f"`{name}`'s options would be filled in at run time"
        i += 1
        for c in word[1:]:
            if c in "oO":
                i += 1  # -o NAME, -O NAME, +O NAME: the value is the next word
            elif word[0] == "-":
                letters.add(c)
    if i < len(args) and args[i] in ("-", "--"):
        i += 1
    return i, letters, None


def shell_invocation(name: str, args: list[str]) -> tuple[str | None, str | None]:
    """(the ``-c`` text, why the invocation is arbitrary). Both None: the
    shell runs a script file, which the policy judges by the shell's name."""
    i, letters, why = _options(name, args)
    if why is not None:
        return None, why
    if {"i", "rcfile"} <= letters:  # interactive: the named startup file runs (login and ~/.bashrc files come
        return None, f"`{name} -i --rcfile/--init-file` runs a startup file tooldeck cannot check"  # from HOME)
    if "c" in letters:
        if i >= len(args):
            return None, f"`{name} -c` without a command reads it from elsewhere"
        if name not in POSIX_SHELLS:
            return None, f"`{name} -c` text has a syntax tooldeck does not read (only sh, bash, dash, ash)"
        return args[i], None
    if "s" in letters or i >= len(args):
        return None, f"`{name}` reading commands from its input"
    if OPEN in args[i]:
        return None, f"`{name}` would run a script named at run time"
    return None, None

#!/usr/bin/env bash
# Prepare a fresh machine for tooldeck: Debian tools it shells out to, then a
# virtual environment in .venv with tooldeck installed from the registries.
# Usage: scripts/setup.sh [--dev]   (all output goes to stderr: stdout may be MCP)
set -euo pipefail
exec 3>&1 1>&2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
extras=""
[ "${1:-}" = "--dev" ] && extras="[dev]"

need_apt=()
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
# the sandbox's seccomp filter is built by libseccomp (through PyPI pyseccomp)
{ ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep 'libseccomp\.so\.2' >/dev/null || need_apt+=(libseccomp2)
# the web dashboard's end-to-end tests drive Debian's chromium (never `playwright install`)
[ -n "$extras" ] && { command -v chromium >/dev/null 2>&1 || need_apt+=(chromium); }
# the HTTP tests reach a server off loopback inside a network namespace of their own
[ -n "$extras" ] && { command -v ip >/dev/null 2>&1 || need_apt+=(iproute2); }
if [ ${#need_apt[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need_apt[*]} with apt-get"
    $sudo apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}" || \
      echo "setup: could not install ${need_apt[*]}; features that need them will be unavailable"
  else
    echo "setup: apt-get not found; please install ${need_apt[*]}"
  fi
fi

py=""
for cand in python3 python3.13 python3.12 python3.11; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    py="$cand"; break
  fi
done
[ -n "$py" ] || { echo "setup: Python >= 3.11 is required"; exit 1; }

venv="$here/.venv"
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
stamp="$venv/.tooldeck-installed$extras"
dev_stamp="$venv/.tooldeck-installed[dev]"   # a dev install satisfies a plain one
want="$(sha256sum < "$here/pyproject.toml" | cut -c1-16)"
installed() { [ -f "$1" ] && [ "$(cat "$1")" = "$want" ]; }
# uv (from PyPI, into the venv) resolves and downloads in parallel: a fresh
# install takes seconds where pip takes half a minute; pip is the fallback.
install_python() {
  local pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
  if "${pip[@]}" uv >/dev/null 2>&1 && "$venv/bin/python" -m uv --version >/dev/null 2>&1; then
    "$venv/bin/python" -m uv pip install -q --compile-bytecode --python "$venv/bin/python" -e "$here$extras" && return 0
    echo "setup: uv could not install tooldeck$extras; trying pip"
  fi
  "${pip[@]}" -e "$here$extras"
}
if ! installed "$stamp" && ! installed "$dev_stamp"; then
  need_python=1
fi

# The reference MCP filesystem server (client-mount tests, benchmarks) and the
# agent clients tooldeck is tested inside (tests/clients: Codex CLI, Claude Code,
# Gemini CLI): installed from the npm registry into .cache/node when node is here.
# Pinned: a client update changes its wire, its config keys and what it fetches at
# start; a new version comes in by changing the pin here (and the tests passing).
node_dir="$here/.cache/node"
npm_packages=(
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@openai/codex@0.171.0"
  "@anthropic-ai/claude-code@2.1.197"
  "@google/gemini-cli@0.61.0"
)
if [ -z "$extras" ]; then
  :  # serving needs no node: only the tests and benchmarks use these packages
elif command -v npm >/dev/null 2>&1; then
  missing=()
  for spec in "${npm_packages[@]}"; do
    pkg="${spec%@*}" version="${spec##*@}"
    manifest="$node_dir/node_modules/$pkg/package.json"
    installed=""
    [ -f "$manifest" ] && installed=$(node -p "require(process.argv[1]).version" "$manifest" 2>/dev/null || true)
    [ "$installed" = "$version" ] || missing+=("$spec")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]} into $node_dir"
    mkdir -p "$node_dir"
    # in the background, while Python's packages install below
    ( npm install --prefix "$node_dir" --save-exact --prefer-offline --no-audit --no-fund --loglevel=error "${missing[@]}" \
        || echo "setup: npm install failed; the tests that need ${missing[*]} will fail until they are installed" ) &
    npm_pid=$!
  fi
else
  echo "setup: node/npm not found; the tests against the reference filesystem server and the agent clients are skipped"
fi

status=0
if [ -n "${need_python:-}" ]; then
  echo "setup: installing tooldeck$extras into $venv"
  if install_python; then echo "$want" > "$stamp"; else status=1; fi
fi
[ -z "${npm_pid:-}" ] || wait "$npm_pid" || true
exit "$status"

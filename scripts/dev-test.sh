#!/usr/bin/env bash
# While working on a change: run some test files against the dev stack, with a
# worker of their own, without the full `make test`.
#
#   scripts/dev-test.sh test/transfers.test.ts [more files or ava options]
#
# The dev stack (Temporal, MinIO, clamd, maildev) is started if it is not
# running and left running. The tests get their own database and task queue,
# named by DEV_TEST_NAME (default: the checkout's folder name), so several
# checkouts can run tests side by side on one stack. `make test` stays the
# reference: it also lints, typechecks and runs everything on a fresh stack.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
load_profile dev
[ $# -gt 0 ] || die "usage: scripts/dev-test.sh <test files…> [ava options]"

name=${DEV_TEST_NAME:-$(basename "$ROOT")}
name=$(tr -c 'a-z0-9\n' '_' <<<"${name,,}")
database="valise_devtest_$name"

choose_services
scripts/stack.sh status dev >/dev/null 2>&1 || scripts/stack.sh start dev
ensure_database "$database"
export_test_env "$database" "valise-devtest-$name"
# A dev server started before the search attributes existed gets them now (a no-op otherwise).
sh scripts/node.sh scripts/temporal-search-attributes.ts
npm run -s migrate >&2
# The web pages load the built SDK (sdk/dist), as make test builds it.
npx --no -- tsc -p sdk/tsconfig.json >&2
# And the documentation at /docs, from this checkout's guides and routes.
npm run -s build-docs >&2

# The worker runs this checkout's code; it stops with the run.
mkdir -p "$LOGS"
worker_log="$LOGS/worker-devtest-$name.log"
setsid npm run -s worker >"$worker_log" 2>&1 </dev/null &
worker=$!
trap 'kill -TERM -- "-$worker" 2>/dev/null || true; wait "$worker" 2>/dev/null || true' EXIT
log "dev-test: database $database, worker log ${worker_log#"$ROOT"/}"
npx --no -- ava "$@"

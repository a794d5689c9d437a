#!/usr/bin/env bash
# make up: the dev stack, a migrated "valise" database, the worker in the
# background and the API in the foreground. Ctrl-C or SIGTERM stops the API,
# the worker and every stack component (make down does the same from outside).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
load_profile dev

if pid=$(pid_of api); then die "make up is already running (api pid $pid); make down stops it"; fi

cleanup() {
  trap '' INT TERM # a second Ctrl-C must not cut the cleanup short
  log "up: stopping the api, the worker and the dev stack"
  scripts/stack.sh stop dev
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

scripts/setup.sh
require_machine_services
scripts/stack.sh start dev

if [ "$(psql -h 127.0.0.1 -U postgres -Atc "select 1 from pg_database where datname = 'valise'")" != 1 ]; then
  log "up: creating database valise"
  createdb -h 127.0.0.1 -U postgres valise
fi
log "up: migrating"
npm run -s migrate

# A developer's webhook receiver runs on this machine (docs/webhooks.md, "Targets").
export WEBHOOK_ALLOW_PRIVATE_TARGETS=${WEBHOOK_ALLOW_PRIVATE_TARGETS:-true}
spawn worker npm run -s worker
log "up: worker started (log ${LOGS#"$ROOT"/}/worker.log)"
# The API gets its own session too, so that the traps above, not the terminal's
# Ctrl-C, stop it (and its npm -> sh -> node children) in order. Waiting on it
# keeps it in the foreground, and a wait, unlike a foreground command, lets a
# SIGTERM trap run at once.
setsid npm run -s api &
record_pid api $!
log "up: api started (pid $!); Ctrl-C stops everything"
wait $!

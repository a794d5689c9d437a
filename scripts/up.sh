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

# A DATABASE_URL or REDIS_URL of your own is used as it is (the database must
# exist); otherwise the machine's services or the project's own.
if [ -n "${DATABASE_URL:-}" ]; then export OWN_POSTGRES=0; fi
if [ -n "${REDIS_URL:-}" ]; then export OWN_REDIS=0; fi
choose_services
scripts/setup.sh
scripts/stack.sh start dev
# The profile's own secrets (docs/configuration.md, "Local secrets"); npm run admin in another
# shell needs them too.
export_local_secrets
log "up: for npm run admin in another shell: set -a; . ${DATA#"$ROOT"/}/secrets.env; set +a"
if [ -z "${DATABASE_URL:-}" ]; then
  describe_services
  ensure_database valise
  export DATABASE_URL="postgres://postgres@127.0.0.1:$POSTGRES_PORT/valise"
fi
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:$REDIS_PORT/0}
if [ "$OWN_POSTGRES" = 1 ] || [ "$OWN_REDIS" = 1 ]; then
  # The app's defaults are the machine's ports: other commands need these.
  log "up: for npm run admin, valise and the rest in another shell: export DATABASE_URL=$DATABASE_URL REDIS_URL=$REDIS_URL"
fi
log "up: migrating"
npm run -s migrate
# The documentation the API serves at /docs (docs/web.md, "The documentation").
npm run -s build-docs

# A developer's webhook receiver runs on this machine (docs/webhooks.md, "Targets").
export WEBHOOK_ALLOW_PRIVATE_TARGETS=${WEBHOOK_ALLOW_PRIVATE_TARGETS:-true}
# VALISE_API_PROCESSES=2: scaled out on this machine, haproxy on the API's address (docs/operations.md).
if [ "${VALISE_API_PROCESSES:-1}" != 1 ]; then
  scripts/scale.sh start dev
  log "up: Ctrl-C stops everything"
  while pid_of balancer >/dev/null; do sleep 1; done
  die "up: the balancer exited (log ${LOGS#"$ROOT"/}/balancer.log)"
fi
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

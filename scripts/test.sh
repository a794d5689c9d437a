#!/usr/bin/env bash
# make test / CI: install what is missing, start a fresh test stack (its own
# ports and data, so a running dev stack is untouched), recreate and migrate
# the test database, start the worker, then lint, typecheck and run the tests;
# last, the Temporal server flavour's suite (test/temporal-server/) on the same
# stack with its Temporal switched to that flavour. VALISE_TEMPORAL=server runs
# every test on that flavour.
# The last line on stdout is always "tests: N passed, M failed" (followed by
# ", K skipped" when tests were skipped or left to do), and the exit status is
# non-zero whenever M is not 0.
#
# scripts/test.sh --faults (make test-faults): the same set-up, then every fault scenario
# (test/faults/, test/faults/long/ included) and nothing else, each printing what it injected and
# what it checked.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
load_profile test
only_faults=""
if [ "${1:-}" = --faults ]; then only_faults=yes; fi

summarized=""
finish() {
  local status=$?
  trap '' INT TERM
  # Quietly, into a log: the summary has to stay the last line.
  mkdir -p "$LOGS"
  scripts/stack.sh stop test >>"$LOGS/stop.log" 2>&1 ||
    log "warning: stopping the test stack failed; see $LOGS/stop.log"
  if [ -z "$summarized" ]; then
    log "error: the run stopped before the tests could run (status $status)"
    echo "tests: 0 passed, 1 failed"
    [ "$status" -ne 0 ] || status=1
  fi
  exit "$status"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# step <name> <command...>: a check that prints no TAP (lint, typecheck). Its
# output goes to stderr so that only TAP reaches the summary; the marker line
# lets tap-summary.mjs count a failure.
step() {
  local name=$1 status=0
  shift
  log "test: $name"
  "$@" >&2 || status=$?
  echo "# exit $name $status"
}

# The server flavour's state is its two databases, on whichever PostgreSQL runs.
drop_temporal_databases() { pg dropdb --if-exists --force "$TEMPORAL_DB" && pg dropdb --if-exists --force "$TEMPORAL_VISIBILITY_DB"; }

# The test stack's Temporal becomes the server flavour on fresh databases
# (unless it is that already: VALISE_TEMPORAL=server make test).
switch_to_temporal_server() {
  [ "$(temporal_flavour)" = server ] && return 0
  scripts/stack.sh stop test temporal
  drop_temporal_databases
  VALISE_TEMPORAL=server scripts/stack.sh start test temporal
}

worker_running() {
  pid_of worker >/dev/null && return 0
  log "the worker has exited; last lines of $LOGS/worker.log:"
  tail -n 30 "$LOGS/worker.log" >&2
  return 1
}

choose_services
scripts/setup.sh --tests
describe_services

# Every run starts from nothing: a stack left by an aborted run is stopped and
# its state (Temporal workflows, objects, captured mail, the own PostgreSQL
# cluster) wiped.
scripts/stack.sh stop test 2>/dev/null
rm -rf "$DATA" "$(postgres_data)"
if [ "$OWN_POSTGRES" = 0 ]; then drop_temporal_databases; fi
scripts/stack.sh start test

log "test: recreating database valise_test"
pg dropdb --if-exists --force valise_test
pg createdb valise_test
# The machine's Redis is shared with the dev profile: clear only the test prefix.
if command -v redis-cli >/dev/null; then
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" EVAL \
    "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end" 0 'valise-test:*' >/dev/null
fi

export_test_env valise_test valise-test

log "test: migrating"
npm run -s migrate
# The documentation the API serves at /docs, which the docs and page tests read.
log "test: building the documentation"
npm run -s build-docs >&2
spawn worker npm run -s worker
log "test: worker started (log ${LOGS#"$ROOT"/}/worker.log)"

# npx --no: never download a missing tool, fail instead.
status=0
{
if [ -n "$only_faults" ]; then
  stop_pid worker >&2
  log "test: ava, every fault scenario"
  faults_status=0
  node scripts/ava-tap.mjs --tap --config test/faults/ava.all.config.mjs || faults_status=$?
  echo "# exit faults $faults_status"
else
  # A stray test.only would drop the other tests of its file with exit status 0; a t.timeout
  # could leave a hung test unended.
  step test-files node scripts/check-tests.mjs
  step lint npx --no -- biome check .
  step typecheck npx --no -- tsc --noEmit -p tsconfig.json
  # The SDK is its own package: it must build to ESM and declarations on its own.
  step sdk-build npx --no -- tsc -p sdk/tsconfig.json
  step worker worker_running # it had the lint and typecheck time to start
  log "test: ava"
  ava_status=0
  node scripts/ava-tap.mjs --tap || ava_status=$?
  echo "# exit ava $ava_status"
  # Fault tests kill workers and restart Temporal, so they run alone, one at a
  # time, after the rest, each with the workers it starts itself.
  stop_pid worker >&2
  log "test: ava, fault tests"
  faults_status=0
  node scripts/ava-tap.mjs --tap --config test/faults/ava.config.mjs || faults_status=$?
  echo "# exit faults $faults_status"
  log "test: ava, on the Temporal server flavour"
  server_status=0
  switch_to_temporal_server >&2 &&
    node scripts/ava-tap.mjs --tap --config test/temporal-server/ava.config.mjs || server_status=$?
  echo "# exit temporal-server $server_status"
fi
} | node scripts/tap-summary.mjs || status=$?
summarized=yes
exit "$status"

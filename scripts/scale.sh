#!/usr/bin/env bash
# Scaled out on one machine: scripts/scale.sh start|stop|status dev
#
# N API processes (VALISE_API_PROCESSES, default 2) on the ports after the API's own, N workers
# (VALISE_WORKERS, default the same N; 0 when they run elsewhere), and haproxy
# (ops/haproxy/valise.cfg) on the API's address, 127.0.0.1:8080 for dev, passing the client's
# address on in X-Forwarded-For. Each process has a pid file and a log under .data/dev/ like the
# stack's, so `scripts/stack.sh stop dev` and `make down` stop them too. The dev stack must be up
# and the database migrated: make up does both, then runs this when VALISE_API_PROCESSES is above
# 1 (docs/operations.md).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

usage() { die "usage: scripts/scale.sh start|stop|status dev"; }
[ $# -eq 2 ] && [ "$2" = dev ] || usage
action=$1
load_profile dev

API_PROCESSES=${VALISE_API_PROCESSES:-2}
WORKERS=${VALISE_WORKERS:-$API_PROCESSES}
[[ "$API_PROCESSES" =~ ^[1-9][0-9]?$ ]] || die "VALISE_API_PROCESSES must be a number from 1 to 99"
[[ "$WORKERS" =~ ^[0-9]{1,2}$ ]] || die "VALISE_WORKERS must be a number from 0 (workers run elsewhere) to 99"
BALANCER_HOST=${API_HOST:-127.0.0.1}
BALANCER_PORT=${API_PORT:-8080}
# The address clients use: the links the API hands out must name the balancer, not a process.
PUBLIC_URL=${PUBLIC_BASE_URL:-http://$BALANCER_HOST:$BALANCER_PORT}
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
api_port() { echo $((BALANCER_PORT + $1)); }

# The names this script records, api-1…, worker-1… and balancer, whatever N was at start.
recorded() {
  local file
  for file in "$PIDS"/api-*.pid "$PIDS"/worker-*.pid "$PIDS"/balancer.pid; do
    [ -e "$file" ] && basename "$file" .pid
  done
  return 0
}

start() {
  [ -x "$HAPROXY" ] || die "haproxy is missing: VALISE_API_PROCESSES=2 scripts/setup.sh installs it (as root)"
  local name i pid config="$DATA/haproxy.cfg"
  for name in $(recorded); do
    if pid=$(pid_of "$name"); then die "$name is already running (pid $pid): scripts/scale.sh stop $PROFILE first"; fi
  done
  if pid=$(pid_of api); then die "a single API runs (pid $pid, make up): stop it first"; fi
  mkdir -p "$PIDS" "$LOGS"
  # As make up chose them: a DATABASE_URL or REDIS_URL of your own wins.
  choose_services
  export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:$POSTGRES_PORT/valise}
  export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:$REDIS_PORT/0}
  # make up exported the profile's secrets; started alone, the processes get them here.
  if [ -z "${VALISE_SECRET:-}" ]; then export_local_secrets; fi

  # Each process its own metrics listener (docs/operations.md, "Metrics"): the API's and the
  # worker's default ports, then every second port after them (9464, 9466… and 9465, 9467…).
  for ((i = 1; i <= WORKERS; i++)); do
    WORKER_METRICS_ADDRESS=127.0.0.1:$((9463 + 2 * i)) spawn "worker-$i" sh scripts/node.sh workers/main.ts
  done
  # Each process believes X-Forwarded-For from the balancer alone: one hop, and only from loopback.
  for ((i = 1; i <= API_PROCESSES; i++)); do
    API_HOST=127.0.0.1 API_PORT=$(api_port "$i") PUBLIC_BASE_URL=$PUBLIC_URL \
      TRUST_PROXY_HOPS=1 TRUSTED_PROXIES=127.0.0.1,::1 METRICS_ADDRESS=127.0.0.1:$((9462 + 2 * i)) \
      spawn "api-$i" sh scripts/node.sh api/main.ts
  done

  cp ops/haproxy/valise.cfg "$config"
  for ((i = 1; i <= API_PROCESSES; i++)); do
    echo "    server api-$i 127.0.0.1:$(api_port "$i")" >>"$config"
  done
  export VALISE_BALANCER_ADDRESS="$BALANCER_HOST:$BALANCER_PORT"
  "$HAPROXY" -c -q -f "$config" || die "haproxy refuses $config"
  spawn balancer "$HAPROXY" -db -f "$config"

  for ((i = 1; i <= API_PROCESSES; i++)); do wait_answers "api-$i" "http://127.0.0.1:$(api_port "$i")"; done
  wait_answers balancer "http://$BALANCER_HOST:$BALANCER_PORT"
  log "scale: $API_PROCESSES API processes (ports $(api_port 1)-$(api_port "$API_PROCESSES")) and $WORKERS workers behind haproxy on $PUBLIC_URL; logs in ${LOGS#"$ROOT"/}"
}

# wait_answers <name> <url>: until GET /v1/welcome answers, or the process is gone, or 90 s.
wait_answers() {
  local i
  for ((i = 0; i < 450; i++)); do
    pid_of "$1" >/dev/null || die "$1 exited (log ${LOGS#"$ROOT"/}/$1.log)"
    if curl -fsS --max-time 2 "$2/v1/welcome" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  die "$1 did not answer on $2 within 90 s (log ${LOGS#"$ROOT"/}/$1.log)"
}

stop() {
  local name
  # The balancer first, so no request reaches a process that is stopping.
  stop_pid balancer
  for name in $(recorded); do stop_pid "$name"; done
}

status() {
  local name pid rc=0
  for name in $(recorded); do
    if pid=$(pid_of "$name"); then echo "$name: up (pid $pid)"; else
      echo "$name: down"
      rc=3
    fi
  done
  return $rc
}

case $action in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac

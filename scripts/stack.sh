#!/usr/bin/env bash
# Local service stack for one profile: scripts/stack.sh start|stop|status dev|test
# [COMPONENT...] (all of them by default).
# Temporal, MinIO, clamd and maildev, each in the background with its pid and
# log under .data/<profile>/. Temporal is the dev server, or with
# VALISE_TEMPORAL=server the Temporal server on PostgreSQL (lib.sh,
# temporal_flavour). PostgreSQL and Redis are the machine's when it runs them,
# and otherwise the project's own, started and stopped here with the rest
# (choose_services in lib.sh).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

usage() {
  die "usage: scripts/stack.sh start|stop|status dev|test [COMPONENT...], or scripts/stack.sh restart dev|test COMPONENT"
}
[ $# -ge 2 ] || usage
action=$1
load_profile "$2"
shift 2
[ "$action" != restart ] || [ $# -eq 1 ] || usage

COMPONENTS=(temporal minio clamd maildev)
# Stopped in this order; postgres last, as the app processes stopped before it use it.
ALL_COMPONENTS=(maildev clamd minio temporal redis postgres)
if [ "$action" != stop ]; then
  choose_services
  if [ "$OWN_POSTGRES" = 1 ]; then COMPONENTS=(postgres "${COMPONENTS[@]}"); fi
  if [ "$OWN_REDIS" = 1 ]; then COMPONENTS+=(redis); fi
fi
# Components named on the command line: only those (a stop leaves the app processes alone).
ONLY=("$@")
if [ ${#ONLY[@]} -gt 0 ] && [ "$action" != restart ]; then
  for name in "${ONLY[@]}"; do
    [[ " ${ALL_COMPONENTS[*]} " == *" $name "* ]] || die "unknown component $name (${ALL_COMPONENTS[*]})"
    [ "$action" = stop ] || [[ " ${COMPONENTS[*]} " == *" $name "* ]] ||
      die "$name is not part of this stack: the machine's own is in use (VALISE_OWN_SERVICES=1 runs the project's)"
  done
  COMPONENTS=("${ONLY[@]}")
  ALL_COMPONENTS=("${ONLY[@]}")
fi
BIN="$ROOT/.cache/bin"
CLAMD=$(command -v clamd || echo /usr/sbin/clamd)

# The flavour of a running Temporal is the one it was started with (recorded
# in its folder), whatever VALISE_TEMPORAL says now: status, stop and restart
# act on what runs. One started before flavours existed is the dev server.
FLAVOUR_FILE="$DATA/temporal.flavour"
WANTED_FLAVOUR=$(temporal_flavour)
TEMPORAL_FLAVOUR=$WANTED_FLAVOUR
if pid_of temporal >/dev/null; then TEMPORAL_FLAVOUR=$(cat "$FLAVOUR_FILE" 2>/dev/null || echo dev); fi

ports_of() {
  case $1 in
    postgres) echo "$PORT_POSTGRES" ;;
    redis) echo "$PORT_REDIS" ;;
    temporal)
      if [ "$TEMPORAL_FLAVOUR" = server ]; then
        echo "$PORT_TEMPORAL $PORT_TEMPORAL_HTTP $PORT_TEMPORAL_METRICS $PORT_TEMPORAL_HISTORY" \
          "$PORT_TEMPORAL_MATCHING $PORT_TEMPORAL_WORKER $PORT_TEMPORAL_FRONTEND_MEMBERSHIP" \
          "$PORT_TEMPORAL_HISTORY_MEMBERSHIP $PORT_TEMPORAL_MATCHING_MEMBERSHIP" \
          "$PORT_TEMPORAL_WORKER_MEMBERSHIP $PORT_TEMPORAL_PPROF"
      else
        echo "$PORT_TEMPORAL $PORT_TEMPORAL_UI $PORT_TEMPORAL_HTTP $PORT_TEMPORAL_METRICS"
      fi
      ;;
    minio) echo "$PORT_MINIO $PORT_MINIO_CONSOLE" ;;
    clamd) echo "$PORT_CLAMD" ;;
    maildev) echo "$PORT_SMTP $PORT_MAIL_UI" ;;
  esac
}

# The server refuses to run as root: as root, initdb and postgres run as the
# postgres system user that Debian's package creates. Loopback only, no Unix
# socket, trust authentication (initdb --auth=trust writes a pg_hba.conf for
# local and loopback connections only). The test profile's cluster is thrown
# away after each run, so it skips fsync.
launch_postgres() {
  local bin data settings=() as_postgres=()
  bin=$(postgres_bin) || die "PostgreSQL's server is missing; run scripts/setup.sh (apt-get install postgresql)"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "as root, the own PostgreSQL runs as the 'postgres' user, which does not exist"
    as_postgres=(setpriv --reuid=postgres --regid=postgres --init-groups --)
  fi
  data=$(postgres_data)
  if [ ! -s "$data/PG_VERSION" ]; then
    rm -rf "$data"
    mkdir -p "$data"
    chmod 700 "$data"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$data"; fi
    log "postgres: initdb ${data#"$ROOT"/} (log ${LOGS#"$ROOT"/}/postgres-initdb.log)"
(cd / && "${as_postgres[@]}" "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 \
      --locale=C.UTF-8 >>"$LOGS/postgres-initdb.log" 2>&1) ||
      {
        tail -n 20 "$LOGS/postgres-initdb.log" >&2
        die "postgres: initdb failed"
      }
  fi
  if [ "$PROFILE" = test ]; then settings=(-c fsync=off -c synchronous_commit=off -c full_page_writes=off); fi
  spawn postgres "${as_postgres[@]}" "$bin/postgres" -D "$data" -p "$PORT_POSTGRES" \
    -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=200 "${settings[@]}"
}
health_postgres() { "$(postgres_bin)/pg_isready" -q -h 127.0.0.1 -p "$PORT_POSTGRES" -U postgres -d postgres -t 2; }

# No persistence: the rate-limit counters it holds live for a minute anyway.
launch_redis() {
  command -v redis-server >/dev/null || die "redis-server is missing; run scripts/setup.sh (apt-get install redis-server)"
  mkdir -p "$DATA/redis"
  spawn redis redis-server --bind 127.0.0.1 --port "$PORT_REDIS" --protected-mode yes \
    --save '' --appendonly no --dir "$DATA/redis" --daemonize no
}
health_redis() {
  [[ "$(timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"; printf "PING\r\n" >&3; head -c 5 <&3' \
    _ "$PORT_REDIS")" == +PONG ]]
}

launch_temporal() {
  mkdir -p "$DATA"
  echo "$TEMPORAL_FLAVOUR" >"$FLAVOUR_FILE"
  if [ "$TEMPORAL_FLAVOUR" = server ]; then
    [ -x "$TEMPORAL_SERVER_BIN/server" ] || die "${TEMPORAL_SERVER_BIN#"$ROOT"/}/server is missing; run VALISE_TEMPORAL=server scripts/setup.sh"
    spawn temporal "$ROOT/scripts/temporal-server.sh" "$PROFILE"
    return
  fi
  [ -x "$BIN/temporal" ] || die "$BIN/temporal is missing; run scripts/setup.sh"
  # HTTP and metrics ports default to random ones: pin them so that profiles
  # never race for a port. The version check would call updates.temporal.io.
  # WAL with synchronous=normal: SQLite no longer waits for the disk on every
  # commit, which was the dev server's bottleneck (webhook deliveries went from
  # about 12/s); a killed server loses nothing, only a machine crash could.
  TEMPORAL_VERSION_CHECK_DISABLED=1 spawn temporal "$BIN/temporal" server start-dev \
    --ip 127.0.0.1 --port "$PORT_TEMPORAL" --ui-port "$PORT_TEMPORAL_UI" \
    --http-port "$PORT_TEMPORAL_HTTP" --metrics-port "$PORT_TEMPORAL_METRICS" \
    --db-filename "$DATA/temporal.db" --namespace default --log-level warn \
    --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal \
    --dynamic-config-value frontend.enableServerVersionCheck=false
}
# The server flavour has no Web UI (the dev server's embeds one).
health_temporal() {
  [[ "$("$BIN/temporal" operator cluster health --address "127.0.0.1:$PORT_TEMPORAL" \
    --command-timeout 3s)" == *SERVING* ]] &&
    { [ "$TEMPORAL_FLAVOUR" = server ] || curl -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$PORT_TEMPORAL_UI/"; }
}

# The dev server is started with the namespace the app uses (--namespace default);
# the server flavour's databases start with none. A namespace registered a moment
# ago can be unknown to the frontend's cache for a few seconds: wait until a
# call that goes through the frontend (a visibility query) accepts it. Then, in
# either flavour, the custom search attributes every workflow carries
# (lib/temporal-search-attributes.ts): a start with an unknown one is refused.
ensure_temporal_namespace() {
  local temporal=("$BIN/temporal" --address "127.0.0.1:$PORT_TEMPORAL" --command-timeout 5s) deadline=$((SECONDS + 60))
  if [ "$TEMPORAL_FLAVOUR" != server ]; then
    ensure_temporal_search_attributes
    return
  fi
  if ! "${temporal[@]}" operator namespace describe --namespace default >/dev/null 2>&1; then
    log "temporal: registering namespace default"
    "${temporal[@]}" operator namespace create --namespace default --retention 72h >/dev/null
  fi
  until "${temporal[@]}" workflow count --namespace default >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "temporal: namespace default is not usable 60 s after its registration"
    sleep 0.5
  done
  ensure_temporal_search_attributes
}

# Through the operator service, which the dev server and the server flavour both serve; the names
# and types are declared once, in TypeScript. The script reads the app's configuration, which
# wants the profile's secrets (as ensure_bucket's does).
ensure_temporal_search_attributes() {
  (
    export_local_secrets
    TEMPORAL_ADDRESS="127.0.0.1:$PORT_TEMPORAL" TEMPORAL_NAMESPACE=default \
      sh "$ROOT/scripts/node.sh" "$ROOT/scripts/temporal-search-attributes.ts"
  ) || die "temporal: cannot register the search attributes (scripts/temporal-search-attributes.ts)"
}

launch_minio() {
  [ -x "$BIN/minio" ] || die "$BIN/minio is missing; run scripts/setup.sh"
  # MINIO_UPDATE=off: no release check against dl.min.io. Our own certs dir, so
  # a stray ~/.minio/certs cannot silently switch the server to TLS.
  load_local_secrets
  MINIO_ROOT_USER=$MINIO_USER MINIO_ROOT_PASSWORD=$LOCAL_MINIO_PASSWORD MINIO_UPDATE=off \
    spawn minio "$BIN/minio" server "$DATA/minio" --certs-dir "$DATA/minio-certs" \
    --address "127.0.0.1:$PORT_MINIO" --console-address "127.0.0.1:$PORT_MINIO_CONSOLE"
  # For outdated: this MinIO, and no other, runs with the generated password.
  cp "$PIDS/minio.pid" "$DATA/minio.generated-password"
}
health_minio() { curl -fsS --max-time 2 "http://127.0.0.1:$PORT_MINIO/minio/health/live"; }

# clamd writes every INSTREAM upload whole into its TemporaryDirectory before
# scanning it, and unpacks archives there: the plaintext of every server-mode
# file. Plaintext is never at rest, so that folder is on a RAM filesystem
# (/dev/shm, or VALISE_CLAMD_TMP_BASE, a tmpfs of your own), one per profile
# and data folder; without one, clamd does not start.
clamd_tmp() {
  local base=${VALISE_CLAMD_TMP_BASE:-/dev/shm} type
  type=$(stat -f -c %T "$base" 2>/dev/null) || type="missing"
  case $type in
    tmpfs | ramfs) ;;
    *) die "clamd: $base is not a RAM filesystem ($type): clamd would write every scanned file's plaintext to disk. Mount a tmpfs (mount -t tmpfs -o size=5g,mode=700 tmpfs /some/dir) and set VALISE_CLAMD_TMP_BASE to it" ;;
  esac
  echo "$base/valise-clamd-$PROFILE-$(printf %s "$DATA" | cksum | cut -d' ' -f1)"
}

# Single files: ClamAV 1.x scans at most 2 GiB - 3 (2147483645 bytes; larger
# MaxFileSize values are cut to that); measured in bench/README.md, "clamd's ceiling".
CLAMD_MAX_FILE_BYTES=2147483645

launch_clamd() {
  [ -x "$CLAMD" ] || die "clamd is missing; run scripts/setup.sh (apt-get install clamav-daemon)"
  local tmp free_mib
  tmp=$(clamd_tmp)
  # Left by a clamd killed mid-scan: nobody else reads them. clamd-tmp is the spool on disk that
  # earlier versions used: plaintext that a killed scan may have left there goes too.
  rm -rf "$tmp" "$DATA/clamd-tmp"
  mkdir -p -m 700 "$tmp"
  # A full RAM filesystem makes scans of big files fail (and retry): say so now.
  free_mib=$(($(stat -f -c '%a * %S' "$tmp") / 1048576))
  if ((free_mib < 2 * CLAMD_MAX_FILE_BYTES / 1048576)); then
    log "WARNING: clamd: only $free_mib MiB free on $(dirname "$tmp"): two scans of files near 2 GiB at once need 4096 MiB there"
  fi
  # No User line: clamd runs as whoever starts the stack. No LocalSocket: the
  # app talks TCP. LogFile is clamd's own log (scan results included); its
  # console output, startup errors first, goes to logs/clamd.log.
  # The limits are ClamAV's own ceilings, so that every file it can scan is
  # scanned: StreamMaxLength caps one INSTREAM upload (clamd answers "size limit
  # exceeded" and stops reading past it, so no more than that is spooled into
  # RAM), MaxFileSize is the largest file scanned, MaxScanSize the total bytes
  # scanned per file including archive contents (at most 4095M).
  cat >"$DATA/clamd.conf" <<EOF
# Generated by scripts/stack.sh for profile $PROFILE; rewritten on every start.
Foreground yes
TCPSocket $PORT_CLAMD
TCPAddr 127.0.0.1
DatabaseDirectory $ROOT/ops/clamav
PidFile $DATA/clamd.pid
LogFile $LOGS/clamd-daemon.log
LogTime yes
# On a RAM filesystem: the streams and unpacked archives spooled here are plaintext.
TemporaryDirectory $tmp
StreamMaxLength $CLAMD_MAX_FILE_BYTES
# Past MaxFileSize/MaxScanSize clamd would answer OK for a partial scan; this makes it say so.
AlertExceedsMax yes
MaxFileSize $CLAMD_MAX_FILE_BYTES
MaxScanSize 4095M
# One scan's time (default 2 min, which a busy clamd reached on 1 GiB; Valise retries it): below CLAMD_VERDICT_TIMEOUT_MS.
MaxScanTime 300000
EOF
  spawn clamd "$CLAMD" --config-file="$DATA/clamd.conf"
}
health_clamd() {
  # clamd's protocol: a z-prefixed command ends with NUL; the answer is PONG.
  [[ "$(timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"; printf "zPING\0" >&3; tr -d "\0" <&3' \
    _ "$PORT_CLAMD")" == PONG* ]]
}

launch_maildev() {
  # An explicit --config stops maildev from picking up a .maildevrc.json from a
  # parent folder, and no MAILDEV_* variable gets through: nothing may turn on
  # relaying of captured mail to the outside world. Our own mail directory:
  # the default /tmp/maildev would be shared (and emptied) by both profiles.
  [ -x "$ROOT/node_modules/.bin/maildev" ] || die "maildev is missing from node_modules; run scripts/setup.sh"
  echo '{}' >"$DATA/maildev.json"
  local var
  for var in $(compgen -e | grep '^MAILDEV_' || true); do unset "$var"; done
  spawn maildev "$ROOT/node_modules/.bin/maildev" --config "$DATA/maildev.json" \
    --ip 127.0.0.1 --smtp "$PORT_SMTP" --web-ip 127.0.0.1 --web "$PORT_MAIL_UI" \
    --mail-directory "$DATA/mail"
}
health_maildev() { curl -fsS --max-time 2 "http://127.0.0.1:$PORT_MAIL_UI/api/healthz"; }

# The server flavour sets up its schema before it serves: a first start on
# empty databases applies every schema version.
startup_seconds() { if [ "$1" = temporal ] && [ "$TEMPORAL_FLAVOUR" = server ]; then echo 180; else echo 90; fi; }

# Bounded wait; on failure show why, from the component's log.
wait_healthy() {
  local name=$1 deadline=$((SECONDS + $2))
  until "health_$name" >/dev/null 2>&1; do
    if ! pid_of "$name" >/dev/null; then
      log "error: $name exited during startup; last lines of $LOGS/$name.log:"
      tail -n 25 "$LOGS/$name.log" >&2
      exit 1
    fi
    if ((SECONDS >= deadline)); then
      log "error: $name not healthy after $2 s; last lines of $LOGS/$name.log:"
      tail -n 25 "$LOGS/$name.log" >&2
      exit 1
    fi
    sleep 0.5
  done
}

ensure_bucket() {
  [ -d "$ROOT/node_modules/@aws-sdk/client-s3" ] ||
    die "cannot create bucket '${S3_BUCKET:-valise}': @aws-sdk/client-s3 is not installed (npm install @aws-sdk/client-s3)"
  (
    export_local_secrets
    S3_ENDPOINT="http://127.0.0.1:$PORT_MINIO" S3_BUCKET=${S3_BUCKET:-valise} \
      S3_REGION=${S3_REGION:-eu-west-1} sh "$ROOT/scripts/node.sh" "$ROOT/scripts/ensure-bucket.ts"
  )
}

start() {
  local name port todo=()
  mkdir -p "$PIDS" "$LOGS"
  for name in "${COMPONENTS[@]}"; do
    if pid_of "$name" >/dev/null && outdated "$name" >/dev/null; then
      log "$name: started by an older checkout ($(outdated "$name")); restarting it"
      stop_component "$name"
      wait_ports_free "$name" 15
    fi
    if pid_of "$name" >/dev/null; then
      log "$name: already running"
      if [ "$name" = temporal ] && [ -n "${VALISE_TEMPORAL:-}" ] && [ "$TEMPORAL_FLAVOUR" != "$WANTED_FLAVOUR" ]; then
        die "temporal: the $TEMPORAL_FLAVOUR flavour runs, not $WANTED_FLAVOUR (scripts/stack.sh stop $PROFILE temporal first)"
      fi
      continue
    fi
    for port in $(ports_of "$name"); do
      if port_open "$port"; then die "$name: port $port on 127.0.0.1 is taken by another process"; fi
    done
    todo+=("$name")
  done
  # Launch everything, then wait: the startups overlap.
  for name in "${todo[@]}"; do "launch_$name"; done
  for name in "${todo[@]}"; do
    wait_healthy "$name" "$(startup_seconds "$name")"
    log "$name: up (ports $(ports_of "$name"))"
  done
  if [[ " ${COMPONENTS[*]} " == *" temporal "* ]]; then ensure_temporal_namespace; fi
  if [[ " ${COMPONENTS[*]} " == *" minio "* ]]; then ensure_bucket; fi
}

# PostgreSQL's fast shutdown: SIGINT to the postmaster alone (a signal to each
# of its processes, as stop_pid sends, would look like a crash to it).
stop_postgres() {
  local pid i
  if pid=$(pid_of postgres); then
    kill -INT "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      session_alive "$pid" || break
      sleep 0.2
    done
    session_alive "$pid" || log "postgres: stopped"
  fi
  stop_pid postgres
}

# clamd's spool goes with it: RAM is not freed otherwise.
stop_clamd() {
  local tmp
  stop_pid clamd
  if tmp=$(clamd_tmp 2>/dev/null); then rm -rf "$tmp"; fi
}

stop() {
  local name file
  # App processes (worker, api) that up.sh/test.sh recorded here go first,
  # unless only some components were named.
  for file in "$PIDS"/*.pid; do
    [ -e "$file" ] || continue
    [ ${#ONLY[@]} -eq 0 ] || break
    name=$(basename "$file" .pid)
    [[ " ${ALL_COMPONENTS[*]} " == *" $name "* ]] || stop_pid "$name"
  done
  for name in "${ALL_COMPONENTS[@]}"; do
    case $name in
      postgres | clamd) "stop_$name" ;;
      *) stop_pid "$name" ;;
    esac
  done
}

# What status adds after a component's ports: which Temporal runs.
describe_component() {
  if [ "$1" = temporal ]; then echo ", $TEMPORAL_FLAVOUR flavour"; fi
}

status() {
  local name pid file rc=0
  for name in "${COMPONENTS[@]}"; do
    if ! pid=$(pid_of "$name"); then
      echo "$name: down"
      rc=3
    elif "health_$name" >/dev/null 2>&1; then
      echo "$name: up (pid $pid, ports $(ports_of "$name"))$(describe_component "$name")"
    else
      echo "$name: running but not healthy (pid $pid, log $LOGS/$name.log)"
      rc=3
    fi
  done
  # App processes that up.sh/test.sh recorded (worker, api).
  for file in "$PIDS"/*.pid; do
    [ -e "$file" ] || continue
    name=$(basename "$file" .pid)
    [[ " ${ALL_COMPONENTS[*]} " == *" $name "* ]] && continue
    if pid=$(pid_of "$name"); then echo "$name: up (pid $pid)"; else echo "$name: down"; fi
  done
  return $rc
}

# wait_ports_free <name> <seconds>: until nothing listens on the component's ports. A stopped
# server's last listener can outlive its process group by a moment (seen once with Temporal's
# metrics port): a start then would fail with "address already in use".
wait_ports_free() {
  local name=$1 deadline=$((SECONDS + $2)) port busy
  while :; do
    busy=
    for port in $(ports_of "$name"); do
      if [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ]; then busy=$port; fi
    done
    [ -n "$busy" ] || return 0
    if ((SECONDS >= deadline)); then
      log "error: port $busy of $name is still taken: $(ss -Hltnp "sport = :$busy" 2>/dev/null)"
      exit 1
    fi
    sleep 0.2
  done
}

# One component down and up again with its data (fault tests restart Temporal mid-workflow).
stop_component() {
  case $1 in
    postgres | clamd) "stop_$1" ;;
    *) stop_pid "$1" ;;
  esac
}

# outdated <component>: why a running component must be restarted before use
# (printed), or false. A MinIO without the record launch_minio writes still
# runs with the password this repository once published, which no process
# accepts any more (lib/config.ts); a clamd whose spool is not on a RAM
# filesystem writes plaintext to disk.
outdated() {
  local spool
  case $1 in
    minio)
      cmp -s "$PIDS/minio.pid" "$DATA/minio.generated-password" && return 1
      echo "it runs with the published password, not this profile's generated one"
      ;;
    clamd)
      spool=$(sed -n 's/^TemporaryDirectory //p' "$DATA/clamd.conf" 2>/dev/null)
      case $(stat -f -c %T "${spool:-/nonexistent}" 2>/dev/null) in tmpfs | ramfs) return 1 ;; esac
      echo "it spools scanned files to ${spool:-an unknown folder}, not a RAM filesystem"
      ;;
    *) return 1 ;;
  esac
}

restart() {
  local name=$1
  [[ " ${COMPONENTS[*]} " == *" $name "* ]] || die "unknown component $name (${COMPONENTS[*]})"
  stop_component "$name"
  wait_ports_free "$name" 15
  "launch_$name"
  wait_healthy "$name" "$(startup_seconds "$name")"
  if [ "$name" = temporal ]; then ensure_temporal_namespace; fi
  log "$name: restarted"
}

case $action in
  start) start ;;
  restart) restart "$1" ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac

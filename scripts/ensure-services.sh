#!/usr/bin/env bash
# Makes sure PostgreSQL, RabbitMQ and Redis run on 127.0.0.1 (Debian 12, no systemd) for the
# inspection node's demo and tests. Idempotent: a service that answers is left alone. One that is
# installed but stopped is started; one that is missing is installed with apt-get and started.
# Every action taken is printed with its reason. Exits non-zero, naming the service and its log,
# if a service does not answer within ENSURE_SERVICES_TIMEOUT seconds (default 120).
#
# RabbitMQ: the project declares 512 quorum queues. A broker started through `rabbitmq-server`
# runs under `su rabbitmq` with a soft open-file limit of 1024, which leaves file_handle_cache
# ~927 handles; 512 quorum queues need ~1540 and the broker then silently stops accepting AMQP
# connections (TCP accepts, the handshake is never answered). /etc/rabbitmq/rabbitmq-env.conf is
# sourced inside that su, so a `ulimit` line there raises the soft limit to the hard limit. This
# script adds that line if missing and restarts a running broker whose limit is still too low.
#
# RabbitMQ's management plugin is enabled when its HTTP API (127.0.0.1:15672) does not answer: the
# scheduler leader closes a dead worker's AMQP connections through it (rabbit.management.url), so that
# single-active-consumer hands the worker's queues to their new owner at once. It is bound to 127.0.0.1
# (rabbitmq.conf line for the next boot, and the application environment of the running broker, so no
# restart is needed).
#
# RabbitMQ's listeners get a send timeout (rabbitmq.conf: tcp_listen_options.send_timeout = 15000 with
# send_timeout_close; RabbitMQ's other listen defaults restated, since a tcp_listen_options key replaces them):
# without it a send to a client that stopped reading blocks forever, and a SIGSTOPped (hung) worker kept its
# single-active-consumer queues for 25-35 s, also after the scheduler's broker fence asked the management API
# to close its connection (issue 14). A running broker without it is restarted once, saying so.
#
# Behaviour does not depend on CI or any other environment variable except ENSURE_SERVICES_TIMEOUT.
set -euo pipefail

export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    exec sudo -E bash "$(readlink -f "${BASH_SOURCE[0]}")" "$@"
  fi
  echo "ensure-services: must run as root (installs and starts system services)" >&2
  exit 1
fi

TIMEOUT="${ENSURE_SERVICES_TIMEOUT:-120}"
MIN_FILE_HANDLES=4096
RABBIT_ENV_CONF=/etc/rabbitmq/rabbitmq-env.conf
RABBIT_ENV_MARK='# added by inspection-node scripts/ensure-services.sh: 512 quorum queues need more than 1024 file handles'
RABBIT_ENV_LINE='ulimit -S -n "$(ulimit -H -n)" 2>/dev/null || true'
PG_HBA_MARK='# added by inspection-node scripts/ensure-services.sh: the node and tests connect as postgres to database test over 127.0.0.1 without a password'
PG_HBA_MARK_OLD='# added by inspection-node scripts/ensure-services.sh: the node and tests connect as postgres without a password'
REDIS_LOG=/var/log/redis/ci.log

WORK="$(mktemp -d /tmp/ensure-services.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

die() {
  echo "ensure-services: ERROR: $*" >&2
  exit 1
}

# ---------------------------------------------------------------- install what is missing

pg_installed() { command -v pg_ctlcluster >/dev/null 2>&1 && command -v pg_isready >/dev/null 2>&1; }
rabbit_installed() { command -v rabbitmq-server >/dev/null 2>&1 && command -v rabbitmqctl >/dev/null 2>&1; }
redis_installed() { command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; }

missing=()
pg_installed || missing+=(postgresql)
rabbit_installed || missing+=(rabbitmq-server)
redis_installed || missing+=(redis-server)
PG_FRESH=0
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]} (apt-get update + apt-get install -y) ..."
  # Exactly these packages; nothing else (in particular no browser) is installed here.
  if ! apt-get update >"$WORK/apt.log" 2>&1 ||
     ! DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >>"$WORK/apt.log" 2>&1; then
    tail -n 20 "$WORK/apt.log" >&2
    die "apt-get could not install ${missing[*]}"
  fi
  echo "installed ${missing[*]}"
  if [[ " ${missing[*]} " == *" postgresql "* ]]; then PG_FRESH=1; fi
fi

# Polls "$2" (a function) until it succeeds, at most TIMEOUT seconds, printing progress every 10 s.
wait_until() {
  local name="$1" check="$2" logs="$3" start now last=0
  start=$SECONDS
  until "$check"; do
    now=$((SECONDS - start))
    if [ "$now" -ge "$TIMEOUT" ]; then
      die "$name did not come up within ${TIMEOUT}s; see $logs"
    fi
    if [ $((now - last)) -ge 10 ]; then
      echo "$name: waiting (${now}s of ${TIMEOUT}s) ..."
      last=$now
    fi
    sleep 2
  done
}

# ---------------------------------------------------------------- PostgreSQL

PG_VER="" PG_LOG=""
pg_find_cluster() {
  # The cluster on port 5432, else the first one; fields: version name port status owner dir log.
  local line
  line="$(pg_lsclusters -h 2>/dev/null | awk '$3 == 5432 { print; exit }')"
  [ -n "$line" ] || line="$(pg_lsclusters -h 2>/dev/null | head -n 1)"
  if [ -n "$line" ]; then
    PG_VER="$(awk '{ print $1 }' <<<"$line")"
    PG_LOG="$(awk '{ print $7 }' <<<"$line")"
  else
    PG_VER="$(ls /etc/postgresql 2>/dev/null | head -n 1 || true)"
    PG_LOG="/var/log/postgresql/postgresql-$PG_VER-main.log"
  fi
  [ -n "$PG_LOG" ] || PG_LOG="/var/log/postgresql/postgresql-$PG_VER-main.log"
}

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 >/dev/null 2>&1; }

pg_psql() { # database, sql: as the node and the tests connect (TCP 127.0.0.1, user postgres, no password)
  PGCONNECT_TIMEOUT=5 psql -w -X -q -h 127.0.0.1 -p 5432 -U postgres -d "$1" -Atc "$2"
}

pg_admin() { # database, sql: administration over the local socket as the OS user postgres (peer auth on Debian)
  if command -v runuser >/dev/null 2>&1 && id postgres >/dev/null 2>&1 &&
     (cd / && PGCONNECT_TIMEOUT=5 runuser -u postgres -- psql -w -X -q -p 5432 -d "$1" -Atc "$2"); then
    return 0
  fi
  pg_psql "$1" "$2"
}

# The node and the tests connect as user postgres to database test over 127.0.0.1 without a password.
# A fresh Debian install asks for a password there (scram-sha-256). Only when that connection fails, one
# line is put first in pg_hba.conf (the first matching line counts): trust for exactly that user, that
# database and 127.0.0.1/32; every other user, database and address keeps its authentication. An older
# version of this script trusted every user and database on localhost: its marked lines are narrowed to
# this one. Idempotent: a second run finds the connection working and changes nothing.
PG_HBA_LINE="host    test            postgres        127.0.0.1/32            trust"
pg_ensure_trust() {
  local hba="/etc/postgresql/$PG_VER/main/pg_hba.conf"
  if grep -qxF "$PG_HBA_MARK_OLD" "$hba" 2>/dev/null; then
    cp -p "$hba" "$hba.before-ensure-services"
    # drop the old marker and the broad trust lines right after it, keep everything else
    awk -v mark="$PG_HBA_MARK_OLD" '
      $0 == mark { skipping = 1; next }
      skipping && $1 ~ /^host/ && $2 == "all" && $3 == "all" && ($4 == "127.0.0.1/32" || $4 == "::1/128") && $5 == "trust" { next }
      { skipping = 0; print }' "$hba.before-ensure-services" >"$WORK/pg_hba.conf"
    cat "$WORK/pg_hba.conf" >"$hba"   # keeps owner and mode
    echo "postgresql: removed the trust-everyone lines an older ensure-services.sh put in $hba (old file kept as $hba.before-ensure-services)"
    pg_reload "$hba"
  fi
  pg_psql test 'select 1' >/dev/null 2>&1 && return 0
  [ -f "$hba" ] || die "postgresql: cannot connect as postgres to database test on 127.0.0.1 and $hba does not exist"
  if ! grep -qxF "$PG_HBA_LINE" "$hba"; then
    cp -p "$hba" "$hba.before-ensure-services"
    { echo "$PG_HBA_MARK"; echo "$PG_HBA_LINE"; cat "$hba.before-ensure-services"; } >"$WORK/pg_hba.conf"
    cat "$WORK/pg_hba.conf" >"$hba"   # keeps owner and mode
    echo "postgresql: set trust auth for user postgres, database test, 127.0.0.1/32 only in $hba (old file kept as $hba.before-ensure-services)"
    pg_reload "$hba"
  fi
  pg_psql test 'select 1' >/dev/null 2>&1 ||
    die "postgresql: cannot connect as user postgres to database test on 127.0.0.1:5432 without a password; check $hba and $PG_LOG"
}

pg_reload() { # hba file, for the message
  pg_ctlcluster --skip-systemctl-redirect "$PG_VER" main reload >"$WORK/pg-reload.log" 2>&1 ||
    { cat "$WORK/pg-reload.log" >&2; die "postgresql: reload after editing $1 failed"; }
  sleep 1
}

pg_ensure_test_db() {
  if [ -z "$(pg_admin postgres "select 1 from pg_database where datname = 'test'" 2>/dev/null)" ]; then
    pg_admin postgres 'CREATE DATABASE test' >"$WORK/createdb.log" 2>&1 ||
      { cat "$WORK/createdb.log" >&2; die "postgresql: CREATE DATABASE test failed (as OS user postgres over the local socket)"; }
    echo "postgresql: created database test"
  fi
}

ensure_postgresql() {
  pg_find_cluster
  if [ -z "$PG_VER" ] || [ ! -d "/etc/postgresql/$PG_VER/main" ]; then
    local ver
    ver="$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1)"
    [ -n "$ver" ] || die "postgresql: no server version under /usr/lib/postgresql"
    pg_createcluster "$ver" main >"$WORK/pg-create.log" 2>&1 ||
      { cat "$WORK/pg-create.log" >&2; die "postgresql: pg_createcluster $ver main failed"; }
    echo "postgresql: created cluster $ver/main"
    PG_FRESH=1
    pg_find_cluster
  fi
  if ! pg_up; then
    echo "postgresql: not answering on 127.0.0.1:5432, starting cluster $PG_VER/main (pg_ctlcluster start)"
    if ! pg_ctlcluster --skip-systemctl-redirect "$PG_VER" main start >"$WORK/pg-start.log" 2>&1; then
      cat "$WORK/pg-start.log" >&2
      pg_up || die "postgresql: pg_ctlcluster $PG_VER main start failed; see $PG_LOG"
    fi
    wait_until postgresql pg_up "$PG_LOG"
  fi
  pg_ensure_test_db
  pg_ensure_trust
  echo "postgresql: running ($PG_VER/main on 127.0.0.1:5432, database test reachable)"
}

# ---------------------------------------------------------------- Redis

redis_up() { [ "$(timeout 5 redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = PONG ]; }

ensure_redis() {
  if ! redis_up; then
    echo "redis: not answering on 127.0.0.1:6379, starting redis-server (daemonized, no persistence, log $REDIS_LOG)"
    mkdir -p /var/lib/redis /var/log/redis
    if ! redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
        --dir /var/lib/redis --logfile "$REDIS_LOG" >"$WORK/redis-start.log" 2>&1; then
      cat "$WORK/redis-start.log" >&2
      die "redis: redis-server failed to start; see $REDIS_LOG"
    fi
    wait_until redis redis_up "$REDIS_LOG"
  fi
  echo "redis: running (127.0.0.1:6379)"
}

# ---------------------------------------------------------------- RabbitMQ

rabbit_log() {
  local node
  node="$(sed -n 's/^[[:space:]]*\(export[[:space:]]\+\)\?NODENAME=//p' "$RABBIT_ENV_CONF" 2>/dev/null | tail -n 1 | tr -d "\"'")"
  [ -n "$node" ] || node="rabbit@$(hostname -s)"
  echo "/var/log/rabbitmq/$node.log and /var/log/rabbitmq/startup_err"
}

# A real AMQP 0-9-1 handshake: the broker answers the protocol header with a Connection.Start
# method frame, whose first byte is the frame type 0x01. A wedged broker accepts TCP but never answers.
amqp_answers() {
  local first
  first="$(timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/5672 && printf "AMQP\x00\x00\x09\x01" >&3 && head -c 1 <&3' 2>/dev/null |
    od -An -tx1 | tr -d ' \n')" || true
  [ "$first" = 01 ]
}

rabbit_node_running() { timeout 20 rabbitmq-diagnostics -q check_running >/dev/null 2>&1; }
rabbit_up() { rabbit_node_running && amqp_answers; }
rabbit_beam_present() { id rabbitmq >/dev/null 2>&1 && pgrep -u rabbitmq -x beam.smp >/dev/null 2>&1; }

rabbit_ensure_env_conf() {
  if ! grep -qF "$RABBIT_ENV_MARK" "$RABBIT_ENV_CONF" 2>/dev/null; then
    mkdir -p "$(dirname "$RABBIT_ENV_CONF")"
    # Start on a new line if the file does not end with one.
    if [ -s "$RABBIT_ENV_CONF" ] && [ -n "$(tail -c 1 "$RABBIT_ENV_CONF")" ]; then echo >>"$RABBIT_ENV_CONF"; fi
    printf '%s\n%s\n' "$RABBIT_ENV_MARK" "$RABBIT_ENV_LINE" >>"$RABBIT_ENV_CONF"
    echo "rabbitmq: added the open-file ulimit line to $RABBIT_ENV_CONF (512 quorum queues need more than 1024 file handles)"
  fi
}

rabbit_start() {
  if ! rabbitmq-server -detached >"$WORK/rabbit-start.log" 2>&1; then
    cat "$WORK/rabbit-start.log" >&2
    die "rabbitmq: rabbitmq-server -detached failed; see $(rabbit_log)"
  fi
  wait_until rabbitmq rabbit_up "$(rabbit_log)"
}

rabbit_restart() { # reason
  echo "rabbitmq: restarting the broker: $1"
  timeout 30 rabbitmqctl shutdown >"$WORK/rabbit-stop.log" 2>&1 || true
  if rabbit_beam_present; then
    echo "rabbitmq: broker still running after rabbitmqctl shutdown, killing beam.smp and epmd of user rabbitmq (kill -9)"
    pkill -9 -u rabbitmq -x beam.smp || true
    pkill -9 -u rabbitmq -x epmd || true
    local i
    for i in 1 2 3 4 5 6 7 8 9 10; do rabbit_beam_present || break; sleep 1; done
    if rabbit_beam_present; then die "rabbitmq: could not stop the old broker (beam.smp of user rabbitmq still running)"; fi
  fi
  echo "rabbitmq: starting the broker (rabbitmq-server -detached)"
  rabbit_start
}

# Prints the running broker's file_handle_cache total_limit; returns 124 if rabbitmqctl timed out
# (a wedged broker), 1 if no limit could be read.
rabbit_file_limit() {
  local out rc=0 pid
  out="$(timeout 20 rabbitmqctl eval 'file_handle_cache:info([total_limit]).' 2>&1)" || rc=$?
  if [ "$rc" = 124 ]; then return 124; fi
  if [[ "$out" =~ total_limit,([0-9]+) ]]; then
    echo "${BASH_REMATCH[1]}"
    return 0
  fi
  # Brokers without file_handle_cache: fall back to the process's soft open-file limit.
  pid="$(pgrep -u rabbitmq -x beam.smp 2>/dev/null | head -n 1)" || true
  if [ -n "$pid" ] && awk '/^Max open files/ { print $4; found = 1 } END { exit !found }' "/proc/$pid/limits" 2>/dev/null; then
    return 0
  fi
  return 1
}

ensure_rabbitmq() {
  rabbit_ensure_env_conf
  rabbit_ensure_listen_conf
  if ! rabbit_node_running; then
    if rabbit_beam_present; then
      echo "rabbitmq: broker process present but node not running, waiting for it to boot"
      if ! timeout "$TIMEOUT" rabbitmqctl await_startup >"$WORK/rabbit-await.log" 2>&1; then
        rabbit_restart "node did not finish booting within ${TIMEOUT}s"
      fi
    else
      echo "rabbitmq: not running, starting the broker (rabbitmq-server -detached)"
      rabbit_start
    fi
  fi

  local limit rc=0
  limit="$(rabbit_file_limit)" || rc=$?
  if [ "$rc" = 124 ]; then
    rabbit_restart "rabbitmqctl eval timed out after 20s (wedged broker)"
  elif [ "$rc" != 0 ]; then
    die "rabbitmq: could not read the broker's file handle limit (rabbitmqctl eval 'file_handle_cache:info([total_limit]).'); see $(rabbit_log)"
  elif [ "$limit" -lt "$MIN_FILE_HANDLES" ]; then
    rabbit_restart "file handle limit is $limit, below $MIN_FILE_HANDLES (512 quorum queues need ~1540; the broker would stop accepting AMQP connections)"
  fi
  if [ "$rc" != 0 ] || [ "$limit" -lt "$MIN_FILE_HANDLES" ]; then
    rc=0
    limit="$(rabbit_file_limit)" || rc=$?
    [ "$rc" = 0 ] || die "rabbitmq: still cannot read the file handle limit after the restart; see $(rabbit_log)"
    [ "$limit" -ge "$MIN_FILE_HANDLES" ] ||
      die "rabbitmq: file handle limit is still $limit after the restart (below $MIN_FILE_HANDLES); the hard open-file limit for user rabbitmq is too low ('su rabbitmq -s /bin/sh -c \"ulimit -Hn\"'); see $RABBIT_ENV_CONF"
  fi
  local send_timeout
  send_timeout="$(rabbit_send_timeout)" || die "rabbitmq: could not read the broker's tcp_listen_options (rabbitmqctl eval); see $(rabbit_log)"
  if ! [[ "$send_timeout" =~ ^[0-9]+$ ]]; then
    rabbit_restart "its listeners have no send timeout (read $RABBIT_CONF at its boot, before the line was there): a hung worker would keep its queues"
    send_timeout="$(rabbit_send_timeout)" || die "rabbitmq: could not read the broker's tcp_listen_options after the restart; see $(rabbit_log)"
    [[ "$send_timeout" =~ ^[0-9]+$ ]] || die "rabbitmq: still no tcp_listen_options.send_timeout after the restart (read: $send_timeout); see $RABBIT_CONF"
  fi
  wait_until rabbitmq rabbit_up "$(rabbit_log)"
  echo "rabbitmq: running (127.0.0.1:5672 answers AMQP) with enough file handles (limit $limit >= $MIN_FILE_HANDLES), listen send timeout ${send_timeout} ms"
}

# ---------------------------------------------------------------- RabbitMQ listen options (issue 14)

RABBIT_LISTEN_MARK='# added by inspection-node scripts/ensure-services.sh: cut a connection 15 s after a send to it blocked (a hung worker must not keep its queues); the other lines restate the defaults, which a tcp_listen_options key replaces'

# Adds the listen options to rabbitmq.conf (for the next boot) unless it sets a send timeout already.
rabbit_ensure_listen_conf() {
  if grep -qE '^[[:space:]]*tcp_listen_options\.send_timeout[[:space:]]*=' "$RABBIT_CONF" 2>/dev/null; then return 0; fi
  mkdir -p "$(dirname "$RABBIT_CONF")"
  if [ -s "$RABBIT_CONF" ] && [ -n "$(tail -c 1 "$RABBIT_CONF")" ]; then echo >>"$RABBIT_CONF"; fi
  printf '%s\n' "$RABBIT_LISTEN_MARK" 'tcp_listen_options.backlog = 128' 'tcp_listen_options.nodelay = true' \
    'tcp_listen_options.linger.on = true' 'tcp_listen_options.linger.timeout = 0' 'tcp_listen_options.exit_on_close = false' \
    'tcp_listen_options.send_timeout = 15000' 'tcp_listen_options.send_timeout_close = true' >>"$RABBIT_CONF"
  echo "rabbitmq: added tcp_listen_options.send_timeout = 15000 to $RABBIT_CONF (a hung worker's connection is cut instead of keeping its queues)"
}

# The running broker's listen send timeout in ms ("undefined" when it has none); fails when rabbitmqctl does.
rabbit_send_timeout() {
  local out
  out="$(timeout 20 rabbitmqctl eval 'case application:get_env(rabbit, tcp_listen_options) of {ok, O} -> proplists:get_value(send_timeout, O); _ -> undefined end.' 2>&1)" || return 1
  tail -1 <<<"$out"
}

# ---------------------------------------------------------------- RabbitMQ management API

RABBIT_CONF=/etc/rabbitmq/rabbitmq.conf
RABBIT_MGMT_MARK='# added by inspection-node scripts/ensure-services.sh: the management API (broker fence of dead workers) on loopback only'
RABBIT_MGMT_LINE='management.tcp.ip = 127.0.0.1'

# An HTTP answer of any status on 127.0.0.1:15672 (401 without credentials): the management API listens.
rabbit_mgmt_answers() {
  local first
  first="$(timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/15672 && printf "GET /api/overview HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3 && head -c 5 <&3' 2>/dev/null)" || true
  [ "$first" = "HTTP/" ]
}

ensure_rabbitmq_management() {
  if rabbit_mgmt_answers; then
    echo "rabbitmq: management API answers on 127.0.0.1:15672"
    return 0
  fi
  if ! grep -qF "$RABBIT_MGMT_MARK" "$RABBIT_CONF" 2>/dev/null; then
    if [ -s "$RABBIT_CONF" ] && [ -n "$(tail -c 1 "$RABBIT_CONF")" ]; then echo >>"$RABBIT_CONF"; fi
    printf '%s\n%s\n' "$RABBIT_MGMT_MARK" "$RABBIT_MGMT_LINE" >>"$RABBIT_CONF"
  fi
  echo "rabbitmq: management API not answering on 127.0.0.1:15672, enabling the plugin rabbitmq_management on 127.0.0.1 (the scheduler closes a dead worker's AMQP connections through it)"
  # the running broker read rabbitmq.conf at boot: give the plugin its loopback address before it starts
  timeout 20 rabbitmqctl eval 'application:load(rabbitmq_management), application:set_env(rabbitmq_management, tcp_config, [{ip, "127.0.0.1"}, {port, 15672}]).' \
    >"$WORK/rabbit-mgmt-env.log" 2>&1 || cat "$WORK/rabbit-mgmt-env.log" >&2
  if ! timeout 60 rabbitmq-plugins enable rabbitmq_management >"$WORK/rabbit-mgmt.log" 2>&1; then
    cat "$WORK/rabbit-mgmt.log" >&2
    die "rabbitmq: rabbitmq-plugins enable rabbitmq_management failed; see $(rabbit_log)"
  fi
  wait_until rabbitmq-management rabbit_mgmt_answers "$(rabbit_log)"
  echo "rabbitmq: management plugin enabled (127.0.0.1:15672)"
}

ensure_postgresql
ensure_redis
ensure_rabbitmq
ensure_rabbitmq_management

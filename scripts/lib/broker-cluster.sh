# A private RabbitMQ cluster on this machine for drills (scripts/drill-broker-cluster.sh). Sourced, never run
# on its own. Uses the Debian package's rabbitmq-server and rabbitmqctl (/usr/lib/rabbitmq/bin, not the
# /usr/sbin wrappers, which switch to the rabbitmq user and its cookie) with, per node, its own
# RABBITMQ_NODENAME (rcN@localhost), AMQP port (BC_BASE_PORT + N - 1), management port (10000 above it),
# distribution port (20000 above it), data and log directories and config file under one temporary
# directory, and one Erlang cookie for the cluster ($BC_DIR/.erlang.cookie, found through HOME).
#
# It never touches the shared broker (rabbit@localhost on 5672, 15672, 25672) and never stops epmd (the
# shared broker registers there too): cluster_down stops only the nodes it started, by their pid files.
#
#   cluster_up N BASE_PORT   start N nodes, join nodes 2..N to node 1, wait until all run in one cluster
#   cluster_ctl I ARGS...    rabbitmqctl against node I (cluster_rmq I TOOL ARGS... for another CLI tool)
#   cluster_kill I           kill -9 node I's Erlang VM
#   cluster_stop I           stop node I gracefully (rabbitmqctl stop)
#   cluster_start I          start node I again (it rejoins the cluster from its data directory)
#   cluster_wait_running I.. wait until the nodes run and see each other
#   cluster_live             the index of a running node (for CLI calls while one is down)
#   cluster_down             stop every node, remove the directory
# Globals: BC_DIR, BC_N, BC_BASE_PORT; cluster_addresses and cluster_mgmt_urls (for rabbit.addresses and
# rabbit.management.url).

BC_BIN=/usr/lib/rabbitmq/bin
declare -ga BC_PID=()
BC_DIR="" BC_N=0 BC_BASE_PORT=0

bc_say() { echo "$(date +%T) broker cluster: $*"; }

bc_node() { echo "rc$1@localhost"; }
bc_port() { echo $((BC_BASE_PORT + $1 - 1)); }
bc_mgmt_port() { echo $((BC_BASE_PORT + $1 - 1 + 10000)); }

# bc_env I: the environment of node I (server and CLI)
bc_env() {
  local i=$1 d="$BC_DIR/rc$1"
  echo HOME="$BC_DIR" RABBITMQ_NODENAME="$(bc_node "$i")" RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$(bc_port "$i")" \
    RABBITMQ_DIST_PORT=$(( $(bc_port "$i") + 20000 )) RABBITMQ_MNESIA_BASE="$d/mnesia" RABBITMQ_LOG_BASE="$d/log" \
    RABBITMQ_CONFIG_FILE="$d/rabbitmq.conf" RABBITMQ_ADVANCED_CONFIG_FILE="$d/advanced.config" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$d/enabled_plugins" RABBITMQ_PLUGINS_EXPAND_DIR="$d/plugins-expand" \
    RABBITMQ_PID_FILE="$d/pid" RABBITMQ_CONF_ENV_FILE="$BC_DIR/rabbitmq-env.conf" ERL_EPMD_ADDRESS=127.0.0.1
}

cluster_rmq() {
  local i=$1 tool=$2
  shift 2
  # shellcheck disable=SC2046
  env $(bc_env "$i") "$BC_BIN/$tool" -n "$(bc_node "$i")" "$@"
}
cluster_ctl() { local i=$1; shift; cluster_rmq "$i" rabbitmqctl "$@"; }

bc_check_ports() {
  local i p
  for i in $(seq "$BC_N"); do
    for p in $(bc_port "$i") $(bc_mgmt_port "$i") $(( $(bc_port "$i") + 20000 )); do
      case "$p" in 5672 | 15672 | 25672) echo "broker cluster: port $p is the shared broker's: choose another base port" >&2; return 1 ;; esac
      if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
        echo "broker cluster: port $p is in use (another drill's cluster?): choose another base port" >&2
        return 1
      fi
    done
  done
}

# cluster_start I: starts node I in the background, detached from the drill's shell (its own session, not a
# child: drill-lib's cleanup waits for all of its children); BC_PID[I] marks it started, its pid file says
# which Erlang VM is it.
cluster_start() {
  local i=$1 d="$BC_DIR/rc$1"
  mkdir -p "$d/mnesia" "$d/log"
  rm -f "$d/pid"
  # shellcheck disable=SC2046
  (env $(bc_env "$i") setsid "$BC_BIN/rabbitmq-server" >>"$d/server.out" 2>&1 </dev/null &)
  BC_PID[$i]=started
}

cluster_up() {
  BC_N=$1 BC_BASE_PORT=$2
  local i
  command -v "$BC_BIN/rabbitmq-server" >/dev/null 2>&1 || { echo "broker cluster: $BC_BIN/rabbitmq-server is missing (apt-get install rabbitmq-server)" >&2; return 1; }
  bc_check_ports || return 1
  BC_DIR=$(mktemp -d /tmp/broker-cluster.XXXXXX)
  chmod 755 "$BC_DIR"
  head -c 30 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr 'a-f' 'A-F' >"$BC_DIR/.erlang.cookie"
  chmod 400 "$BC_DIR/.erlang.cookie"
  # our own env file instead of /etc/rabbitmq/rabbitmq-env.conf (which names the shared node); the same open-file limit
  cat >"$BC_DIR/rabbitmq-env.conf" <<'EOF'
ulimit -S -n "$(ulimit -H -n)" 2>/dev/null || true
RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
EOF
  for i in $(seq "$BC_N"); do
    mkdir -p "$BC_DIR/rc$i"
    cat >"$BC_DIR/rc$i/rabbitmq.conf" <<EOF
listeners.tcp.default = 127.0.0.1:$(bc_port "$i")
management.tcp.ip = 127.0.0.1
management.tcp.port = $(bc_mgmt_port "$i")
# queue figures (consumers, messages) in the management API at most 1 s old: the drill polls them
collect_statistics_interval = 1000
# as scripts/ensure-services.sh sets the shared broker: a connection whose sends block 15 s is cut (a hung worker)
tcp_listen_options.backlog = 128
tcp_listen_options.nodelay = true
tcp_listen_options.linger.on = true
tcp_listen_options.linger.timeout = 0
tcp_listen_options.exit_on_close = false
tcp_listen_options.send_timeout = 15000
tcp_listen_options.send_timeout_close = true
log.file.level = info
log.console = false
EOF
    echo '[].' >"$BC_DIR/rc$i/advanced.config"
    echo '[rabbitmq_management].' >"$BC_DIR/rc$i/enabled_plugins"
  done
  bc_say "starting $BC_N nodes (rc1..rc$BC_N@localhost, AMQP $(bc_port 1)..$(bc_port "$BC_N"), management $(bc_mgmt_port 1)..$(bc_mgmt_port "$BC_N")) in $BC_DIR"
  for i in $(seq "$BC_N"); do cluster_start "$i"; done
  for i in $(seq "$BC_N"); do bc_await_booted "$i" || return 1; done
  for i in $(seq 2 "$BC_N"); do
    cluster_ctl "$i" stop_app >/dev/null &&
      cluster_ctl "$i" join_cluster "$(bc_node 1)" >/dev/null &&
      cluster_ctl "$i" start_app >/dev/null || { echo "broker cluster: rc$i could not join rc1 (log: $BC_DIR/rc$i/log)" >&2; return 1; }
  done
  cluster_wait_running $(seq "$BC_N") || return 1
  cluster_addresses="" cluster_mgmt_urls=""
  for i in $(seq "$BC_N"); do
    cluster_addresses+="${cluster_addresses:+,}127.0.0.1:$(bc_port "$i")"
    cluster_mgmt_urls+="${cluster_mgmt_urls:+,}http://127.0.0.1:$(bc_mgmt_port "$i")"
  done
  bc_say "$BC_N nodes running in one cluster: $(cluster_ctl 1 -q cluster_status --formatter json 2>/dev/null | jq -r '.running_nodes | join(" ")')"
}

# bc_await_booted I [TIMEOUT_S]: node I has booted (rabbitmqctl await_startup), or its log tail and failure.
bc_await_booted() {
  local i=$1 timeout=${2:-180} start=$SECONDS
  # await_startup fails at once while the Erlang node itself is not up yet: ask again until the deadline
  until cluster_ctl "$i" -q --timeout 30 await_startup >"$BC_DIR/rc$i/await.out" 2>&1; do
    if [ $((SECONDS - start)) -ge "$timeout" ]; then
      echo "broker cluster: rc$i did not start within ${timeout}s; $BC_DIR/rc$i/server.out and the CLI's answer:" >&2
      tail -n 20 "$BC_DIR/rc$i/server.out" "$BC_DIR/rc$i/await.out" >&2
      return 1
    fi
    sleep 1
  done
}

cluster_pid() { cat "$BC_DIR/rc$1/pid" 2>/dev/null; }

# bc_alive I: node I's Erlang VM runs
bc_alive() { local pid; pid=$(cluster_pid "$1"); [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }

# bc_wait_gone I [TIMEOUT_S]: node I's Erlang VM has ended
bc_wait_gone() {
  local i=$1 timeout=${2:-120} start=$SECONDS
  while bc_alive "$i"; do
    [ $((SECONDS - start)) -lt "$timeout" ] || return 1
    sleep 0.2
  done
}

cluster_kill() {
  local pid
  pid=$(cluster_pid "$1")
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
  bc_wait_gone "$1" 30 || true
  BC_PID[$1]=""
}

cluster_stop() {
  cluster_ctl "$1" -q stop >/dev/null 2>&1 || true
  bc_wait_gone "$1" 120 || true
  BC_PID[$1]=""
}

# cluster_wait_running I... : each node has booted and the cluster lists all of them as running.
cluster_wait_running() {
  local i want=$# start=$SECONDS n
  for i in "$@"; do bc_await_booted "$i" || return 1; done
  while :; do
    n=$(cluster_ctl "$1" -q cluster_status --formatter json 2>/dev/null | jq '.running_nodes | length' 2>/dev/null || echo 0)
    [ "${n:-0}" -ge "$want" ] && return 0
    [ $((SECONDS - start)) -lt 120 ] || { echo "broker cluster: only ${n:-0} of $want nodes running after 120 s" >&2; return 1; }
    sleep 1
  done
}

# cluster_live: a node that answers (the first one that does)
cluster_live() {
  local i
  for i in $(seq "$BC_N"); do
    [ -n "${BC_PID[$i]:-}" ] && bc_alive "$i" && { echo "$i"; return 0; }
  done
  echo 1
}

cluster_down() {
  set +e   # an EXIT trap: a failed stop must not end the clean-up under the caller's set -e
  local i pid stoppers=()
  [ -n "$BC_DIR" ] && [ -d "$BC_DIR" ] || return 0
  for i in $(seq "$BC_N"); do
    [ -n "${BC_PID[$i]:-}" ] || continue
    # shellcheck disable=SC2046
    timeout 60 env $(bc_env "$i") "$BC_BIN/rabbitmqctl" -n "$(bc_node "$i")" -q stop >/dev/null 2>&1 &
    stoppers+=($!)
  done
  for pid in "${stoppers[@]}"; do wait "$pid" 2>/dev/null || true; done
  for i in $(seq "$BC_N"); do
    pid=$(cluster_pid "$i")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    bc_wait_gone "$i" 30
  done
  # a VM interrupted before it wrote its pid file: found by its home, this cluster's own temporary directory
  for pid in $(pgrep -f -- "-home $BC_DIR " 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  if [ "${DRILL_KEEP:-0}" = 1 ]; then
    bc_say "stopped; DRILL_KEEP=1: logs kept in $BC_DIR"
  else
    rm -rf "$BC_DIR"
    bc_say "stopped and removed"
  fi
}

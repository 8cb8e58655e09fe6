#!/usr/bin/env bash
# Broker-cluster drill: starts a private 3-node RabbitMQ cluster on this machine (the Debian package's
# rabbitmq-server, node names rc1..rc3@localhost, AMQP ports from --base-port, management ports 10000 above,
# distribution ports 20000 above, data under a temporary directory, one Erlang cookie; see
# scripts/lib/broker-cluster.sh), runs a scheduler, N workers and a probe (real processes) on it with
# rabbit.addresses listing the three nodes, rabbit.management.url listing their management APIs and
# queue.low.type=quorum, so every slot queue is a quorum queue replicated on all three nodes (checked with
# rabbitmqctl list_queues name type leader members: a queue with fewer than 3 members fails the drill). Under load:
#   fault 1: the broker node holding the most client connections is killed (every client on it moves to
#            the next node of its list); it is started again and rejoins;
#   fault 2: the node leading the most slot queues is killed (their Raft groups elect new leaders on the
#            other two); it is started again.
# For each fault it prints the recovery times, from the kill to
#   clients moved:   the last "connected to RabbitMQ node" of a platform process that lost its connection,
#   consuming:       every slot queue has its single active consumer on a running node again (management
#                    API, figures up to 1 s old here),
#   committing:      every slot that was committing before commits a result inspected after the kill
#                    (per slot: min/median/max, the last one being the recovery of the whole fleet),
# and the queue leaders per node before and after. Ends with the ledger of the probe's results (0 lost, 0
# duplicated in history) and tears the cluster down (also on Ctrl-C or failure).
#
#   scripts/drill-broker-cluster.sh [--minutes 3] [--slots 32] [--workers 2] [--devices 2000] [--interval-ms 5000]
#                                   [--fault kill|stop] [--base-port 5681] [--jar PATH]
#
#   --minutes N    load time: N/3 minutes before each fault and after the second (1 is the short version)
#   --fault F      kill (default): kill -9 of the node's Erlang VM, a crash; stop: rabbitmqctl stop, a
#                  graceful shutdown (the node hands its queue leaderships over first)
#   --base-port P  AMQP port of rc1 (rc2, rc3: P+1, P+2); must not touch the shared broker's 5672/15672/25672
#   --jar PATH     node jar to run (default target/node.jar, built with mvn only if missing)
# The shared broker (rabbit@localhost on 5672) is never touched; PostgreSQL and Redis are the shared ones.
# Uses its own schema, queue names and Redis channels (drill_<epoch>) and removes them at the end. The last
# line is "ledger: produced N, lost L, duplicated D, unexpected U, stale S"; exits 1 if L, D or S is non-zero
# or a check failed, 0 otherwise (2 on a bad argument). Needs root (ensure-services.sh, the broker nodes).
set -euo pipefail
cd "$(dirname "$0")/.."
DRILL=drill-broker-cluster
source scripts/lib/drill-lib.sh
source scripts/lib/broker-cluster.sh

minutes=3 slots=32 workers=2 devices=2000 interval=5000 fault=kill base_port=5681 jarpath=""
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) drill_need "$@"; minutes=$2; shift 2 ;;
    --slots) drill_need "$@"; slots=$2; shift 2 ;;
    --workers) drill_need "$@"; workers=$2; shift 2 ;;
    --devices) drill_need "$@"; devices=$2; shift 2 ;;
    --interval-ms) drill_need "$@"; interval=$2; shift 2 ;;
    --fault) drill_need "$@"; fault=$2; shift 2 ;;
    --base-port) drill_need "$@"; base_port=$2; shift 2 ;;
    --jar) drill_need "$@"; jarpath=$2; shift 2 ;;
    -h|--help) drill_help "$0"; exit 0 ;;
    *) drill_usage_error "unknown argument '$1'" ;;
  esac
done
drill_int --minutes "$minutes" 1
drill_int --slots "$slots" 2
drill_int --workers "$workers" 1
drill_int --devices "$devices" 1
drill_int --interval-ms "$interval" 100
drill_int --base-port "$base_port" 1024
[ "$base_port" -le 55530 ] || drill_usage_error "--base-port must be at most 55530 (its distribution ports are 20000 above)"
case "$fault" in kill | stop) ;; *) drill_usage_error "--fault must be kill or stop, not '$fault'" ;; esac
command -v jq >/dev/null 2>&1 || drill_die "'jq' is not installed"
nodes=3
segment=$((minutes * 20))

drill_prepare_jar "$jarpath"
trap cluster_down EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cluster_up "$nodes" "$base_port" || drill_die "the broker cluster did not come up (logs: ${BC_DIR:-?})"
drill_setup "$slots"
# drill_setup's trap stops the processes and removes the schema and queues (on the cluster): the cluster goes
# after that. Interrupted while a broker node is down, deleting quorum queues waits on the missing member for
# minutes: the cluster (and its queues with it) goes first, and the schema is dropped here.
drill_exit() {
  set +e
  local i down=0
  for i in $(seq "$nodes"); do bc_alive "$i" || down=1; done
  if [ "$down" = 0 ]; then
    drill_cleanup
    cluster_down
    return
  fi
  say "a broker node is down: removing the cluster before the processes' teardown"
  cluster_down
  drill_cleanup
  if [ "${DRILL_KEEP:-0}" != 1 ]; then
    drill_sql "drop schema if exists $name cascade" >/dev/null 2>&1 && say "dropped schema $name (the queues went with the cluster)"
  fi
}
trap drill_exit EXIT
common+=(--rabbit.addresses="$cluster_addresses" --rabbit.management.url="$cluster_mgmt_urls" --queue.low.type=quorum)

# drill-lib's rabbitmqctl calls go to a running node of the drill's cluster. The drill itself polls the
# management API instead: on a loaded machine one rabbitmqctl call took 1.5 min (load average 34 on 2 cores).
rabbitmqctl() { cluster_ctl "$(cluster_live)" "$@"; }

# mgmt_get PATH: a management API GET on a running node
mgmt_get() { curl -sf --max-time 30 -u guest:guest "http://127.0.0.1:$(bc_mgmt_port "$(cluster_live)")$1"; }

# queues_json: this drill's queues with type, leader, members, online members, messages and consumers
queues_json() {
  mgmt_get "/api/queues/%2F?columns=name,type,leader,members,online,messages,consumers" |
    jq --arg p "$name." '[.[] | select(.name | startswith($p))]'
}

# drill-lib's queue figures ("messages consumers0 consumers_other dead total" of the slot queues) from the API
drill_queue_stats() {
  local out
  out=$(queues_json 2>/dev/null) || { echo "? ? ? ? 0"; return 0; }
  jq -r --arg p "$name.status.s" --arg d "$name.dead" '[.[] | select(.name | startswith($p))] as $s
      | "\([$s[].messages // 0] | add // 0) \([$s[] | select((.consumers // 0) == 0)] | length) \([$s[] | select((.consumers // 0) > 1)] | length) \([.[] | select(.name == $d) | .messages // 0] | add // 0) \($s | length)"' <<<"$out"
}

# leaders: "rc1@localhost 12, rc2@localhost 50, ..." for this drill's slot queues
leaders() {
  queues_json 2>/dev/null | jq -r --arg p "$name.status.s" '[.[] | select(.name | startswith($p)) | .leader // "none"] | group_by(.)
      | map("\(.[0]) \(length)") | join(", ")'
}

# check_replicas VIA: every quorum queue of this drill has a member on each of the 3 nodes (drill_fail
# otherwise). VIA rabbitmqctl: asks rabbitmqctl list_queues name type leader members; api: the management API.
check_replicas() {
  local out total short
  if [ "$1" = rabbitmqctl ]; then
    out=$(rabbitmqctl -q list_queues --formatter json name type leader members 2>/dev/null |
      jq --arg p "$name." '[.[] | select(.name | startswith($p))]') || { drill_fail "rabbitmqctl list_queues failed"; return 0; }
  else
    out=$(queues_json) || { drill_fail "the management API did not list the queues"; return 0; }
  fi
  total=$(jq '[.[] | select(.type == "quorum")] | length' <<<"$out")
  short=$(jq -r --argjson n "$nodes" '[.[] | select(.type == "quorum") | select((.members | length) < $n) | .name] | join(" ")' <<<"$out")
  say "replication ($1): $total quorum queues of this drill, $(jq -r '[.[] | select(.type == "quorum") | (.members | length)] | group_by(.)
      | map("\(length) with \(.[0]) members") | join(", ")' <<<"$out"); other types: $(jq '[.[] | select(.type != "quorum")] | length' <<<"$out")"
  say "replication ($1): e.g. $(jq -r --arg q "$name.status.s000.normal" '.[] | select(.name == $q) | "\(.name) leader \(.leader) members \(.members | join(" "))"' <<<"$out")"
  [ -z "$short" ] || drill_fail "quorum queue(s) with fewer than $nodes members: $short"
  [ "$total" -gt 0 ] || drill_fail "no quorum queue found ($1)"
}

# node_most_connections: the index of the node holding the most client connections (management API)
node_most_connections() {
  mgmt_get "/api/connections?columns=node" | jq -r '[.[].node] | group_by(.) | max_by(length) | .[0]' | sed 's/^rc\([0-9]*\)@.*/\1/'
}

# node_most_leaders: the index of the node leading the most slot queues of this drill
node_most_leaders() {
  queues_json | jq -r --arg p "$name.status.s" '[.[] | select(.name | startswith($p)) | .leader] | group_by(.) | max_by(length) | .[0]' |
    sed 's/^rc\([0-9]*\)@.*/\1/'
}

# wait_online: every quorum queue of this drill has all 3 members online again (a restarted node caught up)
wait_online() {
  local start=$SECONDS n
  while :; do
    n=$(queues_json 2>/dev/null | jq --argjson n "$nodes" '[.[] | select(.type == "quorum") | select((.online // [] | length) < $n)] | length' 2>/dev/null || echo '?')
    [ "$n" = 0 ] && return 0
    [ $((SECONDS - start)) -lt 300 ] || { drill_fail "$n quorum queue(s) without all members online 300 s after the restart"; return 0; }
    sleep 2
  done
}

# ------------------------------------------------------------------ one fault

# fault_and_measure LABEL NODE_INDEX
fault_and_measure() {
  local label=$1 victim=$2 t0 id logs=() offs=() i moved last_conn consuming="" start committing q q0 qn active n
  say "$label: leaders before: $(leaders)"
  active=$(drill_sql "select string_agg(distinct slot_id::text, ',') from device_status_history where received_at > now() - interval '30 seconds'")
  for id in "${!DRILL_PID[@]}"; do logs+=("$id"); offs+=("$(stat -c %s "$dir/$id.log")"); done
  t0=$(now_ms)
  if [ "$fault" = kill ]; then
    cluster_kill "$victim"
  else
    cluster_stop "$victim"
  fi
  say "$label: $fault rc$victim@localhost ($(( $(now_ms) - t0 )) ms to carry out)"

  # consuming: every slot queue has its single active consumer on a connection to a running node. (The queues'
  # consumer counts are no use here: a quorum queue keeps the consumers of a lost node's connections, marked
  # suspected-down, until that node is back — they count beside the new active one.)
  start=$SECONDS
  local nq
  nq=$(queues_json | jq --arg p "$name.status.s" '[.[] | select(.name | startswith($p))] | length')
  while :; do
    n=$(mgmt_get "/api/consumers/%2F" 2>/dev/null | jq --arg p "$name.status.s" --arg dead "$(bc_node "$victim")" '[.[]
        | select(.queue.name | startswith($p)) | select(.active == true and .channel_details.node != $dead) | .queue.name] | unique | length' || echo 0)
    if [ "$n" = "$nq" ]; then consuming=$(( $(now_ms) - t0 )); break; fi
    [ $((SECONDS - start)) -lt 300 ] || { drill_fail "$label: only ${n:-0} of $nq slot queues with an active consumer 300 s after the fault"; break; }
    sleep 0.5
  done
  read -r q q0 qn _ _ < <(drill_queue_stats)
  say "$label: slot queues whose consumer count still includes a consumer of the lost node: $qn of $nq"

  # committing: every slot that committed in the 30 s before commits a result inspected after the fault
  start=$SECONDS
  local rows total
  while :; do
    rows=$(drill_sql "select s, (extract(epoch from min(h.received_at)) * 1000)::bigint - $t0
        from unnest(array[${active:-0}]::int[]) s left join device_status_history h on h.slot_id = s and h.collected_at > to_timestamp($t0 / 1000.0)
        group by s")
    total=$(grep -c '|' <<<"$rows" || true)
    n=$(awk -F'|' '$2 != ""' <<<"$rows" | wc -l)
    [ "$n" = "$total" ] && break
    [ $((SECONDS - start)) -lt 300 ] || { drill_fail "$label: $((total - n)) slot(s) committed nothing inspected after the fault within 300 s"; break; }
    sleep 0.5
  done
  committing=$(awk -F'|' '$2 != "" { printf "%s ", $2 }' <<<"$rows")

  # clients moved: platform processes that logged a (re)connect after the fault
  moved="" last_conn=""
  for i in "${!logs[@]}"; do
    local line t
    line=$(tail -c +$((offs[i] + 1)) "$dir/${logs[$i]}.log" | grep 'connected to RabbitMQ node' | tail -1 || true)
    [ -n "$line" ] || continue
    t=$(( $(log_time_ms "${line%% *}") - t0 ))
    moved+="${logs[$i]}(+${t} ms: $(sed 's/.*connected to RabbitMQ node //' <<<"$line")) "
    [ -z "$last_conn" ] || [ "$t" -gt "$last_conn" ] && last_conn=$t
  done
  say "$label: leaders after:  $(leaders)"
  say "$label: clients that reconnected: ${moved:-none}"
  say "$label: every slot queue consumed again after $consuming ms"
  say "$label: per slot, kill -> first commit of a result inspected after it: $(drill_stats "$committing")"
  fault_lines+=("$label ($fault rc$victim): clients moved ${last_conn:-n/a} ms (last), consuming $consuming ms, every slot committing $(drill_pct "$committing" 100) ms (median $(drill_pct "$committing" 50) ms, $(wc -w <<<"$committing") slots)")

  r0=$(now_ms)
  cluster_start "$victim"
  cluster_wait_running $(seq "$nodes") || drill_die "rc$victim did not rejoin the cluster"
  wait_online
  say "$label: rc$victim back in the cluster, every quorum queue with all $nodes members online, $(( $(now_ms) - r0 )) ms after its start"
}

# ------------------------------------------------------------------ the run

ids=()
for i in $(seq "$workers"); do ids+=("w$i"); done
say "plan: broker nodes $cluster_addresses; scheduler s1, workers ${ids[*]}, probe p1 with $devices devices every $interval ms; faults: $fault the node with the most connections, then the node leading the most slot queues; ${segment} s of load before each"
for id in "${ids[@]}"; do drill_start "$id" worker; done
for id in "${ids[@]}"; do drill_wait_up "$id"; done
drill_wait_registered "${ids[@]}"
drill_start s1 scheduler
drill_wait_up s1
drill_start_probe p1 "$devices" "$interval"
drill_wait_up p1
drill_wait_settled 300
drill_wait_flowing "${ids[@]}"
say "settled, results flowing: $(drill_holdings)"
check_replicas rabbitmqctl
say "connections per node: $(mgmt_get "/api/connections?columns=node" | jq -r '[.[].node] | group_by(.) | map("\(.[0]) \(length)") | join(", ")')"

fault_lines=()
say "load for ${segment} s"
sleep "$segment"
fault_and_measure "fault 1" "$(node_most_connections)"
say "load for ${segment} s"
sleep "$segment"
fault_and_measure "fault 2" "$(node_most_leaders)"
say "load for ${segment} s"
sleep "$segment"
check_replicas api

echo
echo "== broker cluster: $nodes RabbitMQ nodes, $workers workers, $slots slots, $devices devices every $interval ms"
printf '%s\n' "${fault_lines[@]}"
echo
# the ledger needs every slot queue consumed; when one is not, say which and who owns its slot before giving up
start=$SECONDS
while ! drill_settled; do
  if [ $((SECONDS - start)) -ge 300 ]; then
    say "not settled after 300 s: $drill_settle_info; holdings: $(drill_holdings)"
    queues_json | jq -r --arg p "$name.status.s" '.[] | select(.name | startswith($p)) | select((.consumers // 0) != 1)
        | "  \(.name): \(.consumers) consumer(s), \(.messages) message(s), leader \(.leader), online \(.online | join(" "))"' |
      while read -r line; do
        slot=$(sed -E 's/.*status\.s0*([0-9]+)\..*/\1/' <<<"$line")
        echo "$line; lease: $(drill_sql "select owner_worker_id || ' ' || state || ' epoch ' || lease_epoch from slot_lease where slot_id = $slot")"
      done
    drill_die "slot queues without their consumer (above): the ledger cannot drain them"
  fi
  sleep 1
done
drill_finish p1

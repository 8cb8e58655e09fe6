#!/usr/bin/env bash
# Table lock drill: what an operator's VACUUM FULL, ALTER TABLE or LOCK TABLE on one table does to a running
# platform. A scheduler, a worker and a probe (real processes) under load; then, table by table, a psql session
# holds LOCK TABLE <table> IN ACCESS EXCLUSIVE MODE for --hold-s seconds while --api-clients console users each search
# devices and read the overview every second (GET /api/v1/devices, GET /api/v1/overview: it counts active alerts and
# pending dead letters), then lets go for --gap-s seconds. For each table it prints: results
# committed during the hold against the same time before it, how old the newest current-status row got, how old the
# worker's heartbeat got (as the leader reads it), the API's answers (200, 503 "locked", other) and their longest
# time, /health/ready of the scheduler and the worker, and the leader's failed rounds. A lock may stall what needs
# its table; it must not stall the control plane (heartbeats, the leader's rounds, health checks) nor lose anything.
#
#   scripts/drill-locks.sh [--hold-s 20] [--gap-s 10] [--devices 2000] [--interval-ms 2000] [--api-clients 4]
#                          [--tables device_status_current,device_status_history,...] [--jar PATH]
#
#   --hold-s       how long each table's lock is held (the leader suspects a worker after 15 s without a heartbeat)
#   --tables       the tables to lock, one after the other (default: current status, history, rollups, alerts,
#                  the inventory, dead letters, shed counts)
#   --api-clients  console users during a hold: each sends a device search and an overview request every second
#   --jar PATH     node jar to run (default target/node.jar, built with mvn only if missing)
# Uses its own schema and queue names (drill_*) and removes them at the end, also on Ctrl-C or failure. The last
# line is "ledger: produced N, lost L, duplicated D, unexpected U, stale S"; exits 1 if L, D or S is non-zero, if
# the leader suspected the worker, if a leader round failed during a hold, if the worker's heartbeat got older than
# 10 s, if the scheduler's /health/ready failed, or if an API request got anything but 200 or 503 (or none within 30 s);
# 0 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
DRILL=drill-locks
source scripts/lib/drill-lib.sh

hold=20 gap=10 devices=2000 interval=2000 clients=4 jarpath=""
tables=device_status_current,device_status_history,device_status_rollup_1m,alert_current,device_resource,dead_letter,shed_count
while [ $# -gt 0 ]; do
  case "$1" in
    --hold-s) drill_need "$@"; hold=$2; shift 2 ;;
    --gap-s) drill_need "$@"; gap=$2; shift 2 ;;
    --devices) drill_need "$@"; devices=$2; shift 2 ;;
    --interval-ms) drill_need "$@"; interval=$2; shift 2 ;;
    --api-clients) drill_need "$@"; clients=$2; shift 2 ;;
    --tables) drill_need "$@"; tables=$2; shift 2 ;;
    --jar) drill_need "$@"; jarpath=$2; shift 2 ;;
    -h|--help) drill_help "$0"; exit 0 ;;
    *) drill_usage_error "unknown argument '$1'" ;;
  esac
done
drill_int --hold-s "$hold" 1
drill_int --gap-s "$gap" 1
drill_int --devices "$devices" 1
drill_int --interval-ms "$interval" 100
drill_int --api-clients "$clients" 0
[[ "$tables" =~ ^[a-z_0-9]+(,[a-z_0-9]+)*$ ]] || drill_usage_error "--tables: table names separated by commas (got '$tables')"

drill_prepare_jar "$jarpath"
holder_pid=""
drill_cleanup_hook() { [ -z "$holder_pid" ] || kill "$holder_pid" 2>/dev/null || true; }
drill_setup 16
say "drill: each of $tables locked for ${hold} s (then free ${gap} s); $devices devices every $interval ms; $clients console users (a search and an overview a second each)"

drill_start s1 scheduler
drill_wait_up s1
drill_start w1 worker
drill_wait_up w1
drill_start_probe p1 "$devices" "$interval"
drill_wait_up p1
drill_wait_settled 120
sleep 10

# a sample that must not itself wait on the lock: 0.5 s at most, "locked" past it
probe_sql() { PGOPTIONS="-c search_path=$name -c client_min_messages=warning -c lock_timeout=500" \
  psql -h 127.0.0.1 -U postgres -d test -qtAX -c "$1" 2>/dev/null || echo locked; }
current_age() { probe_sql "select coalesce(round(extract(epoch from now() - max(updated_at))::numeric, 1), -1) from device_status_current"; }
heartbeat_age() { probe_sql "select round(extract(epoch from now() - last_heartbeat)::numeric, 1) from worker_heartbeat where worker_id = 'w1'"; }
ready() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:${DRILL_PORT[$1]}/health/ready" || true; }
# the largest number among the samples; n/a when none is a number (every sample locked)
max_of() { printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g | tail -1 | grep . || echo n/a; }
# one console request to the scheduler ($2: its path): "code seconds" appended to $1
request() { curl -s "${AUTH[@]}" -o /dev/null -w '%{http_code} %{time_total}\n' --max-time 30 \
  "http://127.0.0.1:${DRILL_PORT[s1]}$2" >>"$1" 2>/dev/null || echo "000 30" >>"$1"; }

IFS=, read -r -a list <<<"$tables"
summary=()
for t in "${list[@]}"; do
  [ "$(drill_sql "select count(*) from pg_class where relname = '$t' and relnamespace = '$name'::regnamespace")" = 1 ] ||
    { drill_fail "no table $t in the schema"; continue; }
  answers="$dir/api-$t.txt"
  : >"$answers"
  before=$(drill_metric w1 worker_committed_total)
  sleep "$hold"   # the same time without the lock, to compare
  c0=$(drill_metric w1 worker_committed_total)
  failed0=$(grep -c "scheduler round failed" "$dir/s1.log" || true)
  (drill_sql "begin; lock table $t in access exclusive mode; select pg_sleep($hold); commit" >/dev/null 2>&1 || true) &
  holder_pid=$!
  ages=() beats=() s_ready=() w_ready=() requests=()
  t0=$(date +%s)
  while [ $(( $(date +%s) - t0 )) -lt "$hold" ]; do
    for _ in $(seq "$clients"); do
      request "$answers" "/api/v1/devices?q=sim&limit=50" & requests+=($!)
      request "$answers" /api/v1/overview & requests+=($!)
    done
    ages+=("$(current_age)") beats+=("$(heartbeat_age)") s_ready+=("$(ready s1)") w_ready+=("$(ready w1)")
    c1=$(drill_metric w1 worker_committed_total)   # the last one read while the lock is held (what commits at its release is not counted)
    sleep 1
  done
  wait "$holder_pid" 2>/dev/null || true
  holder_pid=""
  sleep "$gap"
  for pid in "${requests[@]}"; do wait "$pid" 2>/dev/null || true; done   # the requests still out
  failed=$(( $(grep -c "scheduler round failed" "$dir/s1.log" || true) - failed0 ))
  ok=$(awk '$1 == 200' "$answers" | wc -l)
  locked=$(awk '$1 == 503' "$answers" | wc -l)
  other=$(awk '$1 != 200 && $1 != 503' "$answers" | wc -l)
  slowest=$(awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { printf "%.1f", m }' "$answers")
  s_bad=$(printf '%s\n' "${s_ready[@]}" | grep -vc '^200$' || true)
  w_bad=$(printf '%s\n' "${w_ready[@]}" | grep -vc '^200$' || true)
  line="$t: committed $(drill_delta "$c0" "$c1") during the hold ($(drill_delta "$before" "$c0") the ${hold} s before);"
  line+=" newest current row at most $(max_of "${ages[@]}") s old ($(printf '%s\n' "${ages[@]}" | grep -c locked || true) samples locked);"
  line+=" w1's heartbeat at most $(max_of "${beats[@]}") s old; API $ok x 200, $locked x 503, $other other, slowest ${slowest} s;"
  line+=" /health/ready not 200: s1 $s_bad, w1 $w_bad of ${#s_ready[@]}; leader rounds failed: $failed"
  say "$line"
  summary+=("$line")
  [ "$failed" = 0 ] || drill_fail "$t: $failed leader round(s) failed during the hold"
  [ "$other" = 0 ] || drill_fail "$t: $other API request(s) answered neither 200 nor 503 (or not within 30 s)"
  [ "$s_bad" = 0 ] || drill_fail "$t: the scheduler's /health/ready failed $s_bad time(s)"
  hb=$(max_of "${beats[@]}")
  if [ "$hb" != n/a ] && awk -v a="$hb" 'BEGIN { exit !(a > 10) }'; then drill_fail "$t: w1's heartbeat got ${hb} s old"; fi
done

say "summary (each table locked ${hold} s):"
printf '  %s\n' "${summary[@]}"
drill_expect_not_suspected w1 s1 "during a lock"
drill_finish p1

#!/usr/bin/env bash
# Overload drill (issue 12): a scheduler, a worker and a probe (three real processes) against the local
# services. First measures what the worker commits when offered more than it can take (or takes
# --capacity), then offers FACTOR x that capacity for the given minutes and prints, per priority
# (1 critical, 2 normal, 3 low): produced, committed during the overload and by the end, shed (n/a until the
# probe's outbox sheds), lost, and the probe->commit lag p50/p99/max from the database (history
# received_at - collected_at of the results produced during the overload; critical results are history
# retention class 1, the others 2); the fleet modes the leader entered and when (GET /api/v1/fleet-mode),
# the probe's effective modes (its log), the checks each backpressure mode skipped; then the ledger.
#
#   scripts/drill-overload.sh [--factor 3] [--minutes 5] [--devices 20000] [--critical-pct 5] [--low-pct 10]
#                             [--capacity N] [--slots 16] [--jar PATH]
#
#   --capacity N      results/s the worker commits; skips the measurement: DRILL_CAP_OFFER (10000) results/s
#                     offered, the committed rate over DRILL_CAP_WINDOW_S (30) s after DRILL_CAP_WARMUP_S (20) s,
#                     then a wait until the queues are empty again. On a shared machine the figure moves with
#                     the other load: the report also gives what was committed during the overload
#   --devices N       inspected devices; the interval is devices / (factor x capacity)
#   --critical-pct P  share of critical devices (priority 1; default 5, like the simulator's every 20th);
#   --low-pct P       share of low devices (priority 3); the rest are normal. The drill writes them to a
#                     JSON-lines inventory (check type sim): crit-NNNNNN, norm-NNNNNN, low-NNNNNN
#   --jar PATH        node jar to run (default target/node.jar, built with mvn only if missing); the drill
#                     runs a private copy in its run directory (target/drill/drill_<epoch>/, with the logs)
# Uses its own schema, queue names and Redis channels (drill_<epoch>) and removes them at the end, also on
# Ctrl-C or failure. Nothing may be lost that is not recorded as shed, and nothing critical may be lost or
# shed. The last line is "ledger: produced N, lost L, duplicated D, unexpected U, stale S"; exits 1 on a
# ledger failure or a critical result lost or shed, 0 otherwise (2 on a bad argument). Needs root
# (ensure-services.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
DRILL=drill-overload
source scripts/lib/drill-lib.sh

factor=3 minutes=5 devices=20000 critical_pct=5 low_pct=10 capacity="" slots=16 jarpath=""
while [ $# -gt 0 ]; do
  case "$1" in
    --factor) drill_need "$@"; factor=$2; shift 2 ;;
    --minutes) drill_need "$@"; minutes=$2; shift 2 ;;
    --devices) drill_need "$@"; devices=$2; shift 2 ;;
    --critical-pct) drill_need "$@"; critical_pct=$2; shift 2 ;;
    --low-pct) drill_need "$@"; low_pct=$2; shift 2 ;;
    --capacity) drill_need "$@"; capacity=$2; shift 2 ;;
    --slots) drill_need "$@"; slots=$2; shift 2 ;;
    --jar) drill_need "$@"; jarpath=$2; shift 2 ;;
    -h|--help) drill_help "$0"; exit 0 ;;
    *) drill_usage_error "unknown argument '$1'" ;;
  esac
done
drill_int --factor "$factor" 1
drill_int --minutes "$minutes" 1
drill_int --devices "$devices" 100
drill_int --critical-pct "$critical_pct" 0
drill_int --low-pct "$low_pct" 0
drill_int --slots "$slots" 1
[ -z "$capacity" ] || drill_int --capacity "$capacity" 1
[ $((critical_pct + low_pct)) -le 100 ] || drill_usage_error "--critical-pct + --low-pct must be at most 100"
command -v jq >/dev/null 2>&1 || drill_die "'jq' is not installed (the drill reads the fleet mode's history with it)"

drill_prepare_jar "$jarpath"
drill_setup "$slots"

# ------------------------------------------------------------------ the devices
inventory="$dir/devices.jsonl"
awk -v n="$devices" -v c="$critical_pct" -v l="$low_pct" 'BEGIN {
  for (i = 1; i <= n; i++) {
    r = i % 100
    if (r < c) { p = 1; id = "crit" } else if (r >= 100 - l) { p = 3; id = "low" } else { p = 2; id = "norm" }
    printf "{\"device_id\":\"%s-%06d\",\"priority\":%d,\"check_type\":\"sim\"}\n", id, i, p
  } }' >"$inventory"
per_prio=$(awk -F'"priority":' '{ n[substr($2, 1, 1)]++ } END { printf "%d %d %d", n[1], n[2], n[3] }' "$inventory")
read -r n_crit n_norm n_low <<<"$per_prio"
# a device's priority from its id, in SQL: prio_sql COLUMN
prio_sql() { echo "case when $1 like 'crit-%' then 1 when $1 like 'low-%' then 3 else 2 end"; }
say "plan: $devices devices ($n_crit critical, $n_norm normal, $n_low low); offer ${factor}x capacity for $minutes min"

start_probe() { drill_start_probe p1 0 "$1" --probe.inventory.file="$inventory"; drill_wait_up p1; }
ms_of() { awk -v s="${1:-0}" 'BEGIN { printf "%d", s * 1000 }'; }
outbox_sql() { sqlite3 -cmd ".timeout 10000" "$dir/outbox-p1.db" "$1"; }
# the greatest row id the probe's outbox has given (kept rows and, once shedding exists, shed ones)
outbox_max_id() {
  local shed=0
  [ -f "$dir/outbox-p1.db" ] || { echo 0; return 0; }   # the probe has not run yet
  outbox_sql "select 1 from sqlite_master where name = 'shed_row'" | grep -q 1 &&
    shed=$(outbox_sql "select coalesce(max(id), 0) from shed_row")
  outbox_sql "select max(coalesce(max(id), 0), $shed) from outbox"
}
backlog() { read -r q _ <<<"$(drill_queue_stats)"; echo "$q"; }

drill_start w1 worker
drill_wait_up w1
drill_wait_registered w1
drill_start s1 scheduler
drill_wait_up s1

# ------------------------------------------------------------------ capacity
if [ -z "$capacity" ]; then
  cap_offer=${DRILL_CAP_OFFER:-10000} cap_warmup=${DRILL_CAP_WARMUP_S:-20} cap_window=${DRILL_CAP_WINDOW_S:-30}
  cap_interval=$(( devices * 1000 / cap_offer ))
  [ "$cap_interval" -ge 100 ] || cap_interval=100
  say "capacity: offering $((devices * 1000 / cap_interval))/s ($devices devices every $cap_interval ms) for $cap_warmup s + a $cap_window s window"
  start_probe "$cap_interval"
  drill_wait_settled 120
  drill_wait_flowing w1
  sleep "$cap_warmup"
  c0=$(drill_metric w1 worker_committed_total) a0=$(drill_metric p1 outbox_appended_total) q0=$(backlog)
  sleep "$cap_window"
  c1=$(drill_metric w1 worker_committed_total) a1=$(drill_metric p1 outbox_appended_total) q1=$(backlog)
  capacity=$(( (c1 - c0) / cap_window ))
  [ "$capacity" -ge 1 ] || drill_die "the worker committed nothing in the capacity window"
  say "capacity: $capacity results/s committed (the probe made $(( (a1 - a0) / cap_window ))/s; slot queues $q0 -> $q1 messages)"
  [ "$q1" -gt "$q0" ] || say "note: the queues did not grow: the worker was not saturated, so capacity is at least $capacity/s"
  drill_stop p1 60
  start=$SECONDS
  while q=$(backlog); [ "$q" != 0 ]; do
    [ $((SECONDS - start)) -lt 600 ] || drill_die "the slot queues still hold $q messages 600 s after the capacity run"
    sleep 2
  done
  say "capacity run's backlog drained in $((SECONDS - start)) s"
else
  say "capacity: $capacity results/s (--capacity)"
fi

# ------------------------------------------------------------------ overload
offered=$(( factor * capacity ))
interval=$(( devices * 1000 / offered ))
[ "$interval" -ge 100 ] || drill_usage_error "$devices devices cannot offer $offered/s (interval $interval ms < 100): raise --devices"
offered=$(( devices * 1000 / interval ))
id0=$(outbox_max_id)
say "overload: offering $offered/s = ${factor}x $capacity/s ($devices devices every $interval ms) for $minutes min"
declare -a skipped shed_metric
start_probe "$interval"
t_start=$(now_ms)
t_end=$(( t_start + minutes * 60000 ))
while [ "$(now_ms)" -lt "$t_end" ]; do
  c_before=$(drill_metric w1 worker_committed_total) t_before=$(now_ms)
  left=$(( (t_end - $(now_ms)) / 1000 ))
  [ "$left" -le 15 ] || left=15
  [ "$left" -ge 1 ] || left=1
  sleep "$left"
  rate=$(( ($(drill_metric w1 worker_committed_total) - c_before) * 1000 / ($(now_ms) - t_before) ))
  say "  +$(( ($(now_ms) - t_start) / 1000 )) s: committing $rate/s, slot queues $(backlog), outbox depth $(drill_metric p1 outbox_depth)," \
    "fleet $(drill_mode_now s1 fleet_mode), probe $(drill_mode_now p1 probe_mode 'source="effective"')," \
    "worker took high results aged p99 $(ms_of "$(drill_metric w1 worker_lane_oldest_taken_age_seconds 'lane="high",quantile="0.99"')") ms" \
    "(normal $(ms_of "$(drill_metric w1 worker_lane_oldest_taken_age_seconds 'lane="normal",quantile="0.99"')") ms)"
done
t_end=$(now_ms)
id1=$(outbox_max_id)
for p in 1 2 3; do
  skipped[$p]=$(drill_metric p1 probe_mode_skipped_total "priority=\"$p\"")
  shed_metric[$p]=$(drill_metric_na p1 probe_outbox_shed_total "priority=\"$p\"")
done
say "overload over after $(( (t_end - t_start) / 1000 )) s; outbox rows $((id0 + 1))..$id1 were made during it"

# ------------------------------------------------------------------ the report, once the ledger has counted everything
# p50/p99/max of confirmed_at - created_at (both outbox times: append, confirm marked; outbox_confirmed holds the
# confirmed ids and times) of a priority's rows made during the overload
probe_stage() {
  local p=$1 n
  local rows="from outbox o join outbox_confirmed c on c.id = o.id where o.id > $id0 and o.id <= $id1 and o.priority = $p"
  n=$(outbox_sql "select count(*) $rows")
  [ "${n:-0}" -gt 0 ] || { echo "n/a"; return 0; }
  local q="select c.confirmed_at - o.created_at $rows order by 1 limit 1 offset"
  echo "p50 $(outbox_sql "$q $(( n / 2 ))") ms, p99 $(outbox_sql "$q $(( n * 99 / 100 ))") ms, max $(outbox_sql "$q $(( n - 1 ))") ms over $n rows"
}

drill_ledger_hook() {
  local has_shed=0 p row produced in_window total shed lost lag rate nominal
  declare -A stage
  outbox_sql "select 1 from sqlite_master where name = 'shed_row'" | grep -q 1 && has_shed=1
  if [ "$has_shed" = 1 ]; then
    outbox_sql "select message_id, device_id, 0 from outbox where id > $id0 and id <= $id1
                union all select message_id, device_id, 1 from shed_row where id > $id0 and id <= $id1" >"$dir/window.txt"
  else
    outbox_sql "select message_id, device_id, 0 from outbox where id > $id0 and id <= $id1" >"$dir/window.txt"
  fi
  sed -i 's/|/\t/g' "$dir/window.txt"
  drill_sql "drop table if exists overload_window; create table overload_window(message_id varchar(160) primary key,
      device_id varchar(128) not null, shed int not null)" >/dev/null
  PGOPTIONS="-c search_path=$name -c client_min_messages=warning" psql -h 127.0.0.1 -U postgres -d test -qX -v ON_ERROR_STOP=1 \
    -c "\\copy overload_window from '$dir/window.txt'" || drill_die "cannot load the overload's outbox rows into PostgreSQL"
  drill_sql "create table overload_rows as select w.message_id, $(prio_sql w.device_id) prio, w.shed = 1 shed, h.received_at,
      extract(epoch from h.received_at - h.collected_at) * 1000 lag_ms, h.retention_class
      from overload_window w left join device_status_history h using (message_id)" >/dev/null
  local secs=$(( (t_end - t_start) / 1000 )) start=$SECONDS
  # the fleet leaves a mode one step at a time after its dwell: give it (at most 120 s) to come back to NORMAL
  while [ "$(drill_mode_now s1 fleet_mode)" != NORMAL ] && [ $((SECONDS - start)) -lt 120 ]; do sleep 1; done
  echo
  echo "== overload: ${factor}x capacity ($capacity results/s) = $offered/s offered for $secs s; $devices devices every $interval ms, $slots slots"
  printf '%-9s %8s %9s %10s %11s %10s %7s %6s %8s  %s\n' priority devices "offered/s" produced "committed*" "by the end" shed lost skipped \
    "probe->commit lag (database)"
  for p in 1 2 3; do
    case $p in 1) nominal=$(( n_crit * 1000 / interval )) dev=$n_crit label=critical ;; 2) nominal=$(( n_norm * 1000 / interval )) dev=$n_norm label=normal ;;
                3) nominal=$(( n_low * 1000 / interval )) dev=$n_low label=low ;; esac
    row=$(drill_sql "select count(*), count(*) filter (where received_at <= to_timestamp($t_end / 1000.0)),
        count(received_at), count(*) filter (where shed and received_at is null), count(*) filter (where not shed and received_at is null),
        coalesce('p50 ' || round(percentile_cont(0.5) within group (order by lag_ms)) || ' ms, p99 '
          || round(percentile_cont(0.99) within group (order by lag_ms)) || ' ms, max ' || round(max(lag_ms)) || ' ms', 'n/a')
        from overload_rows where prio = $p")
    IFS='|' read -r produced in_window total shed lost lag <<<"$row"
    [ "$has_shed" = 1 ] || shed=n/a
    [ "${shed_metric[$p]}" = n/a ] || [ "$has_shed" = 1 ] || shed="${shed_metric[$p]}(metric)"
    printf '%-9s %8s %9s %10s %11s %10s %7s %6s %8s  %s\n' "$p $label" "$dev" "$nominal" "$produced" "$in_window" "$total" "$shed" "$lost" \
      "${skipped[$p]}" "$lag"
    stage[$p]=$(probe_stage "$p")
    if [ "$p" = 1 ]; then
      [ "$lost" = 0 ] || drill_fail "$lost critical result(s) lost"
      [ "$shed" = n/a ] || [ "${shed%(metric)}" = 0 ] || drill_fail "$shed critical result(s) shed"
      [ "${skipped[1]}" = 0 ] || drill_fail "${skipped[1]} critical check(s) skipped by a backpressure mode"
    fi
  done
  echo "  (* committed = received by PostgreSQL before the overload ended; produced/committed/lag over the results made during it;"
  echo "   skipped = probe_mode_skipped_total; shed = the outbox's shed rows, n/a while the probe cannot shed)"
  echo "the outbox's part of the lag (append -> broker confirm marked, same results; the wait before the append is not in it):"
  for p in 1 2 3; do echo "  priority $p: ${stage[$p]}"; done
  echo "the probe made $(( $(drill_sql "select count(*) from overload_rows") / (secs > 0 ? secs : 1) ))/s of the $offered/s offered" \
    "(a backpressure mode skips checks; the probe's own CPU share limits the rest)"
  local mixed
  mixed=$(drill_sql "select count(*) from overload_rows where received_at is not null and (prio = 1) <> (retention_class = 1)")
  [ "$mixed" = 0 ] || say "note: $mixed stored result(s) whose retention class does not match their priority"
  local committed_rate
  committed_rate=$(( $(drill_sql "select count(*) from device_status_history
      where received_at between to_timestamp($t_start / 1000.0) and to_timestamp($t_end / 1000.0)") / (secs > 0 ? secs : 1) ))
  echo "committed during the overload: $committed_rate/s (all results): the offer was $(awk -v o="$offered" -v c="$committed_rate" \
    'BEGIN { printf "%.1f", (c > 0 ? o / c : 0) }')x what was committed"
  echo "fleet modes (leader, GET /api/v1/fleet-mode; times from the start of the overload):"
  drill_fleet_changes s1 | awk -v t="$t_start" '{ d = ($1 - t) / 1000; $1 = ""; printf "  %+8.1f s %s\n", d, $0 }' | grep . || echo "  none (NORMAL throughout)"
  echo "probe p1 (its log: effective mode with the fleet's and its own; own-mode changes):"
  drill_probe_changes p1 | awk -v t="$t_start" '{ d = ($1 - t) / 1000; $1 = ""; printf "  %+8.1f s %s\n", d, $0 }' | grep . || echo "  none (NORMAL throughout)"
}

drill_finish p1

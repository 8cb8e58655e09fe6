#!/usr/bin/env bash
# DB-degraded write mode drill (issue 12 item 5, seed 000 §7.5): a scheduler, a worker and a probe (real
# processes) under load; then a lock storm on the history table — a psql session holds LOCK TABLE
# device_status_history IN ACCESS EXCLUSIVE MODE for --hold-s seconds, lets go for 1 s, again and again for
# --minutes. With the worker's history lock timeout (worker.degraded.history.lock.timeout.ms, 2 s by default) a
# batch whose history write waits that long is written without its history rows, which go to the back-fill queue,
# and so are the next ones until history takes rows again: current status and alerts go on through every hold.
# With --lock-timeout-ms 0 the commits wait on each lock instead (a stall of any kind): the worker enters
# DEGRADED, stays there while commits are slow and leaves after its dwell once the storm is over. Either way it
# back-fills what it spilled. Prints every mode change with its reason, the spilled and back-filled counts, how old
# the newest current-status row got during the storm, and the ledger (lost / duplicated / stale must be 0).
#
#   scripts/drill-degraded.sh [--minutes 5] [--devices 2000] [--interval-ms 2000] [--hold-s 4] [--dwell-s 30]
#                             [--lock-timeout-ms 2000] [--jar PATH]
#
#   --hold-s           how long each lock is held (the worker's enter p99 is 2 s, its exit p99 0.5 s)
#   --dwell-s          worker.degraded.dwell.ms of the worker, in seconds
#   --lock-timeout-ms  worker.degraded.history.lock.timeout.ms of the worker (0: commits wait on the lock)
#   --jar PATH         node jar to run (default target/node.jar, built with mvn only if missing)
# Uses its own schema and queue names (drill_*) and removes them at the end, also on Ctrl-C or failure. The last
# line is "ledger: produced N, lost L, duplicated D, unexpected U, stale S"; exits 1 if L, D or S is non-zero, if
# (--lock-timeout-ms 0) the worker never entered DEGRADED, if it did not leave it, if (with the timeout and --hold-s 8
# or more) the newest current-status row got as old as a whole hold, if the leader suspected the worker (a lock on history must
# stall its commits, not its heartbeats: --hold-s 40 holds the lock longer than the leader's 15 s and 30 s verdicts), or the
# back-fill queue did not drain; 0 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
DRILL=drill-degraded
source scripts/lib/drill-lib.sh

minutes=5 devices=2000 interval=2000 hold=4 dwell=30 lock_timeout=2000 jarpath=""
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) drill_need "$@"; minutes=$2; shift 2 ;;
    --devices) drill_need "$@"; devices=$2; shift 2 ;;
    --interval-ms) drill_need "$@"; interval=$2; shift 2 ;;
    --hold-s) drill_need "$@"; hold=$2; shift 2 ;;
    --dwell-s) drill_need "$@"; dwell=$2; shift 2 ;;
    --lock-timeout-ms) drill_need "$@"; lock_timeout=$2; shift 2 ;;
    --jar) drill_need "$@"; jarpath=$2; shift 2 ;;
    -h|--help) drill_help "$0"; exit 0 ;;
    *) drill_usage_error "unknown argument '$1'" ;;
  esac
done
drill_int --minutes "$minutes" 1
drill_int --devices "$devices" 1
drill_int --interval-ms "$interval" 100
drill_int --hold-s "$hold" 3
drill_int --dwell-s "$dwell" 1
drill_int --lock-timeout-ms "$lock_timeout" 0

drill_prepare_jar "$jarpath"
storm_pid=""
drill_cleanup_hook() { [ -z "$storm_pid" ] || kill "$storm_pid" 2>/dev/null || true; }
drill_setup 16
say "drill: history lock storm for $minutes min (held ${hold} s, free 1 s); $devices devices every $interval ms; dwell ${dwell} s;" \
  "history lock timeout $lock_timeout ms"

drill_start w1 worker --worker.degraded.enter.p99.ms=2000 --worker.degraded.exit.p99.ms=500 --worker.degraded.window.ms=60000 \
  --worker.degraded.dwell.ms=$((dwell * 1000)) --worker.degraded.tick.ms=500 --worker.backfill.batch=16 --worker.backfill.interval.ms=100 \
  --worker.degraded.history.lock.timeout.ms="$lock_timeout"
drill_wait_up w1
drill_wait_registered w1
drill_start s1 scheduler
drill_wait_up s1
drill_start_probe p1 "$devices" "$interval"
drill_wait_up p1
drill_wait_settled 120
sleep 20
backfill_messages() { rabbitmqctl -q list_queues --no-table-headers name messages 2>/dev/null | awk -v q="$name.backfill" '$1 == q { print $2 }'; }
status() {
  echo "mode $( [ "$(drill_metric w1 worker_degraded)" = 1 ] && echo DEGRADED || echo NORMAL), committed $(drill_metric w1 worker_committed_total)," \
    "spilled $(drill_metric w1 worker_spilled_total), back-filled $(drill_metric w1 worker_backfilled_total), back-fill queue $(backfill_messages)," \
    "commit p99 $(drill_metric w1 worker_commit_latency_seconds 'quantile="0.99"') s, history locked $(drill_metric w1 worker_history_locked)"
}
# how old the newest current-status row is (s; updated_at is its commit's start), sampled every second during the storm
current_age() { drill_sql "select coalesce(round(extract(epoch from now() - max(updated_at))::numeric, 1), -1) from device_status_current" || echo -1; }
say "before: $(status)"

t0=$(date +%s)
end=$((t0 + minutes * 60))
(
  while [ "$(date +%s)" -lt "$end" ]; do
    drill_sql "begin; lock table device_status_history in access exclusive mode; select pg_sleep($hold); commit" >/dev/null 2>&1 || true
    sleep 1
  done
) &
storm_pid=$!
say "lock storm started"
ages=()
next_status=$((t0 + 15))
while [ "$(date +%s)" -lt "$end" ]; do
  sleep 1
  ages+=("$(current_age)")
  if [ "$(date +%s)" -ge "$next_status" ]; then
    say "storm $(( $(date +%s) - t0 )) s: $(status)"
    next_status=$((next_status + 15))
  fi
done
wait "$storm_pid" 2>/dev/null || true
storm_pid=""
oldest=$(printf '%s\n' "${ages[@]}" | sort -g | tail -1)
say "newest current-status row during the storm: at most ${oldest} s old (${#ages[@]} samples, one a second; a hold lasts ${hold} s)"
t1=$(date +%s)
say "lock storm over after $((t1 - t0)) s"

# recovery: NORMAL after the dwell, then the back-fill drains the spill
while [ "$(drill_metric w1 worker_degraded)" != 0 ]; do
  [ $(( $(date +%s) - t1 )) -lt $((dwell + 120)) ] || { drill_fail "still DEGRADED $((dwell + 120)) s after the storm"; break; }
  sleep 1
done
t2=$(date +%s)
say "NORMAL $((t2 - t1)) s after the storm: $(status)"
while m=$(backfill_messages); [ "${m:-1}" != 0 ]; do
  [ $(( $(date +%s) - t2 )) -lt 600 ] || { drill_fail "the back-fill queue still holds $m batch(es) 600 s after NORMAL"; break; }
  sleep 1
done
say "back-fill queue empty $(( $(date +%s) - t2 )) s after NORMAL: $(status)"
changes=$(grep -h "DB-degraded write mode" "$dir/w1.log" | sed -E 's/^([0-9TZ:.-]+) .*write mode (entered|left)( after [0-9]+ ms)?: ([^;]*);.*/  \1 \2\3: \4/')
entered=$(grep -c "DB-degraded write mode entered" "$dir/w1.log" || true)
say "mode changes ($entered time(s) entered):"
echo "$changes"
locked=$(grep -c "history's write waited" "$dir/w1.log" || true)
if [ "$lock_timeout" = 0 ]; then
  [ "$entered" -ge 1 ] || drill_fail "the worker never entered DEGRADED"
else
  say "history counted as locked $locked time(s) (a batch's history write waited ${lock_timeout} ms)"
  [ "$locked" -ge 1 ] || drill_fail "no batch's history write ever timed out on the lock"
  if [ "$hold" -ge 8 ] && awk -v a="$oldest" -v h="$hold" 'BEGIN { exit !(a >= h) }'; then
    drill_fail "current status stalled for a whole hold (${oldest} s): the batches waited for history's lock"
  fi
fi
# commits wait on the lock; the worker's heartbeats and lease renewals must not (they did until 2026-12-07: with
# --hold-s 40 the leader declared the worker SUSPECTED after 15 s and DEAD after 30, and its 16 leases went ORPHANED)
drill_expect_not_suspected w1 s1 "during the storm" "its heartbeats waited behind the stuck commits (look for 'heartbeat failed' in $dir/w1.log)"
spilled=$(drill_metric w1 worker_spilled_total)
[ "$spilled" -gt 0 ] || say "note: nothing was spilled"
say "critical history rows: $(drill_sql "select count(*) from device_status_history where retention_class = 1"), other: $(drill_sql "select count(*) from device_status_history where retention_class = 2")"
drill_ref_s=$t1 drill_ref_label="the storm ended"
drill_finish p1

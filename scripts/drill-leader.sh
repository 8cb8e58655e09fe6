#!/usr/bin/env bash
# Leader drill: three schedulers (s1 s2 s3), a worker and a probe (real processes) against the local
# services, with the default election timings.
#   1. kill -9 of the leader -> time until another scheduler leads (scheduler_term: leader_id changes and
#      the term increases; elected_at - the kill);
#   2. SIGSTOP of the new leader for --pause-s seconds (longer than scheduler.leader.session.timeout.ms,
#      5 s: PostgreSQL ends its silent lock session) -> time until the third scheduler leads;
#   3. SIGCONT -> the paused leader must log that it "steps down", and no slot_lease_history or
#      worker_state_history row may carry its term with `at` later than the third leader's elected_at
#      (deposed-leader writes; must be 0);
# then the ledger (the data path never depends on the leader).
#
#   scripts/drill-leader.sh [--slots 64] [--devices 2000] [--pause-s 12] [--interval-ms 5000] [--jar PATH]
#
#   --jar PATH   node jar to run (default target/node.jar, built with mvn only if missing); the drill runs
#                a private copy in its run directory (target/drill/drill_<epoch>/, which keeps the logs)
# Uses its own schema, queue names and Redis channels (drill_<epoch>) and removes them at the end, also on
# Ctrl-C or failure. The last line is "ledger: produced N, lost L, duplicated D, unexpected U, stale S";
# exits 1 if L, D or S is non-zero, a deposed leader wrote anything or did not step down, 0 otherwise
# (2 on a bad argument). Needs root (ensure-services.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
DRILL=drill-leader
source scripts/lib/drill-lib.sh

slots=64 devices=2000 pause=12 interval=5000 jarpath=""
while [ $# -gt 0 ]; do
  case "$1" in
    --slots) drill_need "$@"; slots=$2; shift 2 ;;
    --devices) drill_need "$@"; devices=$2; shift 2 ;;
    --pause-s) drill_need "$@"; pause=$2; shift 2 ;;
    --interval-ms) drill_need "$@"; interval=$2; shift 2 ;;
    --jar) drill_need "$@"; jarpath=$2; shift 2 ;;
    -h|--help) drill_help "$0"; exit 0 ;;
    *) drill_usage_error "unknown argument '$1'" ;;
  esac
done
drill_int --slots "$slots" 1
drill_int --devices "$devices" 1
drill_int --pause-s "$pause" 1
drill_int --interval-ms "$interval" 100
[ "$pause" -gt 5 ] || say "note: --pause-s $pause is not longer than the 5 s leader session timeout: the paused leader may keep its lock"

drill_prepare_jar "$jarpath"
drill_setup "$slots"
say "plan: schedulers s1 s2 s3, worker w1, probe p1 with $devices devices every $interval ms; kill -9 the leader, then SIGSTOP the next one for $pause s"

leader() { drill_sql "select term || ' ' || coalesce(leader_id, '-') || ' ' || coalesce((extract(epoch from elected_at) * 1000)::bigint, 0)
    || ' ' || coalesce(elected_at::text, '-') from scheduler_term"; }
# wait_new_leader TERM OLD_ID TIMEOUT_S: sets term/lead/elected_ms/elected_at once a higher term has another leader
wait_new_leader() {
  local start=$SECONDS t l e a
  while :; do
    read -r t l e a < <(leader) || true
    if [ -n "$t" ] && [ "$t" -gt "$1" ] && [ "$l" != "$2" ]; then
      term=$t lead=$l elected_ms=$e elected_at=$a
      return 0
    fi
    [ $((SECONDS - start)) -lt "$3" ] || drill_die "no new leader (after $2, term $1) within $3 s: scheduler_term says term ${t:-?}, leader ${l:-?}"
    sleep 0.1
  done
}

drill_start w1 worker
drill_wait_up w1
drill_wait_registered w1
drill_start s1 scheduler
drill_wait_up s1
wait_new_leader 0 "" 60
drill_start s2 scheduler
drill_start s3 scheduler
drill_wait_up s2
drill_wait_up s3
drill_start_probe p1 "$devices" "$interval"
drill_wait_up p1
drill_wait_settled 120
drill_wait_flowing w1
say "settled, results flowing: $(drill_holdings); leader $lead (term $term); s1 :${DRILL_PORT[s1]}, s2 :${DRILL_PORT[s2]}, s3 :${DRILL_PORT[s3]}"
drill_wait_leader_grace 15000

# 1. kill -9 of the leader
l1=$lead t1=$term
t0=$(now_ms)
kill -KILL "${DRILL_PID[$l1]}"
say "kill -9 ${DRILL_PID[$l1]} ($l1, leader of term $t1)"
drill_reap "$l1"
wait_new_leader "$t1" "$l1" 60
l2=$lead t2=$term failover1=$((elected_ms - t0))
say "$l2 leads (term $t2) $failover1 ms after the kill"
api=$(curl -s "${AUTH[@]}" --max-time 5 "http://127.0.0.1:${DRILL_PORT[$l2]}/api/v1/leader" || true)
say "GET $l2 /api/v1/leader: $api"
sleep 3   # let it run a few rounds as leader

# 2. SIGSTOP of the new leader
p0=$(now_ms)
kill -STOP "${DRILL_PID[$l2]}"
say "kill -STOP ${DRILL_PID[$l2]} ($l2, leader of term $t2) for $pause s"
wait_new_leader "$t2" "$l2" $((pause + 60))
l3=$lead t3=$term failover2=$((elected_ms - p0)) l3_elected=$elected_at
say "$l3 leads (term $t3) $failover2 ms after the pause began"
left=$(( pause * 1000 - ($(now_ms) - p0) ))
[ "$left" -le 0 ] || sleep "$(awk -v m="$left" 'BEGIN { printf "%.3f", m / 1000 }')"
kill -CONT "${DRILL_PID[$l2]}"
say "kill -CONT ${DRILL_PID[$l2]} ($l2) after $(( ($(now_ms) - p0) / 1000 )) s"

# 3. the paused leader steps down and wrote nothing under its old term
start=$SECONDS stepped=""
while [ -z "$stepped" ] && [ $((SECONDS - start)) -lt 30 ]; do
  stepped=$(drill_log_since "$l2" | grep -m1 'steps down' || true)
  [ -n "$stepped" ] || sleep 0.5
done
if [ -n "$stepped" ]; then say "$l2 log: $stepped"; else drill_fail "$l2 did not log 'steps down' within 30 s of SIGCONT"; fi
sleep 3   # anything the deposed leader was about to write has been tried by now
lease_rows=$(drill_sql "select count(*) from slot_lease_history where term = $t2 and at > '$l3_elected'")
worker_rows=$(drill_sql "select count(*) from worker_state_history where term = $t2 and at > '$l3_elected'")
[ "$lease_rows" = 0 ] || drill_fail "$lease_rows slot_lease_history row(s) of the deposed term $t2 after $l3 was elected"
[ "$worker_rows" = 0 ] || drill_fail "$worker_rows worker_state_history row(s) of the deposed term $t2 after $l3 was elected"
leads2=$(drill_metric "$l2" scheduler_is_leader)
leads3=$(drill_metric "$l3" scheduler_is_leader)
[ "$leads2" = 0 ] || drill_fail "$l2 still reports scheduler_is_leader ${leads2:-?} after stepping down"
rounds_by_t2=$(drill_sql "select count(*) from slot_lease_history where term = $t2")

echo
echo "== leader failover ($slots slots, 1 worker, $devices devices every $interval ms)"
echo "kill -9 of $l1 (term $t1):       $l2 leads (term $t2) after $failover1 ms"
echo "SIGSTOP of $l2 for $pause s (term $t2): $l3 leads (term $t3) after $failover2 ms (leader session timeout 5000 ms)"
if [ -n "$stepped" ]; then
  echo "after SIGCONT:                 $l2 logged: ${stepped#*- }"
else
  echo "after SIGCONT:                 $l2 did not log 'steps down'"
fi
echo "scheduler_is_leader:           $l2 ${leads2:-?}, $l3 ${leads3:-?}"
echo "deposed-leader writes:         $lease_rows slot_lease_history + $worker_rows worker_state_history row(s) of term $t2 after $l3_elected (must be 0)"
echo "                               (term $t2 wrote $rounds_by_t2 lease history row(s) in all)"
echo
drill_wait_settled 120
drill_finish p1

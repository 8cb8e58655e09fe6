#!/usr/bin/env bash
# Failover drill: a scheduler, N workers and a probe (real processes) against the local services, with
# the default detection timings. Each cycle waits until every slot is ACTIVE on a live ACTIVE worker,
# kill -9s the worker holding the most slots, and measures
#   detection: kill -9 -> the worker is DEAD (its worker_state_history row; the reason says how: a
#              free liveness lock or a heartbeat timeout),
#   takeover:  DEAD -> every slot it held is ACTIVE on a survivor,
#   first commit: kill -9 -> each slot's first commit on its new owner (its first history row under a
#              newer epoch; per slot, min/median/p90/max, and the last slot against the goal of 3 s; also the
#              first commit of a result collected before the kill, per slot that had one waiting: a slot with
#              nothing queued commits when the probe next sends to it), and on
#              each survivor the slots it took up: -> consumers open, -> first delivery and -> first commit
#              (its worker_slot_open, worker_slot_first_delivery and worker_slot_first_commit timers: mean over
#              the cycle's slots, recent max),
# prints them, restarts the killed worker (same node id, --worker.warmup.ms) and waits until it holds
# slots again before the next cycle. Ends with min/median/max of both over the cycles, then the ledger.
#
#   scripts/drill-failover.sh [--slots 256] [--workers 3] [--devices 4000] [--cycles 1] [--interval-ms 5000]
#                             [--warmup-ms 2000] [--jar PATH]
#
# 2 cycles is the short version, 20 the long one.
#   --warmup-ms N  warm-up of the restarted worker. worker.warmup.ms is read by the scheduler only (a
#                  worker ignores it), so the scheduler gets it too; it plays no part in detection or
#                  takeover. Every other timing is the default of conf/node.properties.
#   --jar PATH     node jar to run (default target/node.jar, built with mvn only if missing); the drill
#                  runs a private copy in its run directory (target/drill/drill_<epoch>/, which keeps the logs)
# Uses its own schema, queue names and Redis channels (drill_<epoch>) and removes them at the end, also on
# Ctrl-C or failure. The last line is "ledger: produced N, lost L, duplicated D, unexpected U, stale S";
# exits 1 if L, D or S is non-zero, 0 otherwise (2 on a bad argument). Needs root (ensure-services.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
DRILL=drill-failover
source scripts/lib/drill-lib.sh

slots=256 workers=3 devices=4000 cycles=1 interval=5000 warmup=2000 jarpath=""
while [ $# -gt 0 ]; do
  case "$1" in
    --slots) drill_need "$@"; slots=$2; shift 2 ;;
    --workers) drill_need "$@"; workers=$2; shift 2 ;;
    --devices) drill_need "$@"; devices=$2; shift 2 ;;
    --cycles) drill_need "$@"; cycles=$2; shift 2 ;;
    --interval-ms) drill_need "$@"; interval=$2; shift 2 ;;
    --warmup-ms) drill_need "$@"; warmup=$2; shift 2 ;;
    --jar) drill_need "$@"; jarpath=$2; shift 2 ;;
    -h|--help) drill_help "$0"; exit 0 ;;
    *) drill_usage_error "unknown argument '$1'" ;;
  esac
done
drill_int --slots "$slots" 2
drill_int --workers "$workers" 2
drill_int --devices "$devices" 1
drill_int --cycles "$cycles" 1
drill_int --interval-ms "$interval" 100
drill_int --warmup-ms "$warmup" 0

drill_prepare_jar "$jarpath"
drill_setup "$slots"
ids=()
for i in $(seq "$workers"); do ids+=("w$i"); done
say "plan: scheduler s1, workers ${ids[*]}, probe p1 with $devices devices every $interval ms; $cycles kill -9 cycle(s)"

# workers first, so that all are ACTIVE before the leader hands out the first slot
for id in "${ids[@]}"; do drill_start "$id" worker; done
for id in "${ids[@]}"; do drill_wait_up "$id"; done
drill_wait_registered "${ids[@]}"
drill_start s1 scheduler --worker.warmup.ms="$warmup"
drill_wait_up s1
drill_start_probe p1 "$devices" "$interval"
drill_wait_up p1
drill_wait_settled 180
drill_wait_flowing "${ids[@]}"
say "settled, results flowing: $(drill_holdings)"
say "waiting until the leader is past its start-up grace (scheduler.leader.grace.ms 15000: it declares nobody dead before)"
drill_wait_leader_grace 15000

detections="" takeovers="" firsts="" all_firsts="" waiting_lasts=""
for c in $(seq "$cycles"); do
  echo
  say "cycle $c of $cycles"
  drill_wait_settled 300
  # a worker in the DB-degraded write mode spills history rows and back-fills them later, and the first commit is
  # read from history rows: measured then, it would be the back-fill's time (seen: 78 s after a cold start entered it)
  for i in $(seq 480); do
    degraded=""
    for w in "${ids[@]}"; do [ "$(drill_metric "$w" worker_degraded)" = 1 ] && degraded+="$w "; done
    [ -z "$degraded" ] && break
    [ "$i" = 1 ] && say "waiting until no worker is in the DB-degraded write mode (now: $degraded; it leaves after worker.degraded.dwell.ms of health)"
    sleep 0.5
  done
  [ -z "$degraded" ] || say "still in the DB-degraded write mode after 240 s: ${degraded}(first commits below are back-fill times)"
  victim=$(drill_most_loaded)
  held_list=$(drill_sql "select string_agg(slot_id::text, ',' order by slot_id) from slot_lease where owner_worker_id = '$victim' and state = 'ACTIVE'")
  held=$(awk -F, '{ print NF }' <<<"$held_list")
  pairs=$(drill_sql "select string_agg('(' || slot_id || ',' || lease_epoch || ')', ',' order by slot_id) from slot_lease
      where owner_worker_id = '$victim' and state = 'ACTIVE'")
  say "holdings: $(drill_holdings)"
  declare -A open_before=() delivery_before=() first_before=()
  for w in "${ids[@]}"; do
    [ "$w" = "$victim" ] && continue
    open_before[$w]=$(drill_timer_now "$w" worker_slot_open) first_before[$w]=$(drill_timer_now "$w" worker_slot_first_commit)
    delivery_before[$w]=$(drill_timer_now "$w" worker_slot_first_delivery)
  done

  t0=$(now_ms)
  kill -KILL "${DRILL_PID[$victim]}"
  say "kill -9 ${DRILL_PID[$victim]} ($victim, holding $held of $slots slots)"
  drill_reap "$victim"

  dead_ms="" start=$SECONDS
  while [ -z "$dead_ms" ]; do
    read -r dead_ms reason < <(drill_sql "select (extract(epoch from at) * 1000)::bigint, reason from worker_state_history
        where worker_id = '$victim' and new_state = 'DEAD' and at >= to_timestamp($t0 / 1000.0) order by id limit 1" | tr '|' ' ') || true
    [ $((SECONDS - start)) -lt 120 ] || drill_die "$victim was not declared DEAD within 120 s of its kill -9"
    [ -n "$dead_ms" ] || sleep 0.1
  done
  detect=$((dead_ms - t0))
  say "$victim DEAD after $detect ms ($reason)"

  # every slot it held ACTIVE on a live worker: first poll that sees it; the activation times are the
  # new owners' LOADING_NEW -> ACTIVE history rows, or (jars without them) the slots' state_since
  survivors=$(drill_live_workers_sql)
  start=$SECONDS
  while :; do
    read -r ok last_ms < <(drill_sql "select count(*) filter (where state = 'ACTIVE' and owner_worker_id in ($survivors)),
        (extract(epoch from max(state_since)) * 1000)::bigint from slot_lease where slot_id in ($held_list)" | tr '|' ' ')
    [ "$ok" = "$held" ] && break
    [ $((SECONDS - start)) -lt 180 ] || drill_die "only $ok of $held slots of $victim ACTIVE on survivors after 180 s: $(drill_holdings)"
    sleep 0.1
  done
  hist_ms=$(drill_sql "select case when count(a.at) = count(*) then (extract(epoch from max(a.at)) * 1000)::bigint end
      from unnest(array[$held_list]) s(slot_id) left join lateral (select at from slot_lease_history x where x.slot_id = s.slot_id
        and x.old_state = 'LOADING_NEW' and x.new_state = 'ACTIVE' and x.at >= to_timestamp($dead_ms / 1000.0) order by x.at limit 1) a on true")
  if [ -n "$hist_ms" ]; then takeover=$((hist_ms - dead_ms)) src="LOADING_NEW -> ACTIVE history rows"
  else takeover=$((last_ms - dead_ms)) src="slot_lease.state_since"; fi
  say "every slot of $victim ACTIVE on $(tr -d "'" <<<"$survivors" | sed 's/,/ and /g') $takeover ms after DEAD (from $src)"
  drill_first_commits "$pairs" "$t0" 180
  [ -z "$DRILL_FC_MISSING" ] || drill_fail "cycle $c: no commit on a survivor within 180 s for slot(s) $DRILL_FC_MISSING"
  fc_last=$(drill_pct "$DRILL_FC_TIMES" 100)
  say "cycle $c: kill -9 -> first commit on the new owner per slot: $(drill_stats "$DRILL_FC_TIMES"), p90 $(drill_pct "$DRILL_FC_TIMES" 90) ms"
  say "cycle $c: per slot (slot=ms after kill -9): $DRILL_FC_LIST(${DRILL_FC_IDLE:-0} slot(s) without any commit before the kill left out)"
  say "cycle $c: detection $detect ms, takeover $takeover ms ($held slots, kill -9 -> all ACTIVE $((detect + takeover)) ms, -> last first commit $fc_last ms)"
  # a slot with nothing waiting at the kill commits when the probe next sends to it: that wait is not the takeover's
  wait_last=$(drill_pct "$DRILL_FC_WAITING_TIMES" 100)
  say "cycle $c: kill -9 -> first commit of a result collected before the kill, per slot that had one: $(drill_stats "$DRILL_FC_WAITING_TIMES"), last $wait_last ms"
  for w in "${!open_before[@]}"; do
    say "cycle $c: $w took slots up: -> consumers open $(drill_timer_since "$w" worker_slot_open "${open_before[$w]}"); -> first delivery $(drill_timer_since "$w" worker_slot_first_delivery "${delivery_before[$w]}"); -> first commit $(drill_timer_since "$w" worker_slot_first_commit "${first_before[$w]}")"
  done
  detections+="$detect " takeovers+="$takeover " firsts+="$fc_last " all_firsts+="$DRILL_FC_TIMES " waiting_lasts+="$wait_last "

  r0=$(now_ms)
  drill_start "$victim" worker --worker.warmup.ms="$warmup"
  drill_wait_up "$victim"
  start=$SECONDS
  while [ "$(drill_sql "select count(*) from slot_lease where owner_worker_id = '$victim' and state = 'ACTIVE'")" = 0 ]; do
    [ $((SECONDS - start)) -lt 300 ] || drill_die "restarted $victim got no slot within 300 s: $(drill_holdings)"
    sleep 1
  done
  say "restarted $victim holds slots again $(( $(now_ms) - r0 )) ms after its restart: $(drill_holdings)"
done

echo
echo "== failover: $cycles kill -9 cycle(s), $workers workers, $slots slots, $devices devices every $interval ms"
echo "detection (kill -9 -> DEAD):          $(drill_stats "$detections")   [ms: ${detections% }]"
echo "takeover (DEAD -> all slots ACTIVE):  $(drill_stats "$takeovers")   [ms: ${takeovers% }]"
echo "kill -9 -> first commit, every slot:  $(drill_stats "$all_firsts"), p90 $(drill_pct "$all_firsts" 90) ms"
echo "kill -9 -> last slot's first commit:  $(drill_stats "$firsts")   [ms: ${firsts% }] (goal: <= 3000 ms)"
echo "  of what waited at the kill:         $(drill_stats "$waiting_lasts")   [ms: ${waiting_lasts% }] (each cycle's last slot, counting only results collected before the kill)"
echo
drill_wait_settled 300
drill_finish p1

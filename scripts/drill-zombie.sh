#!/usr/bin/env bash
# Zombie drill: a scheduler, two workers and a probe (real processes) against the local services. Worker
# w2 hangs once the slots have settled:
#   --hang stop    (default) kill -STOP: the whole process pauses with its sockets open — its AMQP consumers
#                  stay the active ones of their single-active-consumer queues until the leader's broker
#                  fence closes its connection (RabbitMQ management API) or the broker's heartbeat does;
#                  it is resumed (kill -CONT) after its slots committed on w1, and must then write nothing;
#   --hang freeze  started with --worker.fault.freeze.heartbeat.after.ms: after that time it stops
#                  heartbeating and reading its leases but keeps consuming (alive, holding its liveness
#                  lock, deaf).
# Prints
#   - the time from the hang to DEAD (expect about worker.dead.after.ms = 30 s; a hang is found by
#     heartbeat age, not by the liveness lock) and from its last heartbeat to DEAD,
#   - the time from DEAD until every slot it held is ACTIVE on w1, and until each slot's FIRST COMMIT on
#     w1 (its first history row under a newer epoch: per slot, and min/median/p90/max), and the hang ->
#     first commit of the last slot against the goal worker.dead.after.ms + 2 s,
#   - whether the leader's broker fence closed w2's AMQP connection (its log),
#   - the zombie's worker_fenced_total: messages of its batches rejected after the move (D1),
#   - the deposed-owner check: device_status_history rows written under one of the zombie's
#     (slot_id, writer_epoch) pairs (taken from slot_lease before the freeze) with received_at later than
#     the moment its slots were seen ACTIVE on w1. Must be 0;
# then the ledger.
#
#   scripts/drill-zombie.sh [--hang stop|freeze] [--slots 64] [--devices 2000] [--freeze-after-ms 20000] [--interval-ms 5000] [--jar PATH]
#
#   --freeze-after-ms N  (--hang freeze) counted from the zombie's start; the slots must be settled before it
#                        (else the drill stops and asks for a larger value)
#   --jar PATH           node jar to run (default target/node.jar, built with mvn only if missing); the drill
#                        runs a private copy in its run directory (target/drill/drill_<epoch>/, with the logs)
# Uses its own schema, queue names and Redis channels (drill_<epoch>) and removes them at the end, also on
# Ctrl-C or failure. The last line is "ledger: produced N, lost L, duplicated D, unexpected U, stale S";
# exits 1 if L, D or S is non-zero or the deposed owner wrote anything, 0 otherwise (2 on a bad argument).
# Needs root (ensure-services.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
DRILL=drill-zombie
source scripts/lib/drill-lib.sh

slots=64 devices=2000 freeze=20000 interval=5000 jarpath="" hang=stop
while [ $# -gt 0 ]; do
  case "$1" in
    --hang) drill_need "$@"; hang=$2; shift 2 ;;
    --slots) drill_need "$@"; slots=$2; shift 2 ;;
    --devices) drill_need "$@"; devices=$2; shift 2 ;;
    --freeze-after-ms) drill_need "$@"; freeze=$2; shift 2 ;;
    --interval-ms) drill_need "$@"; interval=$2; shift 2 ;;
    --jar) drill_need "$@"; jarpath=$2; shift 2 ;;
    -h|--help) drill_help "$0"; exit 0 ;;
    *) drill_usage_error "unknown argument '$1'" ;;
  esac
done
drill_int --slots "$slots" 2
drill_int --devices "$devices" 1
drill_int --freeze-after-ms "$freeze" 1
drill_int --interval-ms "$interval" 100
[ "$hang" = stop ] || [ "$hang" = freeze ] || drill_usage_error "--hang must be stop or freeze, not '$hang'"

drill_prepare_jar "$jarpath"
drill_setup "$slots"
if [ "$hang" = freeze ]; then
  say "plan: scheduler s1, workers w1 and w2 (zombie: heartbeat frozen $freeze ms after its start), probe p1 with $devices devices every $interval ms"
else
  say "plan: scheduler s1, workers w1 and w2 (zombie: kill -STOP once settled), probe p1 with $devices devices every $interval ms"
fi

drill_start w1 worker
if [ "$hang" = freeze ]; then drill_start w2 worker --worker.fault.freeze.heartbeat.after.ms="$freeze"; else drill_start w2 worker; fi
drill_wait_up w1
drill_wait_up w2
drill_wait_registered w1 w2
drill_start s1 scheduler
drill_wait_up s1
drill_start_probe p1 "$devices" "$interval"
drill_wait_up p1
drill_wait_settled 120
drill_wait_flowing w1 w2
frozen() { drill_log_since w2 | grep -m1 'heartbeat frozen' || true; }
[ -z "$(frozen)" ] || drill_die "w2 froze before the slots settled: run again with a larger --freeze-after-ms"
say "settled, results flowing: $(drill_holdings)"

# the zombie's leases before the freeze: (slot_id, lease_epoch)
pairs=$(drill_sql "select string_agg('(' || slot_id || ',' || lease_epoch || ')', ',' order by slot_id) from slot_lease
    where owner_worker_id = 'w2' and state = 'ACTIVE'")
held_list=$(drill_sql "select string_agg(slot_id::text, ',' order by slot_id) from slot_lease where owner_worker_id = 'w2' and state = 'ACTIVE'")
held=$(awk -F, '{ print NF }' <<<"$held_list")
[ -z "$(frozen)" ] || drill_die "w2 froze while its leases were being read: run again with a larger --freeze-after-ms"
say "zombie w2 holds $held slots; (slot, epoch): $(cut -c1-120 <<<"$pairs")$([ ${#pairs} -gt 120 ] && echo ...)"

if [ "$hang" = freeze ]; then
  start=$SECONDS
  while [ -z "$(frozen)" ]; do
    [ $((SECONDS - start)) -lt $((freeze / 1000 + 60)) ] || drill_die "w2 did not report its freeze"
    sleep 0.5
  done
  line=$(frozen)
  freeze_ms=$(log_time_ms "${line%% *}")
  say "w2 froze at ${line%% *}: ${line#*- }"
else
  freeze_ms=$(now_ms)
  kill -STOP "${DRILL_PID[w2]}"
  say "kill -STOP ${DRILL_PID[w2]} (w2): its process and its AMQP consumers hang"
fi

dead_ms="" start=$SECONDS
while [ -z "$dead_ms" ]; do
  read -r dead_ms reason < <(drill_sql "select (extract(epoch from at) * 1000)::bigint, reason from worker_state_history
      where worker_id = 'w2' and new_state = 'DEAD' order by id limit 1" | tr '|' ' ') || true
  [ $((SECONDS - start)) -lt 180 ] || drill_die "w2 was not declared DEAD within 180 s of its freeze"
  [ -n "$dead_ms" ] || sleep 0.2
done
hb_ms=$(drill_sql "select (extract(epoch from last_heartbeat) * 1000)::bigint from worker_heartbeat where worker_id = 'w2'")
suspect_ms=$(drill_sql "select (extract(epoch from at) * 1000)::bigint from worker_state_history
    where worker_id = 'w2' and new_state = 'SUSPECTED' order by id limit 1")
say "w2 DEAD ($reason)"

start=$SECONDS
while :; do
  read -r ok last_ms < <(drill_sql "select count(*) filter (where state = 'ACTIVE' and owner_worker_id = 'w1'),
      (extract(epoch from max(state_since)) * 1000)::bigint from slot_lease where slot_id in ($held_list)" | tr '|' ' ')
  [ "$ok" = "$held" ] && break
  [ $((SECONDS - start)) -lt 120 ] || drill_die "only $ok of the zombie's $held slots ACTIVE on w1 after 120 s"
  sleep 0.1
done
moved_at=$(db_now)
hist_ms=$(drill_sql "select case when count(a.at) = count(*) then (extract(epoch from max(a.at)) * 1000)::bigint end
    from unnest(array[$held_list]) s(slot_id) left join lateral (select at from slot_lease_history x where x.slot_id = s.slot_id
      and x.old_state = 'LOADING_NEW' and x.new_state = 'ACTIVE' and x.at >= to_timestamp($dead_ms / 1000.0) order by x.at limit 1) a on true")
[ -n "$hist_ms" ] && last_ms=$hist_ms
say "every slot of w2 ACTIVE on w1 (seen at $moved_at)"
drill_first_commits "$pairs" "$dead_ms" 180
[ -z "$DRILL_FC_MISSING" ] || drill_fail "no commit on w1 within 180 s of DEAD for slot(s) $DRILL_FC_MISSING"
fc_times=$DRILL_FC_TIMES fc_list=$DRILL_FC_LIST
fc_max=$(drill_pct "$fc_times" 100)
say "first commit of every slot of w2 on w1: last $fc_max ms after DEAD"
dead_after=30000   # worker.dead.after.ms: the drill runs with the defaults of conf/node.properties
fence_line=$(drill_log_since s1 | grep -m1 'broker fence: .*worker w2 ' || true)
if [ "$hang" = stop ]; then
  resumed_at=$(db_now)
  kill -CONT "${DRILL_PID[w2]}"
  say "kill -CONT ${DRILL_PID[w2]} (w2): resumed; it must notice it is DEAD and write nothing"
fi

# the zombie still consumes until a batch of each slot is fenced; wait for the rejections to stop
fenced=0 start=$SECONDS
while :; do
  sleep 3
  now_f=$(drill_metric w2 worker_fenced_total)
  read -r _ _ several _ _ < <(drill_queue_stats)
  [ "$now_f" = "$fenced" ] && [ "$several" = 0 ] && break
  fenced=$now_f
  [ $((SECONDS - start)) -lt 60 ] || { say "w2 is still being fenced after 60 s (slot queues with two consumers: $several)"; break; }
done
# slots with at least one fenced message (a worker registers the counter at 0 for every slot it takes)
fenced_slots=$(curl -sf --max-time 5 "http://127.0.0.1:${DRILL_PORT[w2]}/metrics" | awk '/^worker_fenced_total\{/ && $NF > 0 { n++ } END { print n + 0 }' || true)
rolled=$(drill_log_since w2 | grep -c 'rolled back, consumers cancelled' || true)

deposed=$(drill_sql "select count(*) from device_status_history h join (values $pairs) z(slot_id, epoch)
    on h.slot_id = z.slot_id and h.writer_epoch = z.epoch where h.received_at > '$moved_at'")
between=$(drill_sql "select count(*) from device_status_history h join (values $pairs) z(slot_id, epoch)
    on h.slot_id = z.slot_id and h.writer_epoch = z.epoch where h.received_at > to_timestamp($freeze_ms / 1000.0)")
[ "$deposed" = 0 ] || drill_fail "$deposed row(s) written under the zombie's old (slot, epoch) after its slots were ACTIVE on w1"

echo
if [ "$hang" = freeze ]; then how="heartbeat frozen $freeze ms after start"; else how="kill -STOP once settled, kill -CONT after the takeover"; fi
echo "== zombie w2 ($held of $slots slots, $how; $devices devices every $interval ms)"
echo "hang -> SUSPECTED:          $([ -n "$suspect_ms" ] && echo "$((suspect_ms - freeze_ms)) ms" || echo "not seen")"
echo "hang -> DEAD:                 $((dead_ms - freeze_ms)) ms ($reason; worker.dead.after.ms 30000)"
echo "last heartbeat -> DEAD:       $((dead_ms - hb_ms)) ms"
echo "DEAD -> all ACTIVE on w1:     $((last_ms - dead_ms)) ms ($held slots)"
echo "DEAD -> first commit on w1:   $(drill_stats "$fc_times"), p90 $(drill_pct "$fc_times" 90) ms"
echo "  per slot (slot=ms):         $fc_list(${DRILL_FC_IDLE:-0} slot(s) without any commit before the hang left out)"
echo "hang -> last first commit:    $((dead_ms + fc_max - freeze_ms)) ms (goal: worker.dead.after.ms + 2 s = $((dead_after + 2000)) ms)"
echo "broker fence (s1 log):        ${fence_line:-none logged (rabbit.management.url off or an older jar)}"
echo "zombie's fenced messages:     $fenced (worker_fenced_total over $fenced_slots slot(s); $rolled batch(es) rolled back)"
echo "zombie commits after freeze:  $between row(s) under its old epochs (before the epoch bump: allowed)"
echo "deposed-owner writes:         $deposed (rows under the zombie's (slot, epoch) received after $moved_at; must be 0)"
echo

drill_finish p1

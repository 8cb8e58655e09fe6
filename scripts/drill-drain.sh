#!/usr/bin/env bash
# Drain drill: a scheduler, two workers and a probe (four real processes) against the local services.
# Once every slot is ACTIVE (each worker holding about half) and results flow, the worker holding more
# slots is drained through the leader's API (POST /api/v1/workers/{id}/drain), or with SIGTERM
# (--via sigterm). Prints the slots it held; the drain time (request -> OFFLINE, request -> its process
# exited); the per-slot handover time p50/p99/max (for each slot it held: its 'drain' MOVING row -> the
# slot's next LOADING_NEW -> ACTIVE row, split into release / leader handover / load); the snapshot load
# p50/max of those activations ('loaded in N ms'); the time from the request to each drained slot's first commit on the
# survivor (min/median/max, p90); the redeliveries the drain caused on the surviving
# worker (worker_redelivered_total just before and after; goal 0); then the ledger.
#
#   scripts/drill-drain.sh [--slots 256] [--devices 4000] [--interval-ms 5000] [--via api|sigterm] [--jar PATH]
#
# Big slots: --slots 16 --devices 64000 --interval-ms 120000 puts ~4,000 devices in a slot. Whenever a
# slot holds 1,000 devices or more on average, the drill waits until device_status_current holds 99% of
# the devices before draining and prints "snapshot load for a ~N-device slot".
#   --jar PATH   node jar to run (default target/node.jar, built with mvn only if missing); the drill runs
#                a private copy in its run directory (target/drill/drill_<epoch>/, which keeps the logs)
# Uses its own schema, queue names and Redis channels (drill_<epoch>) and removes them at the end, also on
# Ctrl-C or failure. The last line is "ledger: produced N, lost L, duplicated D, unexpected U, stale S";
# exits 1 if L, D or S is non-zero, 0 otherwise (2 on a bad argument). Needs root (ensure-services.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
DRILL=drill-drain
source scripts/lib/drill-lib.sh

slots=256 devices=4000 interval=5000 via=api jarpath=""
while [ $# -gt 0 ]; do
  case "$1" in
    --slots) drill_need "$@"; slots=$2; shift 2 ;;
    --devices) drill_need "$@"; devices=$2; shift 2 ;;
    --interval-ms) drill_need "$@"; interval=$2; shift 2 ;;
    --via) drill_need "$@"; via=$2; shift 2 ;;
    --jar) drill_need "$@"; jarpath=$2; shift 2 ;;
    -h|--help) drill_help "$0"; exit 0 ;;
    *) drill_usage_error "unknown argument '$1'" ;;
  esac
done
drill_int --slots "$slots" 2
drill_int --devices "$devices" 1
drill_int --interval-ms "$interval" 100
case "$via" in api|sigterm) ;; *) drill_usage_error "--via must be api or sigterm, not '$via'" ;; esac
big=0
[ $((devices / slots)) -ge 1000 ] && big=1

drill_prepare_jar "$jarpath"
drill_setup "$slots"
say "plan: scheduler s1, workers w1 w2, probe p1 with $devices devices every $interval ms; drain the busier worker via $via"

# workers first, so that both are ACTIVE before the leader hands out the first slot
drill_start w1 worker
drill_start w2 worker
drill_wait_up w1
drill_wait_up w2
drill_wait_registered w1 w2
drill_start s1 scheduler
drill_wait_up s1
drill_start_probe p1 "$devices" "$interval"
drill_wait_up p1
say "up: s1 :${DRILL_PORT[s1]}, w1 :${DRILL_PORT[w1]}, w2 :${DRILL_PORT[w2]}, p1 :${DRILL_PORT[p1]} (pids ${DRILL_PID[s1]} ${DRILL_PID[w1]} ${DRILL_PID[w2]} ${DRILL_PID[p1]})"
drill_wait_settled 180
drill_wait_flowing w1 w2
say "settled, results flowing: $(drill_holdings)"

if [ "$big" = 1 ]; then
  want=$(( (devices * 99 + 99) / 100 ))
  limit=$(( interval * 2 / 1000 + 180 )) start=$SECONDS last=$SECONDS
  say "waiting until device_status_current holds $want of $devices devices (at most ${limit}s)"
  while :; do
    have=$(drill_sql "select count(*) from device_status_current")
    [ "$have" -ge "$want" ] && break
    [ $((SECONDS - start)) -lt "$limit" ] || drill_die "device_status_current holds only $have of $devices devices after ${limit}s"
    if [ $((SECONDS - last)) -ge 15 ]; then say "  $have devices have a current status"; last=$SECONDS; fi
    sleep 2
  done
  say "device_status_current holds $have devices"
fi

# the planner's scale-out rounds can outlast the wait above: a drain that races a move measures the move too
drill_wait_quiet 20 300
say "planner quiet (no slot moved for 20 s): $(drill_holdings)"
victim=$(drill_most_loaded)
survivor=w1
[ "$victim" = w1 ] && survivor=w2
held_list=$(drill_sql "select string_agg(slot_id::text, ',' order by slot_id) from slot_lease where owner_worker_id = '$victim' and state = 'ACTIVE'")
held=$(awk -F, '{ print NF }' <<<"$held_list")
pairs=$(drill_sql "select string_agg('(' || slot_id || ',' || lease_epoch || ')', ',' order by slot_id) from slot_lease
    where owner_worker_id = '$victim' and state = 'ACTIVE'")
per_slot=$(drill_sql "select coalesce(round(avg(n)), 0) from (select count(*) n from device_status_current
    where current_slot in ($held_list) group by current_slot) x")
redeliv_before=$(drill_metric "$survivor" worker_redelivered_total)
load_count_before=$(drill_metric "$survivor" worker_snapshot_load_seconds_count)
load_sum_before=$(drill_metric "$survivor" worker_snapshot_load_seconds_sum)
open_before=$(drill_timer_now "$survivor" worker_slot_open)
first_before=$(drill_timer_now "$survivor" worker_slot_first_commit)
delivery_before=$(drill_timer_now "$survivor" worker_slot_first_delivery)
say "draining $victim: it holds $held of $slots slots (~$per_slot devices per slot); $survivor holds $((slots - held))"

t0=$(now_ms)
t0_sql="to_timestamp($t0 / 1000.0)"
if [ "$via" = api ]; then
  code=$(curl -s "${AUTH[@]}" -o "$dir/drain-response.json" -w '%{http_code}' --max-time 10 -X POST \
    "http://127.0.0.1:${DRILL_PORT[s1]}/api/v1/workers/$victim/drain")
  [ "$code" = 202 ] || drill_die "POST /api/v1/workers/$victim/drain answered $code: $(cat "$dir/drain-response.json")"
  say "POST http://127.0.0.1:${DRILL_PORT[s1]}/api/v1/workers/$victim/drain -> $code ($(grep -o '"state":"[A-Z_]*"' "$dir/drain-response.json" | head -1))"
else
  kill -TERM "${DRILL_PID[$victim]}"
  say "kill -TERM ${DRILL_PID[$victim]} ($victim)"
fi

offline_ms="" exit_ms="" last=$SECONDS start=$SECONDS
while [ -z "$offline_ms" ] || [ -z "$exit_ms" ]; do
  if [ -z "$offline_ms" ]; then
    offline_ms=$(drill_sql "select (extract(epoch from at) * 1000)::bigint - $t0 from worker_state_history
        where worker_id = '$victim' and new_state = 'OFFLINE' and at >= $t0_sql order by id limit 1")
  fi
  if [ -z "$exit_ms" ] && ! drill_alive "$victim"; then
    exit_ms=$(( $(now_ms) - t0 ))
    drill_reap "$victim"
    exit_code=$drill_rc
  fi
  if [ $((SECONDS - start)) -ge 300 ]; then
    drill_fail "$victim did not finish draining within 300 s (OFFLINE: ${offline_ms:-no}, exited: ${exit_ms:+yes})"
    break
  fi
  if [ $((SECONDS - last)) -ge 5 ] && [ -z "$offline_ms" ]; then
    p=$(curl -s "${AUTH[@]}" --max-time 3 "http://127.0.0.1:${DRILL_PORT[s1]}/api/v1/workers/$victim" | grep -o '"drain":{[^}]*}' || true)
    say "  $victim: ${p:-no drain progress reported yet}"
    last=$SECONDS
  fi
  sleep 0.2
done
say "$victim is OFFLINE after ${offline_ms:-?} ms; its process exited after ${exit_ms:-?} ms with code ${exit_code:-?}"
drill_wait_settled 120 "'$survivor'"
sleep 3   # late redeliveries would show up now
redeliv_after=$(drill_metric "$survivor" worker_redelivered_total)

# per slot: its 'drain' MOVING row, then (each the first after it) the old owner's 'released' DRAINING_OLD
# row, the leader's LOADING_NEW row and the new owner's LOADING_NEW -> ACTIVE row ('loaded in N ms').
# Workers built before the lease history had the workers' own rows write neither of those two: then the
# activation time is the slot's state_since, if it is still ACTIVE at the epoch the leader handed over.
drill_sql "create table drill_drain_slots as
  select m.slot_id, m.at moving_at, r.at released_at, l.at loading_at,
         coalesce(a.at, case when s.state = 'ACTIVE' and s.lease_epoch = l.new_epoch then s.state_since end) active_at,
         a.at is not null active_row, substring(a.reason from 'loaded in ([0-9]+) ms')::int load_ms
  from (select slot_id, min(at) at from slot_lease_history
        where reason = 'drain' and new_state = 'MOVING' and old_owner = '$victim' and at >= $t0_sql
          and slot_id in ($held_list) group by slot_id) m
  left join lateral (select at from slot_lease_history x where x.slot_id = m.slot_id and x.new_state = 'DRAINING_OLD'
                     and x.at >= m.at order by x.at, x.id limit 1) r on true
  left join lateral (select at, new_epoch from slot_lease_history x where x.slot_id = m.slot_id and x.new_state = 'LOADING_NEW'
                     and x.at >= m.at order by x.at, x.id limit 1) l on true
  left join lateral (select at, reason from slot_lease_history x where x.slot_id = m.slot_id and x.old_state = 'LOADING_NEW'
                     and x.new_state = 'ACTIVE' and x.at >= m.at order by x.at, x.id limit 1) a on true
  left join slot_lease s on s.slot_id = m.slot_id" >/dev/null
pct() { # expression over drill_drain_slots -> "p50 X ms, p99 Y ms, max Z ms"
  drill_sql "select 'p50 ' || round(percentile_cont(0.5) within group (order by v)) || ' ms, p99 '
      || round(percentile_cont(0.99) within group (order by v)) || ' ms, max ' || round(max(v)) || ' ms'
      from (select $1 v from drill_drain_slots) x where v is not null"
}
msdiff() { echo "extract(epoch from $1 - $2) * 1000"; }
moved=$(drill_sql "select count(*) from drill_drain_slots")
# takeover to consuming (issue 14): each slot the drain moved, to its first commit under the survivor's epoch
moved_pairs=$(drill_sql "select string_agg('(' || z.slot_id || ',' || z.epoch || ')', ',') from (values $pairs) z(slot_id, epoch)
    join drill_drain_slots d on d.slot_id = z.slot_id")
DRILL_FC_TIMES="" DRILL_FC_IDLE=0 DRILL_FC_MISSING=""
[ -z "$moved_pairs" ] || drill_first_commits "$moved_pairs" "$t0" 180
activated=$(drill_sql "select count(*) from drill_drain_slots where active_at is not null")
from_rows=$(drill_sql "select count(*) from drill_drain_slots where active_row")
released_rows=$(drill_sql "select count(*) from drill_drain_slots where released_at is not null")
load=$(drill_sql "select 'p50 ' || round(percentile_cont(0.5) within group (order by load_ms)) || ' ms, max ' || max(load_ms) || ' ms'
    from drill_drain_slots where load_ms is not null")
# the survivor's own timer, over just the loads of this drain (count and sum before/after)
lc=$(( $(drill_metric "$survivor" worker_snapshot_load_seconds_count) - load_count_before ))
load_mean=n/a
[ "$lc" -gt 0 ] && load_mean=$(awk -v a="$(drill_metric "$survivor" worker_snapshot_load_seconds_sum)" -v b="$load_sum_before" -v n="$lc" \
  'BEGIN { printf "%.0f ms", (a - b) * 1000 / n }')
load_max=$(awk -v s="$(drill_metric "$survivor" worker_snapshot_load_seconds_max)" 'BEGIN { printf "%.0f ms", s * 1000 }')

echo
row() { printf '%-28s %s\n' "$1" "$2"; }
echo "== drain of $victim via $via ($slots slots, $devices devices every $interval ms)"
row "slots it held:" "$held (of $slots; ~$per_slot devices per slot)"
row "drain time:" "${offline_ms:-?} ms to OFFLINE, ${exit_ms:-?} ms to process exit (exit code ${exit_code:-?})"
row "slots moved by the drain:" "$moved ('drain' MOVING rows); $activated of them ACTIVE on $survivor since"
[ "$moved" = "$held" ] || row "" "$((held - moved)) slot(s) without a 'drain' move (released by the worker itself)"
[ "$from_rows" = "$activated" ] || row "" "activation time of $((activated - from_rows)) slot(s) from slot_lease.state_since (no LOADING_NEW -> ACTIVE history row)"
row "per-slot handover:" "$(pct "$(msdiff active_at moving_at)")   (MOVING -> ACTIVE on $survivor)"
if [ "$released_rows" -gt 0 ]; then
  row "  release by $victim:" "$(pct "$(msdiff released_at moving_at)")   (MOVING -> DRAINING_OLD)"
  row "  leader hands over:" "$(pct "$(msdiff loading_at released_at)")   (DRAINING_OLD -> LOADING_NEW)"
else
  row "  release + leader:" "$(pct "$(msdiff loading_at moving_at)")   (MOVING -> LOADING_NEW; no 'released' history rows)"
fi
row "  load by $survivor:" "$(pct "$(msdiff active_at loading_at)")   (LOADING_NEW -> ACTIVE)"
row "  $survivor: taken up -> open:" "$(drill_timer_since "$survivor" worker_slot_open "$open_before")   (ACTIVE here -> consumers open on the broker)"
row "  $survivor: -> first delivery:" "$(drill_timer_since "$survivor" worker_slot_first_delivery "$delivery_before")   (ACTIVE here -> the broker's first delivery)"
row "  $survivor: -> first commit:" "$(drill_timer_since "$survivor" worker_slot_first_commit "$first_before")   (ACTIVE here -> first batch committed)"
row "first commit on $survivor:" "$(drill_stats "$DRILL_FC_TIMES"), p90 $(drill_pct "$DRILL_FC_TIMES" 90) ms   (drain request -> first commit under the new epoch, each slot the drain moved; ${DRILL_FC_IDLE:-0} slot(s) without any commit before left out)"
[ -z "$DRILL_FC_MISSING" ] || drill_fail "no commit on $survivor within 180 s for drained slot(s) $DRILL_FC_MISSING"
if [ -n "$load" ]; then
  row "snapshot load:" "$load   ('loaded in N ms' of those activations)"
else
  row "snapshot load:" "no 'loaded in N ms' history rows (this jar does not write them)"
fi
row "  $survivor's load timer:" "mean $load_mean over the $lc load(s) of the drain; worker_snapshot_load_seconds_max $load_max (recent, any load)"
if [ "$big" = 1 ]; then
  row "snapshot load for a ~$per_slot-device slot:" "${load:-mean $load_mean (load timer); LOADING_NEW -> ACTIVE $(pct "$(msdiff active_at loading_at)")}"
fi
redelivered=$(( ${redeliv_after%.*} - ${redeliv_before%.*} ))
row "redeliveries caused:" "$redelivered on $survivor (worker_redelivered_total $redeliv_before -> $redeliv_after; goal 0)"
[ "$redelivered" = 0 ] || say "note: the drain caused $redelivered redelivered message(s) (goal 0)"
[ "$activated" = "$held" ] || drill_fail "only $activated of the $held drained slots reached ACTIVE on $survivor after a drain move"
expected_code=4 # a drained worker exits with 4 (node --help: its systemd unit does not restart it)
[ "$via" = sigterm ] && expected_code=143
[ "${exit_code:-x}" = "$expected_code" ] || say "note: $victim exited with code ${exit_code:-?} (expected $expected_code after $via)"
echo

drill_finish p1

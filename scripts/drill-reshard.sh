#!/usr/bin/env bash
# Reshard drill (issue 14 item 3, seed 000 §3.4): a scheduler, two workers and a probe (real processes) against
# the local services; once the slots have settled and results flow, the leader is asked for more slots
# (POST /api/v1/slot-map) and the drill follows the reshard under load:
#   T0 scheduled -> the new slots' leases exist, the workers open them and declare their queues
#   -> effective time: the leader switches current_slot of the remapped devices, a few giving slots per
#   transaction, bumping the epochs of the slots that gave and received devices (their owners reload)
#   -> the probe reads the switched version from its scheduler and stamps it; results of the old version that
#   reach an old slot are forwarded to the device's new slot -> the grace window closes
#   -> a shrink (--to below --from): the leader retires the given-up slots (leases deleted, their queues
#   unbound, what is left in them dead-lettered as stale_slot_map, the queues deleted, retired_at set).
# Prints
#   - the window: scheduled, new slots all ACTIVE, effective, switched (and how long the switch took), the
#     probe's switch, the window's end, the given-up slots' retirement (a shrink), each as seconds after T0,
#   - the moved devices (current_slot changed), the forwarded results (worker_reshard_forwarded_total) and the
#     results dead-lettered as stale_slot_map,
#   - loads: ACTIVE slots per worker before and after, and the largest slot-queue backlog and p99
#     probe -> commit lag (received_at - collected_at) per 10 s while it ran,
#   - the two-writer check: devices with a history row from a slot that is not theirs any more, received after a
#     row from their new slot (must be 0),
#   - the refusal of a worker started afterwards with the old --slots.total (exit code 2, naming both values);
# then the ledger.
#
#   scripts/drill-reshard.sh [--from 256] [--to 512] [--devices 4000] [--interval-ms 5000] [--effective-ms 60000]
#                            [--window-ms 120000] [--jar PATH]
#
#   --effective-ms N   reshard.effective.after.ms: T0 -> effective time (the seed's default is 5 min)
#   --window-ms N      reshard.window.end.ms: T0 -> end of the grace window (the seed's default is 10 min)
#   --jar PATH         node jar to run (default target/node.jar, built with mvn only if missing); the drill
#                      runs a private copy in its run directory (target/drill/drill_<epoch>/, with the logs)
# Uses its own schema, queue names and Redis channels (drill_<epoch>) and removes them at the end, also on
# Ctrl-C or failure. The last line is "ledger: produced N, lost L, duplicated D, unexpected U, stale S";
# exits 1 if L, D or S is non-zero, a device had two writers or the old slot count was not refused, 0
# otherwise (2 on a bad argument). Needs root (ensure-services.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
DRILL=drill-reshard
source scripts/lib/drill-lib.sh

from=256 to=512 devices=4000 interval=5000 effective=60000 window=120000 jarpath=""
while [ $# -gt 0 ]; do
  case "$1" in
    --from) drill_need "$@"; from=$2; shift 2 ;;
    --to) drill_need "$@"; to=$2; shift 2 ;;
    --devices) drill_need "$@"; devices=$2; shift 2 ;;
    --interval-ms) drill_need "$@"; interval=$2; shift 2 ;;
    --effective-ms) drill_need "$@"; effective=$2; shift 2 ;;
    --window-ms) drill_need "$@"; window=$2; shift 2 ;;
    --jar) drill_need "$@"; jarpath=$2; shift 2 ;;
    -h|--help) drill_help "$0"; exit 0 ;;
    *) drill_usage_error "unknown argument '$1'" ;;
  esac
done
drill_int --from "$from" 1
drill_int --to "$to" 2
drill_int --devices "$devices" 1
drill_int --interval-ms "$interval" 100
drill_int --effective-ms "$effective" 0
drill_int --window-ms "$window" 1
[ "$to" != "$from" ] || drill_usage_error "--to ($to) must differ from --from ($from)"
[ "$window" -gt "$effective" ] || drill_usage_error "--window-ms ($window) must be more than --effective-ms ($effective)"

drill_prepare_jar "$jarpath"
drill_setup "$from"
say "plan: scheduler s1, workers w1 and w2, probe p1 with $devices devices every $interval ms; $from -> $to slots, effective after $effective ms, window until $window ms"

# the probe follows the slot map through its scheduler's probe API: a fresh probe token, through the environment
INSPECT_PROBE_API_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
INSPECT_API_PROBE_TOKENS="default=$INSPECT_PROBE_API_TOKEN"
export INSPECT_PROBE_API_TOKEN INSPECT_API_PROBE_TOKENS
drill_start w1 worker
drill_start w2 worker
drill_wait_up w1
drill_wait_up w2
drill_wait_registered w1 w2
drill_start s1 scheduler --reshard.effective.after.ms="$effective" --reshard.window.end.ms="$window"
drill_wait_up s1
api="http://127.0.0.1:${DRILL_PORT[s1]}"
drill_start_probe p1 "$devices" "$interval" --probe.inventory.url="$api" --probe.slot.map.refresh.ms=1000
drill_wait_up p1
drill_wait_settled 300
drill_wait_flowing w1 w2
before=$(drill_holdings)
say "settled, results flowing: $before"

resp=$(curl -s "${AUTH[@]}" -H 'Content-Type: application/json' -X POST --data "{\"slots\": $to}" -w '\n%{http_code}' "$api/api/v1/slot-map")
code=$(tail -n1 <<<"$resp")
[ "$code" = 202 ] || drill_die "POST /api/v1/slot-map answered $code: $(head -n1 <<<"$resp")"
t0=$(now_ms)
t0_db=$(db_now)
say "reshard scheduled: $(head -n1 <<<"$resp" | cut -c1-300)"
slots=$to   # drill_settled and the teardown count the new slots from now on
for i in "${!common[@]}"; do [[ "${common[$i]}" == --slots.total=* ]] && common[$i]="--slots.total=$to"; done

# samples every 10 s until the window closed: largest slot-queue backlog, p99 lag of the last 10 s
samples="" opened="" switched="" probe_switched="" closed=""
while :; do
  now=$(now_ms)
  el=$(( (now - t0) / 1000 ))
  active=$(drill_sql "select count(*) from slot_lease where state = 'ACTIVE'")
  [ -z "$opened" ] && [ "$active" = "$to" ] && opened=$((now - t0))
  [ -z "$switched" ] && [ "$(drill_sql "select count(*) from slot_map_version where version = 2 and switched_at is not null")" = 1 ] && switched=$((now - t0))
  [ -z "$probe_switched" ] && drill_log_since p1 | grep -q 'slot map version 2 ' && probe_switched=$((now - t0))
  read -r q _ _ _ _ < <(drill_queue_stats)
  lag=$(drill_sql "select coalesce(round(percentile_cont(0.99) within group (order by extract(epoch from received_at - collected_at) * 1000))::text, '-')
      from device_status_history where received_at > now() - interval '10 seconds'")
  samples+="  +${el}s: $active ACTIVE, backlog $q, p99 lag ${lag} ms"$'\n'
  if [ "$(drill_sql "select count(*) from slot_map_version where version = 2 and window_until < now()")" = 1 ]; then closed=$((now - t0)); break; fi
  [ "$el" -lt $(( window / 1000 + 300 )) ] || drill_die "the window did not close within $(( window / 1000 + 300 )) s"
  sleep 10
done
switch_line=$(drill_log_since s1 | grep -m1 'current_slot switched' || true)
say "window closed: $(drill_holdings)"
retired="not a shrink" retire_line=""
if [ "$to" -lt "$from" ]; then
  # a shrink: the leader retires slots $to .. $((from - 1)) (leases, then their queues drained and deleted)
  for i in $(seq 240); do
    [ "$(drill_sql "select count(*) from slot_map_version where version = 2 and retired_at is not null")" = 1 ] && break
    sleep 0.5
  done
  if [ "$(drill_sql "select count(*) from slot_map_version where version = 2 and retired_at is not null")" = 1 ]; then
    retired="+$(( ($(now_ms) - t0) / 1000 )) s"
    retire_line=$(drill_log_since s1 | grep -m1 'retired (last run' || true)
    left=$(drill_sql "select count(*) from slot_lease where slot_id >= $to")
    [ "$left" = 0 ] || drill_fail "$left lease row(s) of given-up slots left after the retirement"
  else
    retired="not within 120 s of the window's end"
    drill_fail "slots $to .. $((from - 1)) were not retired within 120 s after the window"
  fi
fi

moved=$(drill_sql "select count(*) from device_status_current c where exists (select 1 from device_status_history h
    where h.device_id = c.device_id and h.slot_id <> c.current_slot)")
two=$(drill_sql "select count(*) from (select c.device_id from device_status_current c
    join device_status_history o on o.device_id = c.device_id and o.slot_id <> c.current_slot
    where o.received_at > (select min(n.received_at) from device_status_history n where n.device_id = c.device_id and n.slot_id = c.current_slot)
    group by c.device_id) x")
[ "$two" = 0 ] || drill_fail "$two device(s) written by their old slot after their new one"
forwarded=$(( $(drill_metric w1 worker_reshard_forwarded_total) + $(drill_metric w2 worker_reshard_forwarded_total) ))
stale=$(drill_sql "select count(*) from dead_letter where reason = 'stale_slot_map'" 2>/dev/null || echo '?')

# a worker with the old slot count must refuse to start (exit code 2), naming both values
drill_start w9 worker --slots.total="$from"
for i in $(seq 120); do drill_alive w9 || break; sleep 0.5; done
if drill_alive w9; then drill_stop w9; refused="started (not refused)"; drill_fail "a worker with --slots.total=$from started"
else
  drill_reap w9
  refused="exit $drill_rc: $(drill_log_since w9 | grep -m1 -o "slots.total is $from.*slots\." | cut -c1-160)"
  [ "$drill_rc" = 2 ] || drill_fail "a worker with --slots.total=$from exited with $drill_rc, not 2"
fi
unset "DRILL_ROLE[w9]" "DRILL_PID[w9]" "DRILL_PORT[w9]"   # gone: the ledger's checks of the workers leave it out

echo
echo "== reshard $from -> $to slots under load ($devices devices every $interval ms)"
echo "scheduled (T0):               $t0_db"
echo "all $to slots ACTIVE:          $([ -n "$opened" ] && echo "+$((opened / 1000)) s" || echo "not seen")"
echo "effective:                    +$((effective / 1000)) s"
echo "switched:                     $([ -n "$switched" ] && echo "+$((switched / 1000)) s" || echo "not seen") (${switch_line#*- })"
echo "probe stamps version 2:       $([ -n "$probe_switched" ] && echo "+$((probe_switched / 1000)) s" || echo "not seen")"
echo "window closed:                +$((closed / 1000)) s (reshard.window.end.ms $window)"
echo "given-up slots retired:       $retired${retire_line:+ (${retire_line#*- })}"
echo "devices moved:                $moved"
echo "forwarded (old version):      $forwarded"
echo "dead-lettered stale_slot_map: $stale"
echo "two-writer devices:           $two (must be 0)"
echo "ACTIVE slots per worker:      before: $before; after: $(drill_holdings)"
echo "old slots.total refused:      $refused"
echo "samples (every 10 s from T0):"
printf '%s' "$samples"
echo

drill_finish p1

#!/usr/bin/env bash
# Outage drill: runs a scheduler, a worker and a probe (three real processes) against the local services,
# takes PostgreSQL, RabbitMQ or Redis away for a while, brings it back, and prints what it did, how long
# recovery took and what the ledger says: results lost, duplicated and stale (all must be 0). Then the
# backpressure (issue 12): when the fleet mode (the leader's, GET /api/v1/fleet-mode) and the probe's
# effective mode (its log) entered backpressure after the failure and left it after recovery (goal: within
# 10 s each), and whether critical devices were inspected at full rate during the outage: their checks
# (probe_checks_total{priority="1"} and the probe's outbox) against devices/20 x duration / interval, and
# probe_mode_skipped_total{priority="1"}, which must stay 0 (the drill fails otherwise).
#
#   scripts/drill-outage.sh --service postgres|rabbit|redis [--minutes 5] [--devices 2000] [--interval-ms 2000] [--jar PATH]
#
#   --service redis  stops the local redis-server (redis-cli shutdown nosave) and starts it again as
#                    scripts/ensure-services.sh does (127.0.0.1:6379, no persistence)
#   --jar PATH   node jar to run (default target/node.jar, built with mvn only if missing); the drill runs
#                a private copy in its run directory (target/drill/drill_<epoch>/, which keeps the logs)
# Uses its own schema and queue names (drill_*) and removes them at the end, also on Ctrl-C or failure (the
# stopped service is started again first). The last line is "ledger: produced N, lost L, duplicated D,
# unexpected U, stale S"; exits 1 if L, D or S is non-zero, 0 otherwise. Needs root (it stops services).
set -euo pipefail
cd "$(dirname "$0")/.."
DRILL=drill-outage
source scripts/lib/drill-lib.sh

service=postgres minutes=5 devices=2000 interval=2000 jarpath=""
while [ $# -gt 0 ]; do
  case "$1" in
    --service) drill_need "$@"; service=$2; shift 2 ;;
    --minutes) drill_need "$@"; minutes=$2; shift 2 ;;
    --devices) drill_need "$@"; devices=$2; shift 2 ;;
    --interval-ms) drill_need "$@"; interval=$2; shift 2 ;;
    --jar) drill_need "$@"; jarpath=$2; shift 2 ;;
    -h|--help) drill_help "$0"; exit 0 ;;
    *) drill_usage_error "unknown argument '$1'" ;;
  esac
done
case "$service" in postgres|rabbit|redis) ;; *) drill_usage_error "--service must be postgres, rabbit or redis, not '$service'" ;; esac
drill_int --minutes "$minutes" 0
drill_int --devices "$devices" 1
drill_int --interval-ms "$interval" 100

drill_prepare_jar "$jarpath"
pgver=$(ls /etc/postgresql | head -1)
redis_up() { [ "$(timeout 5 redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = PONG ]; }
service_start() {
  case "$service" in
    postgres) pg_ctlcluster --skip-systemctl-redirect "$pgver" main start ;;
    rabbit) rabbitmqctl -q start_app ;;
    redis)
      redis_up && return 0
      mkdir -p /var/lib/redis /var/log/redis
      redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
        --dir /var/lib/redis --logfile /var/log/redis/ci.log
      for _ in $(seq 50); do redis_up && return 0; sleep 0.2; done
      echo "redis-server did not answer within 10 s" >&2; return 1 ;;
  esac
}
service_stop() {
  case "$service" in
    postgres) pg_ctlcluster --skip-systemctl-redirect "$pgver" main stop -m immediate; say "PostgreSQL stopped (immediate)" ;;
    rabbit) rabbitmqctl -q stop_app; say "RabbitMQ application stopped" ;;
    redis) redis-cli -h 127.0.0.1 -p 6379 shutdown nosave >/dev/null 2>&1 || true
      for _ in $(seq 50); do redis_up || break; sleep 0.2; done
      redis_up && drill_die "redis-server still answers after shutdown"
      say "Redis stopped (shutdown nosave)" ;;
  esac
}
# critical simulated devices (every 20th: sim-000020, sim-000040, ...) checked between two times (ms),
# counted in the probe's outbox (it keeps every row for a day)
critical_checks() {
  sqlite3 -cmd ".timeout 10000" "$dir/outbox-p1.db" "select count(*) from outbox where created_at >= $1 and created_at < $2
      and device_id like 'sim-%' and cast(substr(device_id, 5) as integer) % 20 = 0"
}
drill_cleanup_hook() { service_start >/dev/null 2>&1 || true; }
drill_setup 16
say "drill: $service outage of $minutes min; $devices devices every $interval ms"

drill_start w1 worker
drill_wait_up w1
drill_wait_registered w1
drill_start s1 scheduler
drill_wait_up s1
drill_start_probe p1 "$devices" "$interval"
drill_wait_up p1
drill_wait_settled 120
sleep 20
modes() { echo "fleet $(drill_mode_now s1 fleet_mode), probe $(drill_mode_now p1 probe_mode 'source="effective"')"; }
say "before: committed $(drill_metric w1 worker_committed_total), outbox depth $(drill_metric p1 outbox_depth), $(modes)"

checks0=$(drill_metric_na p1 probe_checks_total 'priority="1"')
skip0=$(drill_metric p1 probe_mode_skipped_total 'priority="1"')
t0_ms=$(now_ms)
t0=$((t0_ms / 1000))
service_stop
end=$((t0 + minutes * 60))
while [ "$(date +%s)" -lt "$end" ]; do
  left=$(( end - $(date +%s) ))
  sleep $(( left < 30 ? (left > 0 ? left : 1) : 30 ))
  say "down $(( $(date +%s) - t0 )) s: committed $(drill_metric w1 worker_committed_total), outbox depth $(drill_metric p1 outbox_depth), $(modes)"
done
service_start
# recovery: the service answers again (a PostgreSQL start takes seconds: still part of the outage)
t1_ms=$(now_ms)
t1=$((t1_ms / 1000))
checks1=$(drill_metric_na p1 probe_checks_total 'priority="1"')
skip1=$(drill_metric p1 probe_mode_skipped_total 'priority="1"')
say "$service back after $((t1 - t0)) s"

# recovery: the worker commits again and the backlog drains
base=$(drill_metric w1 worker_committed_total)
while v=$(drill_metric w1 worker_committed_total); [ -z "$v" ] || [ "$v" -le "$base" ]; do
  [ $(( $(date +%s) - t1 )) -lt 600 ] || drill_die "the worker committed nothing within 600 s of $service coming back"
  sleep 1
done
t2=$(date +%s)
say "first commit $((t2 - t1)) s after the service came back"
drill_wait_settled 300

# backpressure: wait (at most 180 s) until the fleet and the probe are NORMAL again, then read the changes
start=$SECONDS
while [ "$(drill_mode_now s1 fleet_mode)" != NORMAL ] || [ "$(drill_mode_now p1 probe_mode 'source="effective"')" != NORMAL ]; do
  [ $((SECONDS - start)) -lt 180 ] || { say "note: not NORMAL 180 s after settling ($(modes))"; break; }
  sleep 1
done
fleet=$(drill_fleet_changes s1)
probe=$(drill_probe_changes p1)
crit_devices=$((devices / 20))
outage_s=$(( (t1_ms - t0_ms) / 1000 ))
expected=$(( crit_devices * (t1_ms - t0_ms) / interval ))
crit_outbox=$(critical_checks "$t0_ms" "$t1_ms")
crit_skipped=$(drill_delta "$skip0" "$skip1")
echo
echo "== backpressure: $service down at $(date -d "@$t0" +%T), back at $(date -d "@$t1" +%T) ($outage_s s; goal: in and out within 10 s)"
printf '%-26s %s\n' "fleet mode (leader):" "$(drill_mode_times "$fleet" "$t0_ms" "$t1_ms")"
printf '%-26s %s\n' "probe p1, effective mode:" "$(FIELD=2 drill_mode_times "$probe" "$t0_ms" "$t1_ms")"
rel() { awk -v a="$t0_ms" -v b="$t1_ms" '{ t = $1; $1 = ""; if (t < b) printf "  failure %+7.1f s %s\n", (t - a) / 1000, $0;
                                             else printf "  recovery %+6.1f s %s\n", (t - b) / 1000, $0 }'; }
echo "fleet mode changes (GET /api/v1/fleet-mode), from the failure / recovery:"
awk -v a="$t0_ms" '$1 >= a - 60000' <<<"$fleet" | rel | grep . || echo "  none"
echo "probe p1 changes (its log), from the failure / recovery:"
awk -v a="$t0_ms" '$1 >= a - 60000' <<<"$probe" | rel | grep . || echo "  none"
printf '%-26s %s\n' "critical devices:" "$crit_devices of $devices, every $interval ms: $expected checks expected in the $outage_s s outage"
printf '%-26s %s\n' "  checked (outbox):" "$crit_outbox = $(( expected > 0 ? crit_outbox * 100 / expected : 0 )) % of full rate"
printf '%-26s %s\n' "  probe_checks_total{1}:" "+$(drill_delta "$checks0" "$checks1")"
printf '%-26s %s\n' "  skipped{priority=1}:" "$crit_skipped (probe_mode_skipped_total; must be 0)"
[ "$crit_skipped" = 0 ] || drill_fail "$crit_skipped critical check(s) skipped during the outage"
echo
drill_ref_s=$t1 drill_ref_label="the service came back"
drill_finish p1

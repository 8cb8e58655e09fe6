#!/usr/bin/env bash
# Outage drill: runs a scheduler, a worker and a probe (three real processes) against the local services,
# takes PostgreSQL or RabbitMQ away for a while, brings it back, and prints what it did, how long recovery
# took and what the ledger says: results lost, duplicated and stale (all must be 0).
#
#   scripts/drill-outage.sh --service postgres|rabbit [--minutes 5] [--devices 2000] [--interval-ms 2000] [--jar PATH]
#
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
case "$service" in postgres|rabbit) ;; *) drill_usage_error "--service must be postgres or rabbit, not '$service'" ;; esac
drill_int --minutes "$minutes" 0
drill_int --devices "$devices" 1
drill_int --interval-ms "$interval" 100

drill_prepare_jar "$jarpath"
pgver=$(ls /etc/postgresql | head -1)
service_start() {
  if [ "$service" = postgres ]; then pg_ctlcluster --skip-systemctl-redirect "$pgver" main start; else rabbitmqctl -q start_app; fi
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
say "before: committed $(drill_metric w1 worker_committed_total), outbox depth $(drill_metric p1 outbox_depth)"

t0=$(date +%s)
if [ "$service" = postgres ]; then
  pg_ctlcluster --skip-systemctl-redirect "$pgver" main stop -m immediate; say "PostgreSQL stopped (immediate)"
else
  rabbitmqctl -q stop_app; say "RabbitMQ application stopped"
fi
end=$((t0 + minutes * 60))
while [ "$(date +%s)" -lt "$end" ]; do
  sleep 30
  say "down $(( $(date +%s) - t0 )) s: committed $(drill_metric w1 worker_committed_total), outbox depth $(drill_metric p1 outbox_depth)"
done
service_start
t1=$(date +%s)
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
drill_ref_s=$t1 drill_ref_label="the service came back"
drill_finish p1

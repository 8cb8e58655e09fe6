#!/usr/bin/env bash
# Outage drill: runs a probe and a worker (two real processes) against the local services, takes
# PostgreSQL or RabbitMQ away for a while, brings it back, and prints what it did, how long recovery
# took and what the ledger says: results lost, duplicated and stale (all must be 0).
#
#   scripts/drill-outage.sh --service postgres|rabbit [--minutes 5] [--devices 2000] [--interval-ms 2000]
#
# Uses its own schema and queue names (drill_*) and removes them at the end. Needs root (it stops services).
set -euo pipefail
cd "$(dirname "$0")/.."

service=postgres minutes=5 devices=2000 interval=2000
while [ $# -gt 0 ]; do
  case "$1" in
    --service) service=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --devices) devices=$2; shift 2 ;;
    --interval-ms) interval=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "drill-outage: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$service" in postgres|rabbit) ;; *) echo "drill-outage: --service must be postgres or rabbit, not '$service'" >&2; exit 2 ;; esac

scripts/ensure-services.sh
[ -f target/node.jar ] || mvn -q -B package -DskipTests

name="drill_$(date +%s)"
dir="target/drill/$name"
mkdir -p "$dir"
# a private copy: a rebuild of target/node.jar during the drill must not change the running JVMs' classes
cp target/node.jar "$dir/node.jar"
jar="$dir/node.jar"
common=(--pg.schema="$name" --topology.prefix="$name" --redis.channel.prefix="$name" --slots.total=16 --data.dir="$dir"
        --backoff.max.ms=5000)
pgver=$(ls /etc/postgresql | head -1)
psqlq() { psql -h 127.0.0.1 -U postgres -d test -qtAX -c "$1"; }

cleanup() {
  [ -n "${wpid:-}" ] && kill "$wpid" 2>/dev/null || true
  [ -n "${ppid_:-}" ] && kill "$ppid_" 2>/dev/null || true
  wait 2>/dev/null || true
  pg_ctlcluster --skip-systemctl-redirect "$pgver" main start 2>/dev/null || true
  rabbitmqctl -q start_app >/dev/null 2>&1 || true
  java -cp "$jar" dev.inspection.node.Teardown "${common[@]}" >/dev/null 2>&1 || true
}
trap cleanup EXIT

metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 ~ "^"m {s+=$2} END {printf "%d\n", s}'; }

echo "drill: $service outage of $minutes min; $devices devices every $interval ms; logs in $dir"
java -Xmx512m -jar "$jar" --role=worker --node.id="$name-w" --http.port=18181 "${common[@]}" >"$dir/worker.log" 2>&1 & wpid=$!
java -Xmx512m -jar "$jar" --role=probe --node.id="$name-p" --http.port=18182 --probe.sim.devices="$devices" \
  --probe.interval.ms="$interval" "${common[@]}" >"$dir/probe.log" 2>&1 & ppid_=$!
for _ in $(seq 60); do curl -sf http://127.0.0.1:18182/health/ready >/dev/null && curl -sf http://127.0.0.1:18181/health/ready >/dev/null && break; sleep 1; done
sleep 20
echo "before: committed $(metric 18181 worker_committed_total), outbox depth $(metric 18182 outbox_depth)"

t0=$(date +%s)
if [ "$service" = postgres ]; then
  pg_ctlcluster --skip-systemctl-redirect "$pgver" main stop -m immediate; echo "$(date +%T) PostgreSQL stopped (immediate)"
else
  rabbitmqctl -q stop_app; echo "$(date +%T) RabbitMQ application stopped"
fi
end=$((t0 + minutes * 60))
while [ "$(date +%s)" -lt "$end" ]; do
  sleep 30
  echo "$(date +%T) down $(( $(date +%s) - t0 )) s: committed $(metric 18181 worker_committed_total), outbox depth $(metric 18182 outbox_depth)"
done
if [ "$service" = postgres ]; then pg_ctlcluster --skip-systemctl-redirect "$pgver" main start; else rabbitmqctl -q start_app; fi
t1=$(date +%s)
echo "$(date +%T) $service back after $((t1 - t0)) s"

# recovery: the worker commits again and the backlog drains
base=$(metric 18181 worker_committed_total)
while [ "$(metric 18181 worker_committed_total)" -le "$base" ]; do sleep 1; done
t2=$(date +%s)
echo "first commit $((t2 - t1)) s after the service came back"

kill "$ppid_"; wait "$ppid_" 2>/dev/null || true; ppid_=
# replay whatever the probe left unconfirmed, then wait for the worker to drain every queue
java -Xmx512m -jar "$jar" --role=probe --node.id="$name-p" --http.port=18182 --probe.sim.devices=0 "${common[@]}" \
  >>"$dir/probe.log" 2>&1 & ppid_=$!
outbox="$dir/outbox-$name-p.db"
for _ in $(seq 600); do
  left=$(sqlite3 "$outbox" "select count(*) from outbox where confirmed=0" 2>/dev/null || echo 1)
  stored=$(psqlq "select count(*) from $name.device_status_history")
  produced=$(sqlite3 "$outbox" "select count(*) from outbox")
  [ "$left" = 0 ] && [ "$stored" -ge "$produced" ] && break
  sleep 1
done
t3=$(date +%s)
echo "backlog drained $((t3 - t1)) s after the service came back"

sqlite3 "$outbox" "select message_id from outbox" > "$dir/produced.txt"
psqlq "create table $name.produced(message_id varchar(160) primary key)"
psql -h 127.0.0.1 -U postgres -d test -qc "\\copy $name.produced from '$dir/produced.txt'"
lost=$(psqlq "select count(*) from $name.produced p where not exists (select 1 from $name.device_status_history h where h.message_id = p.message_id)")
dup=$(psqlq "select count(*) - count(distinct message_id) from $name.device_status_history")
unexpected=$(psqlq "select count(*) from $name.device_status_history h where not exists (select 1 from $name.produced p where p.message_id = h.message_id)")
stale=$(psqlq "select count(*) from $name.device_status_current c join (select distinct on (device_id) device_id, cycle_id, seq from $name.device_status_history order by device_id, cycle_id desc, seq desc) h using (device_id) where (c.cycle_id, c.seq) <> (h.cycle_id, h.seq)")
echo "ledger: produced $(wc -l < "$dir/produced.txt"), lost $lost, duplicated $dup, unexpected $unexpected, stale $stale"
if [ "$lost$dup$unexpected$stale" = "0000" ]; then echo "drill PASSED"; else echo "drill FAILED"; exit 1; fi

#!/usr/bin/env bash
# Benchmark of the inspection node on this machine (./run.sh bench [options]).
#
#   1. broker baseline:   RabbitMQ PerfTest (com.rabbitmq:perf-test from Maven Central) against 64 quorum
#                         queues with publisher confirms, 400-byte persistent messages;
#   2. database baseline: pgbench running scripts/bench/upsert.sql (one transaction = one 200-row worker
#                         batch: upsert into device_status_current + insert into device_status_history) on
#                         the node's tables (its migration V001) in a scratch schema bench_pg (scripts/bench/pg-setup.sql);
#   3. end to end:        the node with every role in one JVM (own schema, queue prefix, Redis channels,
#                         HTTP port 18080 and data dir), 256 slots = 512 quorum queues:
#                         a capacity run offering more than it can take, then a run at half of the rate it
#                         sustained, then an idle run (100 devices at the node's default interval, 10 s
#                         warm-up, 30 s window); each run has a warm-up and a measured window between two
#                         /metrics samples; CPU per process (node, RabbitMQ, PostgreSQL) over the window,
#                         and the node's split by thread group (event loops, JIT compiler, outbox, ...);
#                         probe->commit lag also from the database (received_at - collected_at of the
#                         history rows committed in the window), and of the critical results alone (retention
#                         class 1, the high lane's) in the notes; what was sent twice (the probe's replays,
#                         the worker's history rewrites: 0 in a run without nacks, returns or lost connections);
#   4. a million devices  only with --million or --all (long: about 4 minutes and a 6g heap): 1,000,000
#                         simulated devices every 60 s (16,667 results/s offered), 90 s warm-up (every
#                         device has had its first check: the probe spreads the first checks over one
#                         interval, ProbeSchedule), 60 s window: committed rate, lag from the database,
#                         heap per device after a full GC (probe and worker share the JVM), history GB/day;
#                         then goal 5 by role (about 3 minutes more; BENCH_ROLE_HEAPS=0 skips it): a scheduler
#                         and a worker each in a JVM of their own on the run's schema, the worker's live heap once
#                         it holds every slot (its devices loaded from their snapshots) and the queues are empty,
#                         the same on an empty schema <id>0 (the worker's fixed part), and a probe alone with the
#                         run's fleet: worker bytes/device above its fixed part, probe bytes/device (whole heap);
#                         class histograms in target/bench/heap-million-{worker,empty,probe}.txt; the lone
#                         worker's takeover: when its first slot, half of them and the last consumed (from
#                         slot_lease_history) and a slot's own load p50/p99 (worker_snapshot_load_seconds),
#                         goal 5's second half;
#   5. a summary block with the goal lines of issue 11 (yes / no / NA), printed and saved to target/bench/summary.txt.
#
# Everything it creates is removed again, also on Ctrl-C or failure: the 64 PerfTest queues, the scratch
# schema bench_pg, the node's queues and schema (dev.inspection.node.Teardown), its Redis hash bench:probes
# and target/bench/data.
# Logs stay in target/bench/: perftest.log, pgbench.log, node.log (all runs; also node-<run>.log), gc-<run>.log.
#
# Options:
#   (none)             baselines, capacity, half rate, idle (about 10 minutes)
#   --quick            10 s windows and smaller fleets, to smoke-test this script (figures not for the README);
#                      with --million: 50,000 devices every 10 s, 20 s warm-up, 10 s window
#   --skip-baselines   run only the end-to-end part
#   --idle             only the idle run (add --with-baselines to run the baselines first)
#   --million          only the million-device run; the µs/result of the baselines and the ratio need the
#                      baselines of the same run: --million --with-baselines runs them first
#   --capacity         only the capacity run (no half-rate run): to try a change against the same run before it
#   --with-baselines   with --idle, --million or --capacity: run the two baselines first
#   --all              the default run and then the million-device run
#   --commit           only the batch-write benchmark (dev.inspection.bench.CommitBench, from the test sources:
#                      full device-state write against the plain upsert + history, in one run, latency and the CPU
#                      per result of PostgreSQL's sessions and of its JVM; builds with mvn;
#                      its flags through BENCH_COMMIT_ARGS, e.g. "--batches=300 --batch=200 --devices=20000")
#   --takeover         only the takeover benchmark (dev.inspection.bench.TakeoverBench, from the test sources): a
#                      survivor's load of every slot alone, a million devices with derived snapshots over 256 slots in
#                      a scratch schema, walked one at a time, two at once, and in groups of 32 handed over together
#                      (the worker before its walks), alternating rounds, each with an empty device directory: when the
#                      first slot, half and the last were handed over, a slot's own load (p50, p99, max, the slowest
#                      three), the JVM's CPU; its flags through BENCH_TAKEOVER_ARGS, e.g. "--devices=200000 --ways=walks=1"
#                      ("--layouts=v1,compact": each snapshot layout in its own schema, alternating in every round)
#   --ingest           only the push-ingest benchmark (dev.inspection.bench.IngestBench, from the test sources): one
#                      probe, frames/s acknowledged durable and ack p50/p99 through POST /ingest/v1/hotel_room against
#                      the same frames handed straight to its group commit (the baseline), in one run; its flags through
#                      BENCH_INGEST_ARGS, e.g. "--seconds 20 --clients 8 --frames 100 --devices 2000"
#   -h, --help         this text
# Environment overrides (optional): BENCH_CAP_DEVICES, BENCH_CAP_INTERVAL_MS, BENCH_HALF_INTERVAL_MS,
#   BENCH_WARMUP_S, BENCH_WINDOW_S (every run unless a run's own variable below is set), BENCH_JIT_SETTLE_MAX_S (90: after
#   each warm-up, wait up to this long for the JIT compiler to fall to <= 5 % of the node's CPU; 0 skips the wait),
#   BENCH_MODE_SETTLE_MAX_S (240: then, in the million and half-rate runs, wait up to this long until the probe inspects in
#   NORMAL mode again, when the warm-up's first insert of every device put the fleet into backpressure; 0 skips it), BENCH_HEAP (default 2g;
#   the million run's default is 6g), BENCH_PERFTEST_VERSIONS (versions tried in order),
#   BENCH_NODE_FLAGS (extra --key=value flags for the node, e.g. "--outbox.replay.interval.ms=600000"),
#   BENCH_JVM_OPTS (extra JVM options; {run} in them becomes the run's name, capacity, half, idle or million, so each
#   run keeps its own flight recording: "-XX:StartFlightRecording=filename=target/bench/node-{run}.jfr,settings=profile";
#   the million run's JVMs by role too, {run} then million-worker, million-worker-scheduler, million-empty, million-probe, ...),
#   BENCH_IDLE_DEVICES (100), BENCH_IDLE_INTERVAL_MS (the node's default), BENCH_IDLE_WARMUP_S (10), BENCH_IDLE_WINDOW_S (30),
#   BENCH_IDLE_REST_S (20: after the idle run, RabbitMQ's CPU with the node stopped, with its queues and then without
#   them, so the note splits the broker's idle figure into what the queues cost at rest and what the node's traffic
#   adds; 0 skips both),
#   BENCH_SLOTS (256, the node's default: the slots.total of every run but the idle one; e.g. 64, the count a one-box
#   installation of a million devices might choose, shows what the slots' queues cost under load; the notes name it),
#   BENCH_IDLE_SLOTS (BENCH_SLOTS: the idle run's slots.total; a small installation's count, e.g. 16, shows
#   what the 3 queues per slot cost at idle; goal 4's line names the count it was judged at),
#   BENCH_MILLION_DEVICES (1000000), BENCH_MILLION_INTERVAL_MS (60000), BENCH_MILLION_WARMUP_S (interval + 30 s),
#   BENCH_MILLION_WINDOW_S (60), BENCH_MILLION_HEAP (BENCH_HEAP, else 6g);
#   a shortened million run: BENCH_MILLION_DEVICES=50000 BENCH_WARMUP_S=10 BENCH_WINDOW_S=10 ./run.sh bench --million
#   BENCH_ROLE_HEAPS (1; 0 skips the million run's heaps by role), BENCH_ROLE_DRAIN_S (180: at most this long for the lone
#   worker to empty the run's queues before its heap is read), BENCH_ROLE_PROBE_S (30: the lone probe's heap is read this
#   long after its start), BENCH_ROLE_WORKER_HEAP (the million run's heap: the lone worker's -Xmx; the role JVMs end on
#   out of memory, as the packaged units do, so a smaller one shows whether taking every slot over fits in it),
#   BENCH_AGED_DAYS (0): give the node's schema, before each run, the past day partitions a node that has run this many
#   days keeps (history up to retention.history.days.high/normal, 30/14; alert events and rollups up to 90): a fresh schema
#   has only yesterday to 3 days ahead, and a statement that cannot prune partitions costs more with every day kept;
#   e.g. BENCH_AGED_DAYS=90 ./run.sh bench --capacity
#   BENCH_AGED_HISTORY_MIN (0): before each run, fill history with this many minutes of the run's own devices' results
#   (one row per device and interval, cycle_ids before the run's), as a node that has run that long has it: the history
#   key begins with the device, so with every minute kept each insert lands on a leaf of a larger index; a fresh day
#   partition holds none of it. 7-22 s per million rows (an hour of a million devices: about 15 minutes); the fill is
#   vacuumed, analysed and checkpointed before the node starts; e.g. BENCH_AGED_HISTORY_MIN=60 ./run.sh bench --million.
#   BENCH_AGED_HISTORY_STEP_MS (the run's
#   interval): one row per device this often instead, as history.policy=changes keeps (a heartbeat row, 15 min by default,
#   and the changes: the simulated fleet's history kept about one row in 13 minutes a device), e.g.
#   BENCH_AGED_HISTORY_MIN=60 BENCH_AGED_HISTORY_STEP_MS=780000 BENCH_NODE_FLAGS=--history.policy=changes
#   BENCH_ID (default bench: the node's schema, queue prefix, Redis prefix and node id, the scratch schema
#   <id>_pg and the PerfTest queues <id>.perf.N) and BENCH_PORT (18080): to run beside another checkout's bench
#   (the figures of both are then skewed).
#
# Needs: java 17, mvn (only to fetch PerfTest once), psql + pgbench, rabbitmqctl (root: deletes the PerfTest
# queues), curl, and PostgreSQL/RabbitMQ/Redis running on 127.0.0.1 (scripts/ensure-services.sh).

# The whole script is one brace group: bash parses it completely before running any of it, so editing
# or replacing this file while a benchmark runs cannot change the running one.
# shellcheck disable=SC2015,SC2317 # [ x ] && echo || awk (echo cannot fail); cleanup is called from a trap
{
set -euo pipefail

SELF="$(readlink -f "${BASH_SOURCE[0]}")"
cd "$(dirname "$SELF")/.."
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$SELF"; }

QUICK=0
SKIP_BASELINES=0
COMMIT_ONLY=0
TAKEOVER_ONLY=0
INGEST_ONLY=0
ONLY_IDLE=0
ONLY_MILLION=0
ONLY_CAPACITY=0
WITH_BASELINES=0
ALL=0
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    --commit) COMMIT_ONLY=1 ;;
    --takeover) TAKEOVER_ONLY=1 ;;
    --ingest) INGEST_ONLY=1 ;;
    --skip-baselines) SKIP_BASELINES=1 ;;
    --idle) ONLY_IDLE=1 ;;
    --million) ONLY_MILLION=1 ;;
    --capacity) ONLY_CAPACITY=1 ;;
    --with-baselines) WITH_BASELINES=1 ;;
    --all) ALL=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bench.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done

if [ "$COMMIT_ONLY" = 1 ]; then
  # CommitBench is test code (it is not in the production jar): compile the tests, run it on both class paths
  mvn -q -B test-compile dependency:build-classpath -Dmdep.outputFile=target/bench-classpath.txt
  # shellcheck disable=SC2086 # BENCH_COMMIT_ARGS holds several flags
  exec java -cp "target/classes:target/test-classes:$(cat target/bench-classpath.txt)" dev.inspection.bench.CommitBench ${BENCH_COMMIT_ARGS:-}
fi

if [ "$TAKEOVER_ONLY" = 1 ]; then
  # TakeoverBench is test code too: a scratch schema bench_takeover_<time>, dropped at the end
  mvn -q -B test-compile dependency:build-classpath -Dmdep.outputFile=target/bench-classpath.txt
  # shellcheck disable=SC2086 # BENCH_TAKEOVER_ARGS holds several flags
  exec java -cp "target/classes:target/test-classes:$(cat target/bench-classpath.txt)" dev.inspection.bench.TakeoverBench ${BENCH_TAKEOVER_ARGS:-}
fi

if [ "$INGEST_ONLY" = 1 ]; then
  # IngestBench is test code too: one probe in the JVM, its queues deleted at the end (Teardown)
  mvn -q -B test-compile dependency:build-classpath -Dmdep.outputFile=target/bench-classpath.txt
  # shellcheck disable=SC2086 # BENCH_INGEST_ARGS holds several flags
  exec java -cp "target/classes:target/test-classes:$(cat target/bench-classpath.txt)" dev.inspection.bench.IngestBench ${BENCH_INGEST_ARGS:-}
fi

# which runs: the default run (baselines, capacity, half, idle), or only the ones named, or all of them
if [ "$ALL" = 1 ]; then
  RUN_BASELINES=1 RUN_CAPACITY=1 RUN_IDLE=1 RUN_MILLION=1
elif [ "$ONLY_IDLE" = 1 ] || [ "$ONLY_MILLION" = 1 ] || [ "$ONLY_CAPACITY" = 1 ]; then
  RUN_BASELINES=$WITH_BASELINES RUN_CAPACITY=$ONLY_CAPACITY RUN_IDLE=$ONLY_IDLE RUN_MILLION=$ONLY_MILLION
else
  RUN_BASELINES=1 RUN_CAPACITY=1 RUN_IDLE=1 RUN_MILLION=0
fi
[ "$SKIP_BASELINES" = 0 ] || RUN_BASELINES=0
if [ "$WITH_BASELINES" = 1 ] && [ "$SKIP_BASELINES" = 1 ]; then
  echo "bench.sh: --with-baselines and --skip-baselines contradict each other" >&2; exit 2
fi

ID="${BENCH_ID:-bench}"
[[ "$ID" =~ ^[a-z][a-z0-9_]{0,30}$ ]] || { echo "bench.sh: BENCH_ID must be a lower-case identifier ([a-z][a-z0-9_]*), got '$ID'" >&2; exit 2; }
OUT=target/bench
DATA=$OUT/data
JAR=$OUT/node.jar # a private copy: a rebuild of target/node.jar during the run must not change the JVM under test
PORT="${BENCH_PORT:-18080}"
NODE_SLOTS=256     # the node's default slots.total
SLOTS="${BENCH_SLOTS:-$NODE_SLOTS}" # every run's slots.total but the idle run's (BENCH_IDLE_SLOTS)
[[ "$SLOTS" =~ ^[1-9][0-9]*$ ]] && [ "$SLOTS" -le 4096 ] ||
  { echo "bench.sh: BENCH_SLOTS must be a whole number from 1 to 4096 (the node's slots.total), got '$SLOTS'" >&2; exit 2; }
RUN_SLOTS=$SLOTS   # the slots.total of the run under way
PREFIX=$ID         # queue and exchange prefix, PostgreSQL schema, Redis channel prefix and node id of the bench node
PG_SCRATCH=${ID}_pg # scratch schema of the database baseline
HEAP="${BENCH_HEAP:-2g}"
AMQP_URI="amqp://guest:guest@127.0.0.1:5672/%2f"
PSQL=(psql -h 127.0.0.1 -U postgres -d test -X -q -v ON_ERROR_STOP=1)
PERF_QUEUES=64
PERF_QUEUE_RE="^${ID}\\.perf\\.[0-9]+\$"

if [ "$QUICK" = 1 ]; then
  PERF_TIME=10 PG_TIME=10 WARMUP=10 WINDOW=10 CAP_N=20000 CAP_I=2000 HALF_I=2000
  IDLE_WARMUP=10 IDLE_WINDOW=10 MIL_N=50000 MIL_I=10000 MIL_WARMUP=20 MIL_WINDOW=10
else
  PERF_TIME=30 PG_TIME=30 WARMUP=20 WINDOW=60 CAP_N=150000 CAP_I=5000 HALF_I=5000
  IDLE_WARMUP=10 IDLE_WINDOW=30 MIL_N=1000000 MIL_I=60000 MIL_WARMUP="" MIL_WINDOW=60
fi
CAP_N="${BENCH_CAP_DEVICES:-$CAP_N}"
CAP_I="${BENCH_CAP_INTERVAL_MS:-$CAP_I}"
HALF_I="${BENCH_HALF_INTERVAL_MS:-$HALF_I}"
WARMUP="${BENCH_WARMUP_S:-$WARMUP}"
WINDOW="${BENCH_WINDOW_S:-$WINDOW}"
# idle: 100 devices at the node's default interval (read from the jar below unless BENCH_IDLE_INTERVAL_MS is set)
IDLE_N="${BENCH_IDLE_DEVICES:-100}"
IDLE_I="${BENCH_IDLE_INTERVAL_MS:-}"
IDLE_WARMUP="${BENCH_IDLE_WARMUP_S:-${BENCH_WARMUP_S:-$IDLE_WARMUP}}"
IDLE_WINDOW="${BENCH_IDLE_WINDOW_S:-${BENCH_WINDOW_S:-$IDLE_WINDOW}}"
# after the idle run: RabbitMQ alone for this long, first with the node's queues (node stopped), then without them
IDLE_REST="${BENCH_IDLE_REST_S:-20}"
IDLE_SLOTS="${BENCH_IDLE_SLOTS:-$SLOTS}"
[[ "$IDLE_SLOTS" =~ ^[1-9][0-9]*$ ]] && [ "$IDLE_SLOTS" -le "$SLOTS" ] ||
  { echo "bench.sh: BENCH_IDLE_SLOTS must be a whole number from 1 to $SLOTS (the other runs' count, which Teardown clears), got '$IDLE_SLOTS'" >&2; exit 2; }
# a million devices every 60 s; the warm-up covers one interval (every device's first check) plus 30 s
MIL_N="${BENCH_MILLION_DEVICES:-$MIL_N}"
MIL_I="${BENCH_MILLION_INTERVAL_MS:-$MIL_I}"
[ -n "$MIL_WARMUP" ] || MIL_WARMUP=$(( (MIL_I + 999) / 1000 + 30 ))
MIL_WARMUP="${BENCH_MILLION_WARMUP_S:-${BENCH_WARMUP_S:-$MIL_WARMUP}}"
MIL_WINDOW="${BENCH_MILLION_WINDOW_S:-${BENCH_WINDOW_S:-$MIL_WINDOW}}"
MIL_HEAP="${BENCH_MILLION_HEAP:-${BENCH_HEAP:-6g}}"
# after the million run, goal 5 by role: a worker and a probe each in a JVM of its own (role_heaps); 0 skips it
ROLE_HEAPS="${BENCH_ROLE_HEAPS:-1}"
ROLE_DRAIN_S="${BENCH_ROLE_DRAIN_S:-180}" # at most this long for the lone worker to empty the run's queues
ROLE_PROBE_S="${BENCH_ROLE_PROBE_S:-30}"  # the lone probe's heap is read this long after its start
ROLE_WORKER_HEAP="${BENCH_ROLE_WORKER_HEAP:-}" # the lone worker's -Xmx (default: the million run's): a small one shows a load's peak fits
ROLE_PIDS=()
MILLION_GOAL_N=1000000 MILLION_GOAL_I=60000 # issue 11, goal 1
for x in CAP_N:CAP_DEVICES CAP_I:CAP_INTERVAL_MS HALF_I:HALF_INTERVAL_MS WARMUP:WARMUP_S WINDOW:WINDOW_S IDLE_N:IDLE_DEVICES \
         IDLE_WARMUP:IDLE_WARMUP_S IDLE_WINDOW:IDLE_WINDOW_S MIL_N:MILLION_DEVICES MIL_I:MILLION_INTERVAL_MS \
         MIL_WARMUP:MILLION_WARMUP_S MIL_WINDOW:MILLION_WINDOW_S; do
  name="${x%%:*}"
  [[ "${!name}" =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: BENCH_${x#*:} (or BENCH_WARMUP_S / BENCH_WINDOW_S) must be a positive integer, got '${!name}'" >&2; exit 2; }
done
[ -z "$IDLE_I" ] || [[ "$IDLE_I" =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: BENCH_IDLE_INTERVAL_MS must be a positive integer" >&2; exit 2; }
[[ "$ROLE_HEAPS" =~ ^[01]$ ]] || { echo "bench.sh: BENCH_ROLE_HEAPS must be 0 or 1, got '$ROLE_HEAPS'" >&2; exit 2; }
for x in ROLE_DRAIN_S ROLE_PROBE_S; do
  [[ "${!x}" =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: BENCH_$x must be a positive integer, got '${!x}'" >&2; exit 2; }
done
AGED_DAYS="${BENCH_AGED_DAYS:-0}"
[[ "$AGED_DAYS" =~ ^[0-9]+$ ]] || { echo "bench.sh: BENCH_AGED_DAYS must be a whole number of days (0 = a fresh schema), got '$AGED_DAYS'" >&2; exit 2; }
AGED_HISTORY_MIN="${BENCH_AGED_HISTORY_MIN:-0}"
[[ "$AGED_HISTORY_MIN" =~ ^[0-9]+$ ]] || { echo "bench.sh: BENCH_AGED_HISTORY_MIN must be a whole number of minutes (0 = an empty history), got '$AGED_HISTORY_MIN'" >&2; exit 2; }
AGED_HISTORY_STEP="${BENCH_AGED_HISTORY_STEP_MS:-}"
[ -z "$AGED_HISTORY_STEP" ] || [[ "$AGED_HISTORY_STEP" =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: BENCH_AGED_HISTORY_STEP_MS must be a positive number of ms (unset = the run's interval), got '$AGED_HISTORY_STEP'" >&2; exit 2; }
STEP=10 # seconds between progress samples inside a window
# after the warm-up, wait (at most this long) until the JIT compiler has settled: at most JIT_SETTLE_SHARE of
# the node's CPU, or JIT_SETTLE_MC milli-cores, over JIT_SETTLE_STEP seconds
JIT_SETTLE_MAX="${BENCH_JIT_SETTLE_MAX_S:-90}" JIT_SETTLE_STEP=5 JIT_SETTLE_SHARE=0.05 JIT_SETTLE_MC=10
# then, in the runs that offer what the machine should carry (million, half), wait (at most this long) until the probe
# inspects in NORMAL mode: the warm-up's first result of every device is an insert, and a million of them can push the
# worker's commit p99 (a 2-minute window) past the fleet's 5 s, which halves the probe's normal devices and pauses its
# low ones until the p99 is under half of that for 30 s; a window then measures the throttled probe, not the run
MODE_SETTLE_MAX="${BENCH_MODE_SETTLE_MAX_S:-240}"
[[ "$MODE_SETTLE_MAX" =~ ^[0-9]+$ ]] || { echo "bench.sh: BENCH_MODE_SETTLE_MAX_S must be a whole number of seconds (0 = no wait), got '$MODE_SETTLE_MAX'" >&2; exit 2; }

# ------------------------------------------------------------------------------------------ helpers

say() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { say "ERROR: $*" >&2; exit 1; }
now() { date +%s.%N; }
# float arithmetic; prints NA when any argument is NA or empty
calc() { # awk-expression [a b c ...] (variables a, b, c, ... in the expression)
  local expr="$1"; shift
  local v names=(a b c d e f) i=0 args=()
  for v in "$@"; do
    case "$v" in '' | NA | NaN | nan) echo NA; return ;; esac
    args+=(-v "${names[$i]}=$v"); i=$((i + 1))
  done
  awk "${args[@]}" "BEGIN { x = ($expr); printf \"%.6f\\n\", x }" 2>/dev/null || echo NA # e.g. division by zero
}
fmt0() { [ "$1" = NA ] && echo NA || awk -v x="$1" 'BEGIN { printf "%.0f", x }'; }
fmt1() { [ "$1" = NA ] && echo NA || awk -v x="$1" 'BEGIN { printf "%.1f", x }'; }
fmt2() { [ "$1" = NA ] && echo NA || awk -v x="$1" 'BEGIN { printf "%.2f", x }'; }
fmt3() { [ "$1" = NA ] && echo NA || awk -v x="$1" 'BEGIN { printf "%.3f", x }'; }

# Prometheus text: value of one exact series, or the sum over every series of a metric (any labels)
mget() { # file series: NAME or NAME{LABELS}, LABELS a subset of the sample's (every node adds node="..." and role="...")
  awk -v m="$2" '
    BEGIN { b = index(m, "{"); name = b ? substr(m, 1, b - 1) : m; k = b ? split(substr(m, b + 1, length(m) - b - 1), want, ",") : 0 }
    { s = $1; b = index(s, "{"); if ((b ? substr(s, 1, b - 1) : s) != name) next
      for (i = 1; i <= k; i++) if (index(s, want[i]) == 0) next
      v = $NF; f = 1 }
    END { if (f && v ~ /^[-+0-9.eE]+$/) print v; else print "NA" }' "$1"
}
msum() { # file metric
  awk -v m="$2" '$1 == m || index($1, m "{") == 1 { if ($2 ~ /^[-+0-9.eE]+$/) { s += $2; n++ } }
                 END { if (n) printf "%.3f\n", s; else print "NA" }' "$1"
}
# the same for a counter registered on first use (per-slot worker counters): 0 when the node answered
# /metrics (the file has samples) but the counter has none yet; NA only when the scrape failed
msum0() { # file metric
  awk -v m="$2" '/^[a-z_]/ { any = 1 } $1 == m || index($1, m "{") == 1 { if ($2 ~ /^[-+0-9.eE]+$/) { s += $2; n++ } }
                 END { if (n) printf "%.3f\n", s; else if (any) print 0; else print "NA" }' "$1"
}

# CPU ticks (USER_HZ): machine busy, machine total, the node JVM, RabbitMQ (beam.smp), PostgreSQL (postgres)
cpu_snapshot() { # node-pid
  local u n s i w irq sirq st
  read -r _ u n s i w irq sirq st _ </proc/stat
  local procs
  # the bench's own samplers (cat, awk, curl, psql, ...) count in this shell's time once they are reaped; cat fails
  # when a process exits between the glob and its read (pipefail would end the bench): the others still count
  procs="$({ cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v np="$1" -v bp="$$" '
    { pid = $1; r = $0; sub(/.*\) /, "", r); c = $0; sub(/^[0-9]+ \(/, "", c); sub(/\) [^)]*$/, "", c)
      split(r, f, " "); t = f[12] + f[13]
      # RabbitMQ and PostgreSQL: with the time of their children that ended (a backend that exits while
      # we sample moves its time into the cutime/cstime of the postmaster instead of vanishing from the sum)
      if (pid == np) node += t; else if (c == "beam.smp") beam += t + f[14] + f[15]; else if (c == "postgres") pg += t + f[14] + f[15]
      else if (pid == bp) bench += t + f[14] + f[15] }
    END { printf "%d %d %d %d", node, beam, pg, bench }')"
  echo "$((u + n + s + irq + sirq + st)) $((u + n + s + i + w + irq + sirq + st)) $procs"
}

# cores used between two cpu_snapshot lines: "pid-process rabbitmq postgres other busy bench" (other >= 0; the
# bench's own samplers are left out of other and reported last, so they no longer make a quiet run look SKEWED)
cpu_split() { # snapshot0 snapshot1 seconds
  local b0 n0 r0 p0 s0 b1 n1 r1 p1 s1
  read -r b0 _ n0 r0 p0 s0 <<<"$1"
  read -r b1 _ n1 r1 p1 s1 <<<"$2"
  awk -v hz="$(getconf CLK_TCK)" -v dt="$3" -v b="$((b1 - b0))" -v n="$((n1 - n0))" -v r="$((r1 - r0))" -v p="$((p1 - p0))" -v s="$((s1 - s0))" \
    'BEGIN { o = b - n - r - p - s; if (o < 0) o = 0; printf "%.3f %.3f %.3f %.3f %.3f %.3f\n", n / hz / dt, r / hz / dt, p / hz / dt, o / hz / dt, b / hz / dt, s / hz / dt }'
}

# RabbitMQ's cores over the next seconds (beam.smp; other users of the broker count too)
rabbit_cores() { # seconds
  local c0 c1
  c0="$(cpu_snapshot 0)"; sleep "$1"; c1="$(cpu_snapshot 0)"
  cpu_split "$c0" "$c1" "$1" | awk '{ print $2 }'
}

# the node's CPU time per thread group, in clock ticks: "group ticks" lines (/proc/PID/task/*/stat; a thread's
# name is its first 15 characters, digits folded, so the four event loops are one group)
# one awk for all threads: a cat per thread (150 forks) made each snapshot cost the window about a second of CPU
thread_snapshot() { # node-pid
  { awk '{ print }' /proc/"$1"/task/*/stat 2>/dev/null || true; } | awk '
    { r = $0; sub(/.*\) /, "", r); c = $0; sub(/^[0-9]+ \(/, "", c); sub(/\) [^)]*$/, "", c); split(r, f, " ")
      g = c; gsub(/[0-9]+/, "N", g)
      if (g ~ /^vert\.x-eventloo/) g = "event-loops"; else if (g ~ /^C[N12] CompilerThre/) g = "JIT"
      else if (g ~ /^queue-sampler/) g = "queue-sampler"; else if (g ~ /^outbox-outbox/) g = "outbox-sqlite"
      else if (g ~ /^outbox-publish/) g = "outbox-publisher"; else if (g ~ /^AMQP Connection/) g = "amqp-client"
      else if (g ~ /^(GC Thread|G1 )/) g = "GC"; else if (g ~ /^vert\.x-worker/) g = "vertx-workers"
      else if (g ~ /^worker-acks/) g = "acks"; else g = "other"
      a[g] += f[12] + f[13] }
    END { for (k in a) print k, a[k] }'
}

# how often the node's event loops have woken so far: the sum of their voluntary context switches (a loop thread
# that blocks in epoll again after each wake-up switches once per wake-up: timers, I/O, tasks from other threads)
loop_wakeups() { # node-pid
  { awk 'FNR == 1 { loop = 0 } /^Name:/ { loop = ($2 ~ /^vert\.x-eventloo/) } loop && /^voluntary_ctxt_switches/ { print $2 }' \
      /proc/"$1"/task/*/status 2>/dev/null || true; } | awk '{ s += $1 } END { print s + 0 }'
}

# milli-cores per thread group between two thread_snapshot outputs, largest first: "event-loops 41, JIT 26, ..."
thread_split() { # snapshot0 snapshot1 seconds
  awk -v hz="$(getconf CLK_TCK)" -v dt="$3" 'NR == FNR { a[$1] = $2; next } { d[$1] = $2 - a[$1] }
    END { for (k in d) if (d[k] > 0) print k, d[k] * 1000 / hz / dt }' <(printf '%s\n' "$1") <(printf '%s\n' "$2") | mc_list
}

# "name milli-cores" lines -> "name 41, other 26, ...", largest first, values below 0.5 left out (NA when none is left)
mc_list() {
  LC_ALL=C sort -k2,2gr | awk '$2 >= 0.5 { out = out (out == "" ? "" : ", ") $1 " " sprintf("%.0f", $2) } END { print (out == "" ? "NA" : out) }'
}

# PostgreSQL's CPU time per process: "pid kind ticks" lines (its own time, without the time of children that ended).
# A client backend's kind is its application_name (the node names each pool: inspection-all/pg-worker,
# .../pg-scheduler, ...), any other its backend_type (walwriter, checkpointer, autovacuum worker, ...); a process
# pg_stat_activity does not list (the postmaster) is "postmaster". The sample's own backend (psql's, about 30 ms of
# PostgreSQL's CPU each on a 2-core machine: 7 samples in a 60 s idle window are 4 milli-cores, which the idle figure
# counted as PostgreSQL's until 2026-12-05) reads its own CPU time before it ends: kind "bench-sampler", which
# pg_sampler_cores takes out of PostgreSQL's figure (it counts it as the bench's)
# PostgreSQL's WAL and checkpoint counters (pg_stat_wal, pg_stat_bgwriter): records, full-page images, bytes, checkpoints
# timed and requested, pages the sessions wrote out themselves; "NA" when the server cannot say
pg_io_snapshot() {
  "${PSQL[@]}" -At -F ' ' -c "select w.wal_records, w.wal_fpi, w.wal_bytes, b.checkpoints_timed, b.checkpoints_req, b.buffers_backend
                              from pg_stat_wal w, pg_stat_bgwriter b" 2>/dev/null || echo NA
}

# the window's WAL and checkpoints per committed result: pg_io_split "snapshot0" "snapshot1" results/s seconds
pg_io_split() {
  awk -v a="$1" -v b="$2" -v rate="$3" -v dt="$4" -v maxwal="$PG_MAX_WAL" -v buffers="$PG_BUFFERS" 'BEGIN {
    if (split(a, x, " ") < 6 || split(b, y, " ") < 6 || rate <= 0 || dt <= 0) { print "NA"; exit }
    n = rate * dt
    printf "%.1f kB of WAL per result, %.2f full-page images per result, %d checkpoints forced by WAL volume (max_wal_size %s) and %d timed, %.2f pages written out by the sessions themselves per result (shared_buffers %s)",
      (y[3] - x[3]) / n / 1000, (y[2] - x[2]) / n, y[5] - x[5], maxwal, y[4] - x[4], (y[6] - x[6]) / n, buffers }'
}

pg_snapshot() {
  local kinds
  kinds="$("${PSQL[@]}" -At -F ' ' -c "select pid, translate(case when backend_type = 'client backend' then coalesce(nullif(application_name, ''), 'client')
             else backend_type end, ' ', '-') from pg_stat_activity" -c "select 'self', pg_backend_pid(), pg_read_file('/proc/self/stat')" 2>/dev/null || true)"
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v kinds="$kinds" '
    BEGIN { n = split(kinds, l, "\n")
            for (i = 1; i <= n; i++) {
              split(l[i], f, " ")
              if (f[1] != "self") { k[f[1]] = f[2]; continue }
              r = l[i]; sub(/.*\) /, "", r); split(r, g, " "); print f[2], "bench-sampler", g[12] + g[13] } }
    { pid = $1; c = $0; sub(/^[0-9]+ \(/, "", c); sub(/\) [^)]*$/, "", c); if (c != "postgres") next
      r = $0; sub(/.*\) /, "", r); split(r, f, " ")
      print pid, (pid in k ? k[pid] : "postmaster"), f[12] + f[13] }'
}

# milli-cores per PostgreSQL process kind over a window, from pg_snapshot samples taken at its start, at each step and
# at its end ("sample-number pid kind ticks" lines in a file): a process's time since the first sample it was in (all
# of it when it started within the window); "ended-unseen" is the rest of PostgreSQL's CPU (its total from
# cpu_snapshot, which counts the time of ended processes through the postmaster): processes that started and ended
# between two samples (autovacuum workers, a pool's connection), and the last seconds of those that ended
pg_split() { # samples-file postgres-cores seconds
  awk -v hz="$(getconf CLK_TCK)" -v dt="$3" -v total="$2" '
    { if ($1 == 0) first[$2] = $4; last[$2] = $4; if (!($2 in kind) || kind[$2] == "postmaster") kind[$2] = $3 }
    END { for (p in last) { d[kind[p]] += last[p] - (p in first ? first[p] : 0) }
          sum = 0; for (g in d) { v = d[g] * 1000 / hz / dt; sum += v; print g, v }
          print "ended-unseen", total * 1000 - sum }' "$1" | mc_list
}

# cores of PostgreSQL's that the bench's own pg_snapshot backends used over a window ("bench-sampler" in a samples file)
pg_sampler_cores() { # samples-file seconds
  awk -v hz="$(getconf CLK_TCK)" -v dt="$2" '$3 == "bench-sampler" { s += $4 } END { printf "%.6f\n", s / hz / dt }' "$1"
}

# runs a command in the background into a log; sets BG_RC and BG_CPU (cpu_split while it ran)
run_sampled() { # log command...
  local log=$1; shift
  "$@" >"$log" 2>&1 &
  BG_PID=$!
  local c0 t0 c1 t1
  c0="$(cpu_snapshot "$BG_PID")"; t0=$(now); c1=$c0; t1=$t0
  while kill -0 "$BG_PID" 2>/dev/null; do
    sleep 1
    if kill -0 "$BG_PID" 2>/dev/null; then c1="$(cpu_snapshot "$BG_PID")"; t1=$(now); fi
  done
  BG_RC=0
  wait "$BG_PID" || BG_RC=$?
  BG_PID=""
  BG_CPU="$(cpu_split "$c0" "$c1" "$(calc 'a - b + 0.000001' "$t1" "$t0")")"
}

gc_pause_ms() { # gc log -> total ms of pauses so far
  [ -f "$1" ] || { echo NA; return; }
  awk '/Pause/ && match($0, /([0-9.]+)ms$/, m) { s += m[1] } END { printf "%.0f\n", s }' "$1"
}

rabbit_bench_backlog() { # [prefix]: messages ready+unacked in the slot queues of prefix (default: the node's), NA when none is listed
  { timeout 60 rabbitmqctl -q list_queues name messages 2>/dev/null || true; } |
    awk -v p="${1:-$PREFIX}.status.s" 'index($1, p) == 1 { s += $2; n++ } END { if (n) print s; else print "NA" }'
}

# ------------------------------------------------------------------------------------------ state + cleanup

NODE_PID=""
BG_PID=""
PERF_QUEUES_MAYBE=0
PG_SCHEMA_MAYBE=0
NODE_TEARDOWN_MAYBE=0
EMPTY_TEARDOWN_MAYBE=0

delete_perf_queues() {
  command -v rabbitmqctl >/dev/null 2>&1 || { say "WARNING: rabbitmqctl missing: delete queues $ID.perf.1..$PERF_QUEUES by hand"; return 0; }
  # one call for all of them (RabbitMQ 3.10: rabbit_amqqueue:delete/4 takes the queue record) ...
  timeout 120 rabbitmqctl -q eval '
    Qs = [Q || Q <- rabbit_amqqueue:list(<<"/">>),
               re:run(element(4, amqqueue:get_name(Q)), "'"${PERF_QUEUE_RE//\\/\\\\}"'") =/= nomatch],
    [rabbit_amqqueue:delete(Q, false, false, <<"bench.sh">>) || Q <- Qs],
    length(Qs).' >/dev/null 2>&1 || true
  # ... and one by one for whatever is left (other broker versions)
  local left
  left="$(timeout 60 rabbitmqctl -q list_queues name 2>/dev/null | grep -E "$PERF_QUEUE_RE" || true)"
  if [ -n "$left" ]; then
    local q
    for q in $left; do timeout 30 rabbitmqctl -q delete_queue "$q" >/dev/null 2>&1 || true; done
    left="$(timeout 60 rabbitmqctl -q list_queues name 2>/dev/null | grep -cE "$PERF_QUEUE_RE" || true)"
    [ "${left:-0}" = 0 ] || say "WARNING: $left PerfTest queues ($ID.perf.N) are still on the broker"
  fi
}

drop_pg_scratch() { "${PSQL[@]}" -c "SET client_min_messages = warning; DROP SCHEMA IF EXISTS $PG_SCRATCH CASCADE" >/dev/null 2>&1 || say "WARNING: could not drop schema $PG_SCRATCH"; }

teardown_node() {
  # the probe's report hash in Redis (Teardown does not know Redis); best effort
  if command -v redis-cli >/dev/null 2>&1; then timeout 10 redis-cli -h 127.0.0.1 DEL "$PREFIX:probes" >/dev/null 2>&1 || true; fi
  java -cp "$JAR" dev.inspection.node.Teardown --yes --pg.schema="$PREFIX" --topology.prefix="$PREFIX" --slots.total=$SLOTS \
    >"$OUT/teardown.log" 2>&1 && return 0
  say "WARNING: Teardown failed ($(grep -m1 -E 'Exception|Error' "$OUT/teardown.log" | tr -d '\t\r' | cut -c1-200)); full output in $OUT/teardown.log"
  # Teardown stops at the first service it cannot reach: drop the schema here at least
  "${PSQL[@]}" -c "SET client_min_messages = warning; DROP SCHEMA IF EXISTS $PREFIX CASCADE" >/dev/null 2>&1 &&
    say "dropped schema $PREFIX with psql; the queues $PREFIX.status.* may be left: once RabbitMQ answers, run" \
        "java -cp $JAR dev.inspection.node.Teardown --yes --pg.schema=$PREFIX --topology.prefix=$PREFIX --slots.total=$SLOTS"
  return 1
}

migrate_schema() { # why: the node's schema, migrated before the node starts, for what the caller adds to it
  java -jar "$JAR" migrate --pg.schema="$PREFIX" --slots.total=$RUN_SLOTS --security.allow.insecure.credentials=true >"$OUT/migrate.log" 2>&1 ||
    die "migrating schema $PREFIX for $1 failed (log: $OUT/migrate.log)"
}

age_schema() { # BENCH_AGED_DAYS: migrate the node's schema and add the past days' partitions the retention keeps
  migrate_schema BENCH_AGED_DAYS
  "${PSQL[@]}" -v schema="$PREFIX" -v days="$AGED_DAYS" >"$OUT/age.log" 2>&1 <<'SQL' || die "adding $AGED_DAYS past days of partitions to $PREFIX failed (log: $OUT/age.log)"
SET client_min_messages = warning;
SELECT set_config('bench.schema', :'schema', false), set_config('bench.days', :'days', false);
DO $$
DECLARE
  s text := current_setting('bench.schema');
  d date;
  lo bigint;
  back int;
BEGIN
  FOR back IN 2 .. current_setting('bench.days')::int LOOP -- the migration made yesterday .. today + 3
    d := current_date - back;
    lo := (extract(epoch FROM (d::timestamp AT TIME ZONE 'UTC')) * 1000)::bigint;
    IF back <= 30 THEN
      EXECUTE format('CREATE TABLE %I.%I PARTITION OF %I.device_status_history_c1 FOR VALUES FROM (%s) TO (%s)', s, 'device_status_history_c1_' || to_char(d, 'YYYYMMDD'), s, lo, lo + 86400000);
    END IF;
    IF back <= 14 THEN
      EXECUTE format('CREATE TABLE %I.%I PARTITION OF %I.device_status_history_c2 FOR VALUES FROM (%s) TO (%s)', s, 'device_status_history_c2_' || to_char(d, 'YYYYMMDD'), s, lo, lo + 86400000);
    END IF;
    IF back <= 90 THEN
      EXECUTE format('CREATE TABLE %I.%I PARTITION OF %I.alert_event FOR VALUES FROM (%s) TO (%s)', s, 'alert_event_' || to_char(d, 'YYYYMMDD'), s, lo, lo + 86400000);
      EXECUTE format('CREATE TABLE %I.%I PARTITION OF %I.device_status_rollup_1m FOR VALUES FROM (%L) TO (%L)', s, 'device_status_rollup_1m_' || to_char(d, 'YYYYMMDD'), s,
                     d::timestamp AT TIME ZONE 'UTC', (d + 1)::timestamp AT TIME ZONE 'UTC');
    END IF;
  END LOOP;
END $$;
SQL
  AGED_PARTS=$("${PSQL[@]}" -Atc "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '$PREFIX' AND c.relkind = 'r' AND c.relispartition")
}

age_history() { # tag devices interval_ms (BENCH_AGED_HISTORY_MIN): the run's devices' history of the minutes before it
  local tag=$1 n=$2 i=${AGED_HISTORY_STEP:-$3} t0 rounds r ms
  [ "$AGED_DAYS" != 0 ] || migrate_schema BENCH_AGED_HISTORY_MIN # age_schema migrated it already
  rounds=$(( (AGED_HISTORY_MIN * 60000 + i - 1) / i ))
  ms=$(( $(date +%s%3N) - 5000 ))
  t0=$(now)
  say "[$tag] filling history with $AGED_HISTORY_MIN minutes of $n devices, a row each every $i ms: $rounds rounds of $n rows (BENCH_AGED_HISTORY_MIN${AGED_HISTORY_STEP:+, BENCH_AGED_HISTORY_STEP_MS})"
  for ((r = rounds; r >= 1; r--)); do
    # round r: every device once, spread over the interval that ends r intervals before the run; the seq is unique per
    # device and round, and the message id names the fill. Ids and retention classes as Inventory.simulated makes them
    # (sim-%06d, every 20th device critical): change both together
    "${PSQL[@]}" -v schema="$PREFIX" -v n="$n" -v i="$i" -v hi="$((ms - (r - 1) * i))" -v r="$r" >>"$OUT/age-history.log" 2>&1 <<'SQL' ||
SET client_min_messages = warning;
SET synchronous_commit = off;
SET search_path = :"schema";
INSERT INTO device_status_history (device_id, cycle_id, seq, retention_class, slot_id, collected_at, received_at, writer_epoch, message_id, status_payload)
SELECT d, c, s, CASE WHEN k % 20 = 0 THEN 1 ELSE 2 END, (k % 256)::smallint, to_timestamp(c / 1000.0), to_timestamp(c / 1000.0 + 0.5), 1,
       'aged:' || c || ':' || d || ':' || s, ('{"check":"sim","status":"UP","latency_ms":' || (1 + k % 50) || '}')::jsonb
FROM (SELECT k, 'sim-' || CASE WHEN k < 1000000 THEN lpad(k::text, 6, '0') ELSE k::text END AS d, :hi::bigint - :i::bigint + (k * :i::bigint / :n::bigint) AS c, 1000000000000::bigint * :r + k AS s
      FROM generate_series(1, :n::bigint) k) g;
SQL
      die "filling history for BENCH_AGED_HISTORY_MIN failed (log: $OUT/age-history.log)"
    (( (rounds - r + 1) % 10 == 0 )) && say "  [$tag] history fill: $((rounds - r + 1)) of $rounds rounds in $(fmt0 "$(calc 'a - b' "$(now)" "$t0")") s"
  done
  "${PSQL[@]}" -c "SET client_min_messages = warning" -c "VACUUM (ANALYZE) $PREFIX.device_status_history" -c "CHECKPOINT" >>"$OUT/age-history.log" 2>&1 ||
    die "vacuuming the filled history failed (log: $OUT/age-history.log)"
  AGED_HISTORY_SIZES=$("${PSQL[@]}" -Atc "SELECT string_agg(format('%s %s rows, %s MB heap + %s MB key', c.relname, c.reltuples::bigint,
      pg_relation_size(c.oid) >> 20, pg_indexes_size(c.oid) >> 20), '; ' ORDER BY c.relname)
    FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
    WHERE ns.nspname = '$PREFIX' AND c.relkind = 'r' AND c.relname LIKE 'device_status_history_c%' AND c.reltuples > 0")
  say "[$tag] history filled in $(fmt0 "$(calc 'a - b' "$(now)" "$t0")") s (with the vacuum and checkpoint): $AGED_HISTORY_SIZES"
}

stop_node() { # sets NODE_STOP_S
  [ -n "$NODE_PID" ] || return 0
  local t0 pid="$NODE_PID"
  t0=$(now)
  kill -TERM "$pid" 2>/dev/null || true
  local waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 600 ]; do sleep 0.1; waited=$((waited + 1)); done
  if kill -0 "$pid" 2>/dev/null; then
    say "WARNING: node (pid $pid) still running 60 s after SIGTERM: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  NODE_PID=""
  NODE_STOP_S=$(fmt1 "$(calc 'a - b' "$(now)" "$t0")")
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  if [ -n "$BG_PID" ] && kill -0 "$BG_PID" 2>/dev/null; then
    kill -TERM "$BG_PID" 2>/dev/null; wait "$BG_PID" 2>/dev/null
  fi
  if [ -n "$NODE_PID" ]; then say "stopping the node (pid $NODE_PID) ..."; stop_node; fi
  if [ "${#ROLE_PIDS[@]}" -gt 0 ]; then say "stopping the role JVMs (${ROLE_PIDS[*]}) ..."; stop_roles; fi
  if [ "$EMPTY_TEARDOWN_MAYBE" = 1 ]; then say "cleanup: Teardown of ${PREFIX}0 (the lone worker's empty schema)"; teardown_empty; fi
  if [ "$NODE_TEARDOWN_MAYBE" = 1 ]; then say "cleanup: Teardown of the node's queues and schema"; teardown_node; fi
  if [ "$PERF_QUEUES_MAYBE" = 1 ]; then say "cleanup: deleting the PerfTest queues"; delete_perf_queues; fi
  if [ "$PG_SCHEMA_MAYBE" = 1 ]; then say "cleanup: dropping schema $PG_SCRATCH"; drop_pg_scratch; fi
  [ "$DATA_MINE" = 0 ] || rm -rf "$DATA"
  exit "$rc"
}

# One benchmark at a time, and nothing of a running one is touched (its jar, data dir, queues, schema):
# checked before the cleanup trap is installed, so a refused start removes nothing.
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
flock -n 9 || die "another scripts/bench.sh is running (lock $OUT/.lock held); wait for it to finish"
if curl -s -o /dev/null --max-time 3 "http://127.0.0.1:$PORT/"; then
  die "something already answers on 127.0.0.1:$PORT (a bench node left from another run?); stop it first"
fi
DATA_MINE=0
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

# ------------------------------------------------------------------------------------------ preflight

for tool in java curl awk; do command -v $tool >/dev/null 2>&1 || die "$tool is missing"; done
if [ ! -f target/node.jar ]; then
  command -v mvn >/dev/null 2>&1 || die "target/node.jar is missing and mvn is not installed"
  say "target/node.jar is missing: building it (mvn -q -B package -DskipTests) ..."
  mvn -q -B package -DskipTests
  [ -f target/node.jar ] || die "the build finished but target/node.jar does not exist"
fi
# copy, then rename: a new file, never rewritten in place under a JVM that has the old one open
cp target/node.jar "$JAR.tmp.$$" && mv -f "$JAR.tmp.$$" "$JAR"

NPROC=$(nproc)
STARTED_AT="$(date -u '+%Y-%m-%d %H:%M UTC')"
COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo '?')"
DIRTY=""
[ -n "$(git status --porcelain -- src pom.xml 2>/dev/null)" ] && DIRTY=" (src/ or pom.xml has uncommitted changes)"
JAR_TIME="$(date -r target/node.jar '+%Y-%m-%d %H:%M:%S')"
say "inspection-node benchmark$([ "$QUICK" = 1 ] && echo ' (--quick)'): $NPROC cores, git $COMMIT$DIRTY, target/node.jar built $JAR_TIME"
say "load average before start: $(cut -d' ' -f1-3 /proc/loadavg)"
OTHERS="$(ps -eo pid=,ppid=,pcpu=,args= --sort=-pcpu | awk -v me=$$ '$3 > 10 && $1 != me && $2 != me { $2 = ""; print }' |
          grep -vE 'beam\.smp|postgres|redis-server' | head -n 5 || true)"
[ -n "$OTHERS" ] && say "WARNING: other busy processes share the $NPROC cores (they skew every figure):" && echo "$OTHERS" | cut -c1-160

if [ -z "$IDLE_I" ]; then # the node's default interval (Keys.PROBE_INTERVAL_MS), from the jar under test
  IDLE_I="$(java -jar "$JAR" --print-config 2>/dev/null | awk -F= '$1 == "probe.interval.ms" { print $2; exit }' || true)"
  [[ "$IDLE_I" =~ ^[1-9][0-9]*$ ]] || { say "WARNING: could not read probe.interval.ms from the jar (--print-config): idle run at 10000 ms"; IDLE_I=10000; }
fi
PG_SYNC="$("${PSQL[@]}" -At -c 'SHOW synchronous_commit' 2>/dev/null || echo NA)"
PG_BUFFERS="$("${PSQL[@]}" -At -c 'SHOW shared_buffers' 2>/dev/null || echo NA)"
PG_MAX_WAL="$("${PSQL[@]}" -At -c 'SHOW max_wal_size' 2>/dev/null || echo NA)"

# results (NA until measured)
PERF_SENT=NA PERF_RECV=NA PERF_SENT_STEADY=NA PERF_RECV_STEADY=NA PG_TPS=NA PG_ROWS=NA PG_LAT=NA PG_FAILED=NA
PERF_CPU_OTHER=NA PG_CPU_OTHER=NA
declare -A R

# ------------------------------------------------------------------------------------------ 1. broker baseline

perftest_fetch() {
  local dir=$OUT/perf-test
  if ls "$dir"/lib/perf-test-*.jar >/dev/null 2>&1; then return 0; fi
  command -v mvn >/dev/null 2>&1 || die "mvn is needed once to fetch PerfTest from Maven Central"
  mkdir -p "$dir"
  local v
  for v in ${BENCH_PERFTEST_VERSIONS:-2.22.1 2.22.0 2.21.0 2.20.0}; do
    say "fetching com.rabbitmq:perf-test:$v and its runtime dependencies (Maven Central) ..."
    # perf-test's jar is not a fat jar: a throwaway pom lets copy-dependencies bring its dependencies too
    cat >"$dir/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.bench</groupId>
  <artifactId>perf-test-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>com.rabbitmq</groupId><artifactId>perf-test</artifactId><version>$v</version></dependency>
  </dependencies>
</project>
EOF
    rm -rf "${dir:?}/lib"
    if mvn -q -B -f "$dir/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=lib \
         >"$dir/mvn.log" 2>&1 && ls "$dir"/lib/perf-test-*.jar >/dev/null 2>&1; then
      return 0
    fi
    say "perf-test $v did not resolve (see $dir/mvn.log)"
  done
  die "no perf-test version resolved"
}

broker_baseline() {
  perftest_fetch
  command -v rabbitmqctl >/dev/null 2>&1 || die "rabbitmqctl is needed to delete the PerfTest quorum queues"
  local jar
  jar="$(find "$OUT/perf-test/lib" -name "perf-test-*.jar" | head -n 1)"
  PERF_QUEUES_MAYBE=1
  delete_perf_queues # left by an aborted run
  say "1/3 broker baseline: $(basename "$jar" .jar), $PERF_QUEUES quorum queues, 64 producers (confirms, 200 in flight each), 64 consumers (qos 300, multi-ack 100), 400-byte persistent messages, ${PERF_TIME} s ..."
  run_sampled "$OUT/perftest.log" java -Xmx1g -cp "$OUT/perf-test/lib/*" com.rabbitmq.perf.PerfTest \
    --uri "$AMQP_URI" --id "$ID-perf" \
    --queue-pattern "$ID.perf.%d" --queue-pattern-from 1 --queue-pattern-to $PERF_QUEUES \
    --producers 64 --consumers 64 --quorum-queue --auto-delete false \
    --confirm 200 --flag persistent --size 400 --qos 300 --multi-ack-every 100 \
    --time "$PERF_TIME"
  local rc=$BG_RC
  read -r PERF_CPU_TOOL PERF_CPU_RABBIT _ PERF_CPU_OTHER _ _ <<<"$BG_CPU"
  say "deleting the $PERF_QUEUES PerfTest queues ..."
  delete_perf_queues
  PERF_QUEUES_MAYBE=0
  [ "$rc" = 0 ] || { tail -n 20 "$OUT/perftest.log" >&2; die "PerfTest exited with $rc (log: $OUT/perftest.log)"; }
  PERF_SENT="$(awk '/sending rate avg:/ { v = $(NF-1) } END { print (v == "" ? "NA" : v) }' "$OUT/perftest.log")"
  PERF_RECV="$(awk '/receiving rate avg:/ { v = $(NF-1) } END { print (v == "" ? "NA" : v) }' "$OUT/perftest.log")"
  # steady state: mean of the per-second samples after the first 5 s (ramp-up, queue declarations)
  read -r PERF_SENT_STEADY PERF_RECV_STEADY < <(awk '
    / time [0-9.]+ s, sent: / { for (i = 1; i <= NF; i++) { if ($i == "time") t = $(i+1); if ($i == "sent:") s = $(i+1); if ($i == "received:") r = $(i+1) }
                               if (t + 0 > 5) { ss += s; rr += r; n++ } }
    END { if (n) printf "%.0f %.0f\n", ss / n, rr / n; else print "NA NA" }' "$OUT/perftest.log")
  say "PerfTest: $PERF_SENT msg/s published, $PERF_RECV msg/s consumed (its averages over the whole run; after the first 5 s: $PERF_SENT_STEADY / $PERF_RECV_STEADY msg/s);" \
      "CPU cores used: PerfTest $(fmt2 "$PERF_CPU_TOOL"), rabbitmq $(fmt2 "$PERF_CPU_RABBIT"), other processes $(fmt2 "$PERF_CPU_OTHER") of $NPROC"
}

# ------------------------------------------------------------------------------------------ 2. database baseline

database_baseline() {
  command -v pgbench >/dev/null 2>&1 || die "pgbench is missing (it comes with PostgreSQL: postgresql-client)"
  PG_SCHEMA_MAYBE=1
  say "2/3 database baseline: scratch schema $PG_SCRATCH (copies of device_status_current/history, 100,000 devices) ..."
  "${PSQL[@]}" -v scratch="$PG_SCRATCH" -f scripts/bench/pg-setup.sql >"$OUT/pgbench-setup.log" 2>&1 || { cat "$OUT/pgbench-setup.log" >&2; die "setting up $PG_SCRATCH failed"; }
  say "pgbench: 4 clients, 2 threads, prepared statements, ${PG_TIME} s, one transaction = 200-row upsert + 200-row history insert ..."
  run_sampled "$OUT/pgbench.log" env PGOPTIONS="-c search_path=$PG_SCRATCH" pgbench -h 127.0.0.1 -U postgres -n -M prepared -c 4 -j 2 -T "$PG_TIME" -f scripts/bench/upsert.sql test
  local rc=$BG_RC
  read -r PG_CPU_TOOL _ PG_CPU_PG PG_CPU_OTHER _ _ <<<"$BG_CPU"
  drop_pg_scratch
  PG_SCHEMA_MAYBE=0
  [ "$rc" = 0 ] || { tail -n 20 "$OUT/pgbench.log" >&2; die "pgbench exited with $rc (log: $OUT/pgbench.log)"; }
  PG_TPS="$(awk '/^tps = / { print $3; exit }' "$OUT/pgbench.log")"
  PG_LAT="$(awk '/^latency average = / { print $4; exit }' "$OUT/pgbench.log")"
  PG_FAILED="$(awk -F': ' '/^number of failed transactions/ { split($2, a, " "); print a[1]; exit }' "$OUT/pgbench.log")"
  PG_TPS="${PG_TPS:-NA}" PG_LAT="${PG_LAT:-NA}" PG_FAILED="${PG_FAILED:-0}"
  PG_ROWS="$(calc 'a * 200' "$PG_TPS")"
  say "pgbench: $(fmt1 "$PG_TPS") batches/s = $(fmt0 "$PG_ROWS") rows/s, latency average $PG_LAT ms, failed transactions $PG_FAILED;" \
      "CPU cores used: pgbench $(fmt2 "$PG_CPU_TOOL"), postgres $(fmt2 "$PG_CPU_PG"), other processes $(fmt2 "$PG_CPU_OTHER") of $NPROC"
}

# ------------------------------------------------------------------------------------------ 3. end to end

nap() { # seconds: sleep while the node lives
  local end
  end=$(calc 'a + b' "$(now)" "$1")
  while awk -v e="$end" -v t="$(now)" 'BEGIN { exit !(t < e) }'; do
    kill -0 "$NODE_PID" 2>/dev/null || { tail -n 30 "$NODE_LOG" >&2; die "the node died (log: $NODE_LOG)"; }
    sleep 1
  done
}

start_node() { # tag devices interval_ms heap
  local tag=$1 n=$2 i=$3 heap=$4
  NODE_LOG=$OUT/node-$tag.log
  DATA_MINE=1
  rm -rf "$DATA" "$OUT/gc-$tag.log" "$NODE_LOG"
  NODE_TEARDOWN_MAYBE=1
  teardown_node || die "Teardown before the run failed (RabbitMQ or PostgreSQL down?)"
  [ "$AGED_DAYS" = 0 ] || age_schema
  [ "$AGED_HISTORY_MIN" = 0 ] || age_history "$tag" "$n" "$i"
  local jvm_opts=${BENCH_JVM_OPTS:-}
  jvm_opts=${jvm_opts//\{run\}/$tag}
  # the scheduler's API needs real secrets: throwaway ones, through the environment
  # shellcheck disable=SC2086 # jvm_opts (BENCH_JVM_OPTS) and BENCH_NODE_FLAGS hold several words
  INSPECT_API_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n') \
  INSPECT_CONSOLE_PASSWORD=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n') \
  java "-Xmx$heap" "-Xlog:gc:file=$OUT/gc-$tag.log" $jvm_opts -jar "$JAR" --role=all --node.id=$PREFIX --pg.schema=$PREFIX \
    --topology.prefix=$PREFIX --redis.channel.prefix=$PREFIX --http.port=$PORT --data.dir="$DATA" \
    --probe.sim.devices="$n" --probe.interval.ms="$i" --slots.total=$RUN_SLOTS --security.allow.insecure.credentials=true \
    --scheduler.min.workers=1 ${BENCH_NODE_FLAGS:-} >"$NODE_LOG" 2>&1 &
  NODE_PID=$!
  local waited=0
  until grep -q 'is up: http' "$NODE_LOG" 2>/dev/null; do
    kill -0 "$NODE_PID" 2>/dev/null || { NODE_PID=""; tail -n 30 "$NODE_LOG" >&2; die "the node exited during start-up (log: $NODE_LOG)"; }
    [ "$waited" -lt 3000 ] || { tail -n 30 "$NODE_LOG" >&2; die "the node did not come up within 300 s (log: $NODE_LOG)"; }
    sleep 0.1; waited=$((waited + 1))
  done
  say "node up after $(fmt1 "$(calc 'a / 10' "$waited")") s (pid $NODE_PID, -Xmx$heap, $n devices every $i ms, $RUN_SLOTS slots)"
}

await_slots() { # tag: the warm-up starts once the worker consumes every slot (the cold start opens them in waves)
  local t0 waited=0 held
  t0=$(now)
  while :; do
    scrape "$OUT/slots-$1.prom"
    held=$(mget "$OUT/slots-$1.prom" worker_slots_held)
    [ "$held" != NA ] && [ "${held%.*}" -ge "$RUN_SLOTS" ] && break
    [ "$waited" -lt 300 ] || { say "[$1] WARNING: the worker holds ${held} of $RUN_SLOTS slots after 300 s; warming up anyway"; return; }
    kill -0 "$NODE_PID" 2>/dev/null || die "the node died (log: $NODE_LOG)"
    sleep 1; waited=$((waited + 1))
  done
  say "[$1] the worker consumes all $RUN_SLOTS slots $(fmt1 "$(calc 'a - b' "$(now)" "$t0")") s after start-up (cold start in waves); warm-up begins"
}

scrape() { # file: /metrics into file; fails softly (file then has no metrics)
  curl -s --max-time 20 "http://127.0.0.1:$PORT/metrics" -o "$1" || : >"$1"
}

log_scan() { # log -> "errors warnings errors_in_shutdown warnings_in_shutdown connection_losses"
  awk '/shutting down/ { sd = 1 }
       / ERROR / || /OutOfMemoryError/ { if (sd) es++; else e++ }
       / WARN / { if (sd) ws++; else w++ }
       !sd && /connection lost|cannot connect|Connection refused|connection may have been lost|liveness session lost/ { c++ }
       END { printf "%d %d %d %d %d\n", e, w, es, ws, c }' "$1"
}

# bytes of the node's history partitions (tables, indexes, TOAST); NA when unreadable
hist_bytes() {
  timeout 60 "${PSQL[@]}" -At -c "SELECT coalesce(sum(pg_total_relation_size(relid)), 0)
      FROM pg_partition_tree('$PREFIX.device_status_history'::regclass) WHERE isleaf" 2>/dev/null | grep -E '^[0-9]+$' || echo NA
}

# probe->commit lag from the database: history rows whose received_at falls in [t0, t1) (epoch seconds);
# received_at is the column default now(), the start of the worker's commit transaction
db_lag() { # t0 t1 -> "rows p50_ms p99_ms max_ms" of all rows, then the same of the critical ones (retention class 1), one scan
  local out f a=""
  for f in "" " FILTER (WHERE c = 1)"; do # NA where no row
    a+="${a:+, }count(*)$f,
        coalesce(round((percentile_cont(0.5) WITHIN GROUP (ORDER BY l)$f)::numeric, 1)::text, 'NA'),
        coalesce(round((percentile_cont(0.99) WITHIN GROUP (ORDER BY l)$f)::numeric, 1)::text, 'NA'),
        coalesce(round((max(l)$f)::numeric, 1)::text, 'NA')"
  done
  out="$(timeout 600 "${PSQL[@]}" -At -F ' ' -c "SELECT $a
      FROM (SELECT extract(epoch FROM received_at - collected_at) * 1000 AS l, retention_class AS c FROM $PREFIX.device_status_history
            WHERE received_at >= to_timestamp($1) AND received_at < to_timestamp($2)) AS w" 2>"$OUT/db-lag.err")" || out=""
  [ -n "$out" ] && echo "$out" || echo "NA NA NA NA NA NA NA NA"
}

# heap in use after a full GC (jcmd GC.run, then GC.heap_info), in bytes; NA when jcmd fails
heap_after_gc() { # pid
  command -v jcmd >/dev/null 2>&1 || { echo NA; return; }
  timeout 120 jcmd "$1" GC.run >/dev/null 2>&1 || { echo NA; return; }
  { timeout 30 jcmd "$1" GC.heap_info 2>/dev/null || true; } |
    awk '!f && match($0, /total [0-9]+K, used [0-9]+K/) { split(substr($0, RSTART, RLENGTH), w, /[ K,]+/); printf "%.0f\n", w[4] * 1024; f = 1 }
         END { if (!f) print "NA" }'
}

# the JIT compiler's milli-cores and the node's, between two thread_snapshot outputs: "jit node"
jit_share() { # snapshot0 snapshot1 seconds
  awk -v hz="$(getconf CLK_TCK)" -v dt="$3" 'NR == FNR { a[$1] = $2; next } { d = $2 - a[$1]; all += d; if ($1 == "JIT") j += d }
    END { printf "%.0f %.0f\n", j * 1000 / hz / dt, all * 1000 / hz / dt }' <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

# After the warm-up: a node a minute old still compiles (C1/C2 threads took a quarter of the node's CPU in a
# capacity window, perf and /proc both), which is start-up cost, not cost per result. Waits in steps until the
# compiler uses at most JIT_SETTLE_SHARE of the node's CPU (or JIT_SETTLE_MC), at most JIT_SETTLE_MAX seconds.
await_jit() { # tag
  local tag=$1 waited=0 s0 s1 t0 t1 dt j node start
  R[$tag.jit_wait]=0
  [ "$JIT_SETTLE_MAX" -gt 0 ] || return 0
  start=$(now)
  s0="$(thread_snapshot "$NODE_PID")"; t0=$(now)
  while [ "$waited" -lt "$JIT_SETTLE_MAX" ]; do
    nap "$JIT_SETTLE_STEP"
    s1="$(thread_snapshot "$NODE_PID")"; t1=$(now)
    dt=$(calc 'a - b' "$t1" "$t0")
    waited=$(fmt0 "$(calc 'a - b' "$t1" "$start")")
    read -r j node <<<"$(jit_share "$s0" "$s1" "$dt")"
    s0=$s1 t0=$t1
    if awk -v j="$j" -v n="$node" -v s="$JIT_SETTLE_SHARE" -v m="$JIT_SETTLE_MC" 'BEGIN { exit !(j <= m || j <= s * n) }'; then
      say "[$tag] JIT compiler settled after $waited s more: $j of the node's $node milli-cores"
      R[$tag.jit_wait]=$waited
      return 0
    fi
    say "  [$tag] JIT compiler still busy: $j of the node's $node milli-cores over $(fmt1 "$dt") s (waiting until <= $(fmt0 "$(calc 'a * 100' "$JIT_SETTLE_SHARE")") %, at most ${JIT_SETTLE_MAX} s)"
  done
  R[$tag.jit_wait]=$waited
  say "[$tag] WARNING: the JIT compiler did not settle within ${JIT_SETTLE_MAX} s ($j of the node's $node milli-cores): its share counts in this window"
}

probe_mode() { # metrics-file: the probe's effective mode (NORMAL, BACKPRESSURE_HIGH, ...), NA if none
  awk '$1 ~ /^probe_mode\{/ && $1 ~ /source="effective"/ && $2 + 0 == 1 { if (match($1, /mode="[A-Z_]+"/)) m = substr($1, RSTART + 6, RLENGTH - 7) } END { print m ? m : "NA" }' "$1"
}

# After await_jit in the million and half-rate runs: until the probe inspects in NORMAL mode, at most MODE_SETTLE_MAX s.
await_normal() { # tag
  local tag=$1 f=$OUT/metrics-$1-mode.txt start waited mode
  R[$tag.mode_wait]=0 R[$tag.mode_before]=NORMAL
  [ "$MODE_SETTLE_MAX" -gt 0 ] || return 0
  start=$(now)
  while :; do
    scrape "$f"
    mode=$(probe_mode "$f")
    waited=$(fmt0 "$(calc 'a - b' "$(now)" "$start")")
    if [ "$mode" = NORMAL ] || [ "$mode" = NA ]; then
      [ "${R[$tag.mode_before]}" = NORMAL ] || say "[$tag] the probe inspects in NORMAL mode again after $waited s more"
      R[$tag.mode_wait]=$waited
      return 0
    fi
    R[$tag.mode_before]=$mode
    if [ "$waited" -ge "$MODE_SETTLE_MAX" ]; then
      R[$tag.mode_wait]=$waited
      say "[$tag] WARNING: the probe still inspects in mode $mode after $waited s: this window measures a throttled probe"
      return 0
    fi
    say "  [$tag] the probe inspects in mode $mode (fleet backpressure; worker commit p99 $(fmt0 "$(calc 'a * 1000' "$(mget "$f" 'worker_commit_latency_seconds{quantile="0.99"}')")") ms over 2 minutes):" \
        "waiting until NORMAL, at most ${MODE_SETTLE_MAX} s"
    nap 5
  done
}

# Goal 5 apart by role (the million run, once its node is stopped, with its schema and queues kept): in one JVM the
# probe's and the worker's heaps cannot be told apart, and the worker's prefetched backlog inflates them. A scheduler
# and a worker in JVMs of their own on the run's schema: the worker's live heap once it holds every slot, each loaded
# from the devices' snapshots, and the queues are empty (its prefetch holds nothing); the same on an empty schema of
# its own (<id>0, removed again) for the worker's fixed part (its slots' consumers, pools, meters), so the difference
# over the devices is what a device costs; then a probe in a JVM of its own with the run's simulated fleet, its live
# heap BENCH_ROLE_PROBE_S after start (its schedule holds every device; the whole heap, an upper bound).
start_role() { # prefix role port log heap flags... -> pid in ROLE_PID
  local prefix=$1 role=$2 port=$3 log=$4 heap=$5 jvm_opts=${BENCH_JVM_OPTS:-}
  shift 5
  # {run} in BENCH_JVM_OPTS: the log's name without node-, e.g. million-worker (the lone worker), million-probe
  jvm_opts=${jvm_opts//\{run\}/$(basename "$log" .log | sed 's/^node-//')}
  # out of memory ends the JVM, as in the packaged units (ExitOnOutOfMemoryError): a heap too small shows as a death
  # shellcheck disable=SC2086 # BENCH_NODE_FLAGS and jvm_opts (BENCH_JVM_OPTS) hold several words
  INSPECT_API_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n') \
  INSPECT_CONSOLE_PASSWORD=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n') \
  java "-Xmx$heap" -XX:+ExitOnOutOfMemoryError $jvm_opts -jar "$JAR" --role="$role" --node.id="$prefix-$role" --pg.schema="$prefix" --topology.prefix="$prefix" \
    --redis.channel.prefix="$prefix" --http.port="$port" --data.dir="$DATA-$role" --slots.total=$RUN_SLOTS \
    --security.allow.insecure.credentials=true --scheduler.min.workers=1 "$@" ${BENCH_NODE_FLAGS:-} >"$log" 2>&1 &
  ROLE_PID=$!
  ROLE_PIDS+=("$ROLE_PID")
  local waited=0
  until grep -q 'is up: http' "$log" 2>/dev/null; do
    kill -0 "$ROLE_PID" 2>/dev/null || { tail -n 20 "$log" >&2; say "WARNING: the $role JVM exited during start-up (log: $log)"; return 1; }
    [ "$waited" -lt 3000 ] || { say "WARNING: the $role JVM did not come up within 300 s (log: $log)"; return 1; }
    sleep 0.1; waited=$((waited + 1))
  done
}

stop_roles() { # SIGTERM to every role JVM, then waits (SIGKILL after 60 s)
  local pid waited
  for pid in "${ROLE_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${ROLE_PIDS[@]}"; do
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 600 ]; do sleep 0.1; waited=$((waited + 1)); done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  ROLE_PIDS=()
  rm -rf "$DATA-scheduler" "$DATA-worker" "$DATA-probe"
}

teardown_empty() { # the lone worker's empty schema and queues (<id>0)
  java -cp "$JAR" dev.inspection.node.Teardown --yes --pg.schema="${PREFIX}0" --topology.prefix="${PREFIX}0" --slots.total=$SLOTS \
    >"$OUT/teardown-empty.log" 2>&1 || say "WARNING: Teardown of ${PREFIX}0 failed (see $OUT/teardown-empty.log)"
  if command -v redis-cli >/dev/null 2>&1; then timeout 10 redis-cli -h 127.0.0.1 DEL "${PREFIX}0:probes" >/dev/null 2>&1 || true; fi
  EMPTY_TEARDOWN_MAYBE=0
}

# a scheduler and a worker on prefix's schema until the worker holds every slot and prefix's slot queues are empty;
# sets R[million.<key>_heap] (live heap after a full GC, bytes), R[million.<key>_load_s], R[million.<key>_backlog];
# its class histogram in $OUT/heap-million-<key>.txt. Returns 1 when it could not measure.
lone_worker() { # prefix key heap
  local prefix=$1 key=$2 heap=$3 held waited t0 backlog m=$OUT/metrics-million-$2.txt wpid
  start_role "$prefix" scheduler $((PORT + 1)) "$OUT/node-million-$key-scheduler.log" 1g || { stop_roles; return 1; }
  start_role "$prefix" worker $((PORT + 2)) "$OUT/node-million-$key.log" "$heap" || { stop_roles; return 1; }
  wpid=$ROLE_PID
  t0=$(now) waited=0
  while :; do
    curl -s --max-time 20 "http://127.0.0.1:$((PORT + 2))/metrics" -o "$m" || : >"$m"
    held=$(mget "$m" worker_slots_held)
    [ "$held" != NA ] && [ "${held%.*}" -ge "$RUN_SLOTS" ] && break
    if ! kill -0 "$wpid" 2>/dev/null; then
      say "WARNING: the lone worker died$(grep -q OutOfMemoryError "$OUT/node-million-$key.log" && echo " OUT OF MEMORY (-Xmx$heap) while it held $held of $RUN_SLOTS slots") (log: $OUT/node-million-$key.log)"
      R[million.${key}_oom]=$(grep -q OutOfMemoryError "$OUT/node-million-$key.log" && echo 1 || echo 0)
      stop_roles; return 1
    fi
    [ "$waited" -lt 300 ] || { say "WARNING: the lone worker holds $held of $RUN_SLOTS slots after 300 s: no heap by role"; stop_roles; return 1; }
    sleep 1; waited=$((waited + 1))
  done
  R[million.${key}_load_s]=$(calc 'a - b' "$(now)" "$t0")
  takeover "$prefix" "$key" "$m"
  # the run's backlog consumed and committed before the heap is read, so the prefetch holds nothing
  waited=0
  while backlog=$(rabbit_bench_backlog "$prefix"); [ "$backlog" != 0 ] && [ "$waited" -lt "$ROLE_DRAIN_S" ]; do
    sleep 2; waited=$((waited + 2))
  done
  [ "$backlog" = 0 ] || say "[million] WARNING: $backlog messages still queued after ${ROLE_DRAIN_S} s (BENCH_ROLE_DRAIN_S): the lone worker's heap includes its prefetch"
  R[million.${key}_backlog]=$backlog
  R[million.${key}_heap]=$(heap_after_gc "$wpid")
  timeout 120 jcmd "$wpid" GC.class_histogram 2>/dev/null | head -n 43 >"$OUT/heap-million-$key.txt" || true
  stop_roles
  { echo "===== million: a lone worker on schema $prefix ====="; cat "$OUT/node-million-$key.log"; } >>"$OUT/node.log"
}

takeover() { # prefix key metrics-file; sets R[million.KEY_takeover_{slots,first,half,last}], R[million.KEY_slot_load_{p50,p99}]
  # when each slot began to consume (ACTIVE in slot_lease_history), counted from the lone worker's first lease; and a
  # slot's own load (worker_snapshot_load_seconds: its devices read from their snapshots), goal 5's second half
  local prefix=$1 key=$2 m=$3 row
  row="$(timeout 60 "${PSQL[@]}" -At -F ' ' -c "
    WITH mine AS (SELECT at, new_state FROM $prefix.slot_lease_history WHERE new_owner = '$prefix-worker'),
    a AS (SELECT extract(epoch FROM at - (SELECT min(at) FROM mine)) AS s FROM mine WHERE new_state = 'ACTIVE')
    SELECT count(*), round(min(s)::numeric, 3), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY s)::numeric, 3),
           round(max(s)::numeric, 3) FROM a" 2>/dev/null | grep -E '^[0-9]+ ' || echo "NA NA NA NA")"
  read -r R[million.${key}_takeover_slots] R[million.${key}_takeover_first] R[million.${key}_takeover_half] R[million.${key}_takeover_last] <<<"$row"
  R[million.${key}_slot_load_p50]=$(calc 'a * 1000' "$(mget "$m" 'worker_snapshot_load_seconds{quantile="0.5"}')")
  R[million.${key}_slot_load_p99]=$(calc 'a * 1000' "$(mget "$m" 'worker_snapshot_load_seconds{quantile="0.99"}')")
}

role_heaps() { # devices interval_ms heap; sets R[million.worker_heap], R[million.worker_devices], R[million.empty_heap], R[million.probe_heap]
  local n=$1 i=$2 heap=$3 ppid end
  R[million.worker_heap]=NA R[million.worker_devices]=NA R[million.empty_heap]=NA R[million.probe_heap]=NA
  say "[million] heaps by role: a scheduler and a worker in JVMs of their own on the run's schema ..."
  lone_worker "$PREFIX" worker "${ROLE_WORKER_HEAP:-$heap}" || return 0
  R[million.worker_devices]="$(timeout 300 "${PSQL[@]}" -At -c "SELECT count(*) FROM $PREFIX.device_status_current" 2>/dev/null | grep -E '^[0-9]+$' || echo NA)"
  say "[million] lone worker: all $RUN_SLOTS slots held $(fmt1 "${R[million.worker_load_s]}") s after start; live heap" \
      "$(fmt1 "$(calc 'a / 1048576' "${R[million.worker_heap]}")") MiB holding ${R[million.worker_devices]} devices"
  say "[million] lone worker's takeover: of ${R[million.worker_takeover_slots]} slots the first consumed $(fmt1 "${R[million.worker_takeover_first]}") s" \
      "after its first lease, half by $(fmt1 "${R[million.worker_takeover_half]}") s, the last by $(fmt1 "${R[million.worker_takeover_last]}") s;" \
      "a slot's own load p50 $(fmt0 "${R[million.worker_slot_load_p50]}") ms, p99 $(fmt0 "${R[million.worker_slot_load_p99]}") ms" \
      "($(fmt0 "$(calc 'a / b' "${R[million.worker_devices]}" "$RUN_SLOTS")") devices a slot)"
  say "[million] the same on an empty schema (${PREFIX}0) for the worker's fixed part ..."
  EMPTY_TEARDOWN_MAYBE=1
  teardown_empty
  EMPTY_TEARDOWN_MAYBE=1
  lone_worker "${PREFIX}0" empty "${ROLE_WORKER_HEAP:-$heap}" || true
  teardown_empty
  say "[million] lone worker on an empty schema: live heap $(fmt1 "$(calc 'a / 1048576' "${R[million.empty_heap]}")") MiB; per device" \
      "$(fmt0 "$(calc '(a - b) / c' "${R[million.worker_heap]}" "${R[million.empty_heap]}" "${R[million.worker_devices]}")") bytes above it," \
      "$(fmt0 "$(calc 'a / b' "${R[million.worker_heap]}" "${R[million.worker_devices]}")") with it"
  say "[million] a probe in a JVM of its own, $n devices every $i ms, ${ROLE_PROBE_S} s ..."
  start_role "$PREFIX" probe $((PORT + 3)) "$OUT/node-million-probe.log" "$heap" --probe.sim.devices="$n" --probe.interval.ms="$i" || { stop_roles; return 0; }
  ppid=$ROLE_PID
  end=$(calc 'a + b' "$(now)" "$ROLE_PROBE_S")
  while awk -v e="$end" -v t="$(now)" 'BEGIN { exit !(t < e) }'; do
    kill -0 "$ppid" 2>/dev/null || { say "WARNING: the lone probe died (log: $OUT/node-million-probe.log)"; stop_roles; return 0; }
    sleep 1
  done
  R[million.probe_heap]=$(heap_after_gc "$ppid")
  timeout 120 jcmd "$ppid" GC.class_histogram 2>/dev/null | head -n 43 >"$OUT/heap-million-probe.txt" || true
  stop_roles
  { echo "===== million: a lone probe ====="; cat "$OUT/node-million-probe.log"; } >>"$OUT/node.log"
  say "[million] lone probe: live heap $(fmt1 "$(calc 'a / 1048576' "${R[million.probe_heap]}")") MiB for $n devices = $(fmt0 "$(calc 'a / b' "${R[million.probe_heap]}" "$n")") bytes/device"
}

e2e_run() { # tag devices interval_ms warm-up_s window_s heap
  local tag=$1 n=$2 i=$3 warmup=$4 window=$5 heap=$6 offered
  RUN_SLOTS=$SLOTS
  [ "$tag" != idle ] || RUN_SLOTS=$IDLE_SLOTS
  offered=$(calc 'a * 1000 / b' "$n" "$i")
  say "end to end [$tag]: $n simulated devices every $i ms = $(fmt0 "$offered") results/s offered; warm-up ${warmup} s, window ${window} s"
  start_node "$tag" "$n" "$i" "$heap"
  await_slots "$tag"
  nap "$warmup"
  await_jit "$tag"
  [ "$tag" != million ] && [ "$tag" != half ] || await_normal "$tag"

  local m0=$OUT/metrics-$tag-0.txt m1=$OUT/metrics-$tag-1.txt prev cur t0 t1 tp tc cpu0 cpu1 thr0 thr1 pgs gc0 gc1 hb0 hb1 wk0 wk1
  hb0=$(hist_bytes)
  t0=$(now); scrape "$m0"; cpu0="$(cpu_snapshot "$NODE_PID")"; thr0="$(thread_snapshot "$NODE_PID")"; pgs=$OUT/pg-$tag.samples; pg_snapshot | sed "s/^/0 /" >"$pgs"; pgio0="$(pg_io_snapshot)"; wk0=$(loop_wakeups "$NODE_PID"); gc0=$(gc_pause_ms "$OUT/gc-$tag.log")
  if [ "$(msum "$m0" worker_committed_total)" = NA ]; then
    if grep -qE 'cannot connect|connection lost' "$NODE_LOG"; then
      grep -E 'cannot connect|connection lost' "$NODE_LOG" | tail -n 3 | cut -c1-250 >&2
      die "after the warm-up the node still cannot reach RabbitMQ or PostgreSQL (is a service down?): no measurement"
    fi
    say "WARNING: /metrics has no worker_committed_total at the start of the window (nothing committed during the warm-up; counted from 0)"
  fi
  prev=$m0 tp=$t0
  local elapsed=0 k=0
  while [ "$elapsed" -lt "$window" ]; do
    local step=$STEP
    [ $((elapsed + step)) -le "$window" ] || step=$((window - elapsed))
    nap "$(calc 'a - (b - c)' "$((elapsed + step))" "$(now)" "$t0")"
    elapsed=$((elapsed + step)); k=$((k + 1))
    cur=$OUT/metrics-$tag-s$k.txt
    tc=$(now); scrape "$cur"; pg_snapshot | sed "s/^/$k /" >>"$pgs"
    local dt
    dt=$(calc 'a - b' "$tc" "$tp")
    # stall: nothing published and nothing committed in this step although rows wait in the outbox
    if [ -z "${R[$tag.stall]:-}" ] && awk -v p0="$(mget "$prev" outbox_published_total)" -v p1="$(mget "$cur" outbox_published_total)" \
         -v c0="$(msum0 "$prev" worker_committed_total)" -v c1="$(msum0 "$cur" worker_committed_total)" -v d="$(mget "$cur" outbox_depth)" \
         'BEGIN { exit !(p0 != "NA" && p1 != "NA" && c0 != "NA" && c1 != "NA" && d != "NA" && p1 == p0 && c1 == c0 && d > 0) }'; then
      R[$tag.stall]="+${elapsed}s:$(mget "$cur" outbox_published_total):$(mget "$cur" outbox_depth)"
    fi
    say "  +${elapsed}s: committed $(fmt0 "$(calc '(a - b) / c' "$(msum0 "$cur" worker_committed_total)" "$(msum0 "$prev" worker_committed_total)" "$dt")")/s," \
        "probe appended $(fmt0 "$(calc '(a - b) / c' "$(mget "$cur" outbox_appended_total)" "$(mget "$prev" outbox_appended_total)" "$dt")")/s," \
        "outbox depth $(fmt0 "$(mget "$cur" outbox_depth)"), lag p50 $(fmt0 "$(calc 'a * 1000' "$(mget "$cur" 'worker_probe_to_commit_lag_seconds{quantile="0.5"}')")") ms" \
        "p99 $(fmt0 "$(calc 'a * 1000' "$(mget "$cur" 'worker_probe_to_commit_lag_seconds{quantile="0.99"}')")") ms"
    prev=$cur tp=$tc
  done
  t1=$tp; cp "$prev" "$m1"
  cpu1="$(cpu_snapshot "$NODE_PID")"; thr1="$(thread_snapshot "$NODE_PID")"; pg_snapshot | sed "s/^/$((k + 1)) /" >>"$pgs"; pgio1="$(pg_io_snapshot)"; wk1=$(loop_wakeups "$NODE_PID"); gc1=$(gc_pause_ms "$OUT/gc-$tag.log")
  hb1=$(hist_bytes)
  local heapinfo
  heapinfo="$(timeout 20 jcmd "$NODE_PID" GC.heap_info 2>/dev/null | grep -o 'total [0-9]*K, used [0-9]*K' | head -n 1 |
          awk '{ gsub(/[K,]/, ""); printf "%.0f of %.0f MiB", $4 / 1024, $2 / 1024 }')" || true
  local backlog
  backlog=$(rabbit_bench_backlog)
  # the live heap after a full GC (idle and million runs: the heap per device); after the window, so the
  # GC pause is not in its figures
  R[$tag.heap_live]=NA
  if [ "$tag" = idle ] || [ "$tag" = million ]; then
    # (a long pause at a million devices: the scheduler may lose its lock session, idle_session_timeout,
    # and step down right after; that is this GC's doing, outside the window)
    say "[$tag] full GC (jcmd GC.run) for the live heap ..."
    local g0
    g0=$(now)
    R[$tag.heap_live]=$(heap_after_gc "$NODE_PID")
    R[$tag.fullgc_s]=$(calc 'a - b' "$(now)" "$g0")
  fi

  local dt c0 c1
  dt=$(calc 'a - b' "$t1" "$t0")
  c0=$(msum0 "$m0" worker_committed_total) c1=$(msum0 "$m1" worker_committed_total)
  R[$tag.offered]=$offered
  R[$tag.devices]=$n
  R[$tag.interval]=$i
  R[$tag.window]=$(fmt1 "$dt")
  R[$tag.rate]=$(calc '(a - b) / c' "$c1" "$c0" "$dt")
  R[$tag.appended]=$(calc '(a - b) / c' "$(mget "$m1" outbox_appended_total)" "$(mget "$m0" outbox_appended_total)" "$dt")
  R[$tag.confirmed]=$(calc '(a - b) / c' "$(mget "$m1" outbox_confirms_total)" "$(mget "$m0" outbox_confirms_total)" "$dt")
  # results per AMQP message the probe published (v3 batches): the broker's cost goes by messages, not results
  R[$tag.per_msg]=$(calc '(c - d > 0) ? (a - b) / (c - d) : 0' "$(mget "$m1" outbox_published_total)" "$(mget "$m0" outbox_published_total)" \
                                          "$(mget "$m1" outbox_messages_total)" "$(mget "$m0" outbox_messages_total)")
  R[$tag.msgs]=$(calc '(a - b) / c' "$(mget "$m1" outbox_messages_total)" "$(mget "$m0" outbox_messages_total)" "$dt")
  R[$tag.batch]=$(calc '(a - b) / (c - d)' "$(mget "$m1" worker_batch_size_sum)" "$(mget "$m0" worker_batch_size_sum)" \
                                          "$(mget "$m1" worker_batch_size_count)" "$(mget "$m0" worker_batch_size_count)")
  R[$tag.p50]=$(calc 'a * 1000' "$(mget "$m1" 'worker_probe_to_commit_lag_seconds{quantile="0.5"}')")
  R[$tag.p99]=$(calc 'a * 1000' "$(mget "$m1" 'worker_probe_to_commit_lag_seconds{quantile="0.99"}')")
  R[$tag.commit_p50]=$(calc 'a * 1000' "$(mget "$m1" 'worker_commit_latency_seconds{quantile="0.5"}')")
  R[$tag.commit_p99]=$(calc 'a * 1000' "$(mget "$m1" 'worker_commit_latency_seconds{quantile="0.99"}')")
  R[$tag.depth0]=$(mget "$m0" outbox_depth)
  # sent twice since the node started: the probe's replays (a nack, a return or a lost connection, and nothing else since
  # 25ce6cf) and the worker's commits written again because history held one of their results
  R[$tag.replayed]=$(mget "$m1" outbox_replayed_total)
  R[$tag.nacks]=$(mget "$m1" outbox_nacks_total)
  R[$tag.returns]=$(mget "$m1" outbox_returns_total)
  R[$tag.rewrites]=$(mget "$m1" worker_history_rewrites_total)
  R[$tag.depth1]=$(mget "$m1" outbox_depth)
  R[$tag.backlog]=$backlog
  R[$tag.heap]=${heapinfo:-NA}
  R[$tag.gc]=$(calc '(a - b) / c / 10' "$gc1" "$gc0" "$dt") # percent of wall time in GC pauses
  read -r "R[$tag.cpu_node]" "R[$tag.cpu_rabbit]" "R[$tag.cpu_pg]" "R[$tag.cpu_other]" "R[$tag.cpu_busy]" "R[$tag.cpu_bench]" < <(cpu_split "$cpu0" "$cpu1" "$dt")
  R[$tag.threads]="$(thread_split "$thr0" "$thr1" "$dt")"
  R[$tag.pg_kinds]="$(pg_split "$pgs" "${R[$tag.cpu_pg]}" "$dt")"
  R[$tag.pg_io]="$(pg_io_split "$pgio0" "$pgio1" "${R[$tag.rate]}" "$dt")"
  # the bench's own sample backends are the bench's cost, not PostgreSQL's for the node (they stay listed in pg_kinds)
  local pgself; pgself=$(pg_sampler_cores "$pgs" "$dt")
  R[$tag.cpu_pg]=$(calc '(a - b > 0) ? a - b : 0' "${R[$tag.cpu_pg]}" "$pgself")
  [ "${R[$tag.cpu_bench]:-NA}" = NA ] || R[$tag.cpu_bench]=$(calc 'a + b' "${R[$tag.cpu_bench]}" "$pgself")
  R[$tag.wakeups]=$(calc 'a / b' "$(calc 'a - b' "$wk1" "$wk0")" "$dt")
  # the JIT compiler's share in cores (0 when it did not run): the part of an idle node's figure that ends with warm-up
  R[$tag.jit]="$(printf '%s\n' "${R[$tag.threads]}" | tr ',' '\n' | awk '$1 == "JIT" { j = $2 / 1000 } END { printf "%.3f", j + 0 }')"
  R[$tag.us_msg]=$(calc '(b > 0) ? a * 1000000 / b : 0' "${R[$tag.cpu_rabbit]}" "${R[$tag.msgs]}")

  say "stopping the node (SIGTERM) ..."
  stop_node
  R[$tag.stop]=$NODE_STOP_S
  R[$tag.rabbit_rest]=NA R[$tag.rabbit_bare]=NA
  if [ "$tag" = idle ] && [ "$IDLE_REST" -gt 0 ]; then
    say "[$tag] RabbitMQ with the node stopped and its queues left ($((RUN_SLOTS * 3)) slot queues and a few more): ${IDLE_REST} s ..."
    R[$tag.rabbit_rest]=$(rabbit_cores "$IDLE_REST")
  fi
  read -r "R[$tag.err]" "R[$tag.warn]" "R[$tag.err_sd]" "R[$tag.warn_sd]" "R[$tag.connloss]" < <(log_scan "$NODE_LOG")
  { echo "===== run $tag: $n devices every $i ms ($(date -u '+%F %T UTC')) ====="; cat "$NODE_LOG"; } >>"$OUT/node.log"
  # from the database, with the node stopped (the queries do not load the measured window)
  say "[$tag] probe->commit lag of the history rows committed in the window (database) ..."
  read -r "R[$tag.db_rows]" "R[$tag.db_p50]" "R[$tag.db_p99]" "R[$tag.db_max]" "R[$tag.crit_rows]" "R[$tag.crit_p50]" "R[$tag.crit_p99]" \
    "R[$tag.crit_max]" < <(db_lag "$t0" "$t1")
  R[$tag.db_rate]=$(calc 'a / b' "${R[$tag.db_rows]}" "$dt")
  R[$tag.hist_gb_day]=$(calc '(a - b) / c * 86400 / 1e9' "$hb1" "$hb0" "$dt")
  R[$tag.hist_bytes_row]=$(calc '(a - b) / c' "$hb1" "$hb0" "${R[$tag.db_rows]}")
  # as if all offered were committed: history's growth scaled by offered / committed, so a history policy that keeps a part of the
  # results (history.policy=changes) keeps the same part of the offered ones (bytes/row x offered counted every result as kept)
  R[$tag.hist_gb_day_offered]=$(calc '(c > 0) ? a * b / c : 0' "${R[$tag.hist_gb_day]}" "$offered" "${R[$tag.rate]}")
  R[$tag.devices_seen]=NA
  if [ "$tag" = million ]; then
    R[$tag.devices_seen]="$(timeout 300 "${PSQL[@]}" -At -c "SELECT count(*) FROM $PREFIX.device_status_current" 2>/dev/null | grep -E '^[0-9]+$' || echo NA)"
    if [ "$ROLE_HEAPS" = 1 ]; then role_heaps "$n" "$i" "$heap"; else R[$tag.worker_heap]=NA R[$tag.probe_heap]=NA; fi
  fi
  R[$tag.skipped]=$(calc 'a - b' "$(msum0 "$m1" probe_checks_skipped_total)" "$(msum0 "$m0" probe_checks_skipped_total)")
  # backpressure (issue 12): checks the probe's effective mode skipped in the window, and the mode at its end
  R[$tag.mode_skipped]=$(calc 'a - b' "$(msum0 "$m1" probe_mode_skipped_total)" "$(msum0 "$m0" probe_mode_skipped_total)")
  R[$tag.mode]=$(probe_mode "$m1")
  teardown_node || true
  NODE_TEARDOWN_MAYBE=0
  if [ "${R[$tag.rabbit_rest]}" != NA ]; then
    say "[$tag] RabbitMQ once the node's queues are deleted: ${IDLE_REST} s ..."
    R[$tag.rabbit_bare]=$(rabbit_cores "$IDLE_REST")
  fi
  rm -rf "$DATA"

  say "[$tag] committed $(fmt0 "${R[$tag.rate]}") results/s (probe appended $(fmt0 "${R[$tag.appended]}")/s, broker confirmed $(fmt0 "${R[$tag.confirmed]}")/s; offered $(fmt0 "$offered")/s) over $(fmt1 "$dt") s;" \
      "avg batch $(fmt1 "${R[$tag.batch]}"); lag p50 $(fmt0 "${R[$tag.p50]}") ms p99 $(fmt0 "${R[$tag.p99]}") ms; commit latency p50 $(fmt0 "${R[$tag.commit_p50]}") ms p99 $(fmt0 "${R[$tag.commit_p99]}") ms"
  say "[$tag] outbox depth $(fmt0 "${R[$tag.depth0]}") -> $(fmt0 "${R[$tag.depth1]}"), messages in the bench queues at the end $(fmt0 "$backlog");" \
      "CPU cores used: node $(fmt2 "${R[$tag.cpu_node]}"), rabbitmq $(fmt2 "${R[$tag.cpu_rabbit]}"), postgres $(fmt2 "${R[$tag.cpu_pg]}"), other $(fmt2 "${R[$tag.cpu_other]}"), bench samplers $(fmt2 "${R[$tag.cpu_bench]:-NA}") of $NPROC;" \
      "heap ${R[$tag.heap]}, GC pauses $(fmt1 "${R[$tag.gc]}")% of the window; shutdown $NODE_STOP_S s"
  say "[$tag] node CPU by thread group, milli-cores (JIT: the compiler, still busy after a short warm-up): ${R[$tag.threads]};" \
      "the event loops woke $(fmt0 "${R[$tag.wakeups]}") times/s"
  say "[$tag] postgres CPU by process kind, milli-cores (a client backend by its application_name; sampled at every step): ${R[$tag.pg_kinds]}"
  say "[$tag] AMQP messages published $(fmt0 "${R[$tag.msgs]}")/s, $(fmt1 "${R[$tag.per_msg]}") results each;" \
      "rabbitmq $(fmt0 "${R[$tag.us_msg]}") µs per message published (and consumed)"
  say "[$tag] database: $(fmt0 "${R[$tag.db_rows]}") history rows received in the window ($(fmt0 "${R[$tag.db_rate]}")/s), lag p50 $(fmt0 "${R[$tag.db_p50]}") ms" \
      "p99 $(fmt0 "${R[$tag.db_p99]}") ms max $(fmt0 "${R[$tag.db_max]}") ms; history grew $(fmt0 "$(calc '(a - b) / 1048576' "$hb1" "$hb0")") MiB" \
      "($(fmt0 "${R[$tag.hist_bytes_row]}") bytes/row, $(fmt2 "${R[$tag.hist_gb_day]}") GB/day at this rate, $(fmt2 "${R[$tag.hist_gb_day_offered]}") GB/day at the offered rate)"
  if [ "${R[$tag.heap_live]}" != NA ]; then
    say "[$tag] live heap after a full GC (jcmd took $(fmt1 "${R[$tag.fullgc_s]}") s): $(fmt1 "$(calc 'a / 1048576' "${R[$tag.heap_live]}")") MiB$([ "$tag" = million ] && echo " = $(fmt0 "$(calc 'a / b' "${R[$tag.heap_live]}" "$n")") bytes/device (probe and worker in one JVM)")"
  fi
  [ "${R[$tag.rabbit_rest]}" = NA ] || say "[$tag] RabbitMQ with the node stopped: $(fmt2 "${R[$tag.rabbit_rest]}") cores with its queues, $(fmt2 "${R[$tag.rabbit_bare]}") without them"
  [ "${R[$tag.devices_seen]}" = NA ] || say "[$tag] devices with a committed result at the end: ${R[$tag.devices_seen]} of $n"
  say "[$tag] probe mode at the end of the window: ${R[$tag.mode]}; checks skipped by backpressure in the window: $(fmt0 "${R[$tag.mode_skipped]}")$(
    [ "${R[$tag.mode]}" != NORMAL ] && [ "${R[$tag.mode]}" != NA ] && echo " — the probe throttled itself: the offered rate was not all inspected")"
  say "[$tag] node log: ${R[$tag.err]} ERROR/exception and ${R[$tag.warn]} WARN lines before shutdown, ${R[$tag.err_sd]} / ${R[$tag.warn_sd]} during shutdown ($NODE_LOG)"
  if [ "${R[$tag.connloss]}" != 0 ]; then
    say "[$tag] WARNING: the node lost or could not open connections during the run (${R[$tag.connloss]} log lines): was RabbitMQ or PostgreSQL restarted by someone else? This run's figures are not valid"
  fi
  if [ "${R[$tag.err]}" != 0 ] || [ "${R[$tag.warn]}" != 0 ]; then
    # slot numbers folded, so 256 slots failing alike are one line; || true: head closing the pipe early
    # is no failure (pipefail)
    grep -E ' (ERROR|WARN) |Exception|OutOfMemory' "$NODE_LOG" | sed -E 's/^[0-9TZ:.-]+ //; s/slot [0-9]+/slot N/g' | sort | uniq -c | sort -rn |
      head -n 8 | cut -c1-300 || true
  fi
}

# ------------------------------------------------------------------------------------------ run

: >"$OUT/node.log"
rm -f "$OUT"/metrics-*.txt "$OUT/summary.txt"
if [ "$RUN_BASELINES" = 1 ]; then
  broker_baseline
  database_baseline
elif [ "$SKIP_BASELINES" = 1 ]; then
  say "baselines skipped (--skip-baselines)"
else
  say "baselines not run (add --with-baselines): the baselines' µs per message/row and the ratio to the broker need them in the same run"
fi

HALF_N=NA
if [ "$RUN_CAPACITY" = 1 ]; then
  say "3/3 end to end, capacity run"
  e2e_run capacity "$CAP_N" "$CAP_I" "$WARMUP" "$WINDOW" "$HEAP"
  SUSTAINED=${R[capacity.rate]}
  if [ "$ONLY_CAPACITY" = 1 ]; then
    say "no half-rate run (--capacity)"
  elif [ "$SUSTAINED" != NA ] && awk -v r="$SUSTAINED" 'BEGIN { exit !(r >= 1) }'; then
    HALF_N=$(awk -v r="$SUSTAINED" -v i="$HALF_I" 'BEGIN { n = int(r / 2 * i / 1000 + 0.5); print (n < 1 ? 1 : n) }')
    say "3/3 end to end, half of the sustained $(fmt0 "$SUSTAINED")/s: $HALF_N devices every $HALF_I ms"
    e2e_run half "$HALF_N" "$HALF_I" "$WARMUP" "$WINDOW" "$HEAP"
  else
    say "WARNING: the capacity run committed nothing measurable: no half-rate run"
  fi
fi
if [ "$RUN_IDLE" = 1 ]; then
  say "end to end, idle: $IDLE_N devices every $IDLE_I ms"
  e2e_run idle "$IDLE_N" "$IDLE_I" "$IDLE_WARMUP" "$IDLE_WINDOW" "$HEAP"
fi
if [ "$RUN_MILLION" = 1 ]; then
  say "end to end, a million devices: $MIL_N devices every $MIL_I ms, -Xmx$MIL_HEAP"
  if [ "$MIL_WARMUP" -lt $(( (MIL_I + 999) / 1000 )) ]; then
    say "WARNING: the warm-up ($MIL_WARMUP s) is shorter than one interval ($MIL_I ms): not every device has had its first check when the window opens"
  fi
  e2e_run million "$MIL_N" "$MIL_I" "$MIL_WARMUP" "$MIL_WINDOW" "$MIL_HEAP"
fi

# ------------------------------------------------------------------------------------------ summary

yesno() { [ "$1" = NA ] && echo "NA" || awk -v x="$1" 'BEGIN { print (x >= 0.5 ? "yes" : "no") }'; }
v() { local x="${R[$1]:-NA}"; echo "$x"; }
us() { calc 'a * 1000000 / b' "$1" "$2"; } # cores, per second -> µs of CPU each
invalid() { [ "${R[$1.connloss]:-0}" = 0 ] || echo " [INVALID: connections lost, see notes]"; }
ran() { [ -n "${R[$1.rate]:-}" ]; }
RATIO_BROKER=$(calc 'a / b' "$(v capacity.rate)" "$PERF_SENT")
RATIO_DB=$(calc 'a / b' "$(v capacity.rate)" "$PG_ROWS")
# the baselines' own CPU cost: RabbitMQ per message PerfTest published, PostgreSQL per row pgbench wrote
BROKER_US=$(us "${PERF_CPU_RABBIT:-NA}" "$PERF_SENT")
DB_US=$(us "${PG_CPU_PG:-NA}" "$PG_ROWS")
for tag in capacity half idle million; do
  ran "$tag" || continue
  R[$tag.us_node]=$(us "${R[$tag.cpu_node]}" "${R[$tag.rate]}")
  R[$tag.us_rabbit]=$(us "${R[$tag.cpu_rabbit]}" "${R[$tag.rate]}")
  R[$tag.us_pg]=$(us "${R[$tag.cpu_pg]}" "${R[$tag.rate]}")
  R[$tag.us_total]=$(calc 'a + b + c' "${R[$tag.us_node]}" "${R[$tag.us_rabbit]}" "${R[$tag.us_pg]}")
  R[$tag.cores3]=$(calc 'a + b + c' "${R[$tag.cpu_node]}" "${R[$tag.cpu_rabbit]}" "${R[$tag.cpu_pg]}")
done
us_line() { # tag -> "node X + rabbitmq Y + postgres Z = T µs/result"
  echo "node $(fmt0 "$(v "$1.us_node")") + rabbitmq $(fmt0 "$(v "$1.us_rabbit")") + postgres $(fmt0 "$(v "$1.us_pg")") = $(fmt0 "$(v "$1.us_total")") µs/result"
}
if [ "$RUN_BASELINES" = 0 ]; then
  why="skipped (--skip-baselines)"
  [ "$SKIP_BASELINES" = 1 ] || why="not run (--with-baselines runs them)"
  BROKER_LINE=$why DB_LINE=$why
else
  BROKER_LINE="$(fmt0 "$PERF_SENT") msg/s published, $(fmt0 "$PERF_RECV") msg/s consumed; rabbitmq $(fmt2 "${PERF_CPU_RABBIT:-NA}") cores = $(fmt1 "$BROKER_US") µs/msg"
  DB_LINE="$(fmt0 "$PG_ROWS") rows/s; postgres $(fmt2 "${PG_CPU_PG:-NA}") cores = $(fmt1 "$DB_US") µs/row"
fi
if [ "$RUN_CAPACITY" = 0 ]; then
  CAP_LINE="not run (--idle / --million only)"
  HALF_LINE="$(printf '%-59s' "end to end, half rate:")not run"
else
  CAP_LINE="$(fmt0 "$(v capacity.rate)") results/s committed, avg batch $(fmt1 "$(v capacity.batch)"), lag p50 $(fmt0 "$(v capacity.p50)") ms p99 $(fmt0 "$(v capacity.p99)") ms, outbox depth $(fmt0 "$(v capacity.depth1)") (was $(fmt0 "$(v capacity.depth0)") at window start)$(invalid capacity)"
  if [ "$HALF_N" = NA ]; then
    why="capacity run committed nothing"
    [ "$ONLY_CAPACITY" = 1 ] && why="--capacity runs the capacity run alone"
    HALF_LINE="$(printf '%-59s' "end to end, half rate:")not run ($why)"
  else
    HALF_LINE="$(printf '%-59s' "end to end, half rate (offered $(fmt0 "$(v half.offered)")/s):")$(fmt0 "$(v half.rate)") results/s, lag p50 $(fmt0 "$(v half.p50)") ms p99 $(fmt0 "$(v half.p99)") ms; from the database p50 $(fmt0 "$(v half.db_p50)") ms p99 $(fmt0 "$(v half.db_p99)") ms"
  fi
fi
if ran idle; then
  IDLE_LINE="node $(fmt2 "$(v idle.cpu_node)") ($(fmt2 "$(calc 'a - b' "$(v idle.cpu_node)" "$(v idle.jit)")") outside the JIT compiler) + rabbitmq $(fmt2 "$(v idle.cpu_rabbit)") + postgres $(fmt2 "$(v idle.cpu_pg)") = $(fmt2 "$(v idle.cores3)") cores$(invalid idle)"
else
  IDLE_LINE="not run"
fi
MIL_SHORT="" # a million-device run in another configuration than the goal's
MIL_HEAP_DEV=NA MIL_HEAP_MARGINAL=NA MIL_SHARE=NA MIL_WORKER_DEV=NA MIL_WORKER_MARG=NA MIL_PROBE_DEV=NA
if ran million; then
  [ "$(v million.devices)" = "$MILLION_GOAL_N" ] && [ "$(v million.interval)" = "$MILLION_GOAL_I" ] ||
    MIL_SHORT=" [shortened: $(v million.devices) devices every $(v million.interval) ms, not the goal's $MILLION_GOAL_N every $MILLION_GOAL_I ms]"
  MIL_SHARE=$(calc 'a / b' "$(v million.rate)" "$(v million.offered)")
  MIL_HEAP_DEV=$(calc 'a / b' "$(v million.heap_live)" "$(v million.devices)")
  # above the idle node's live heap: the part that grows with the devices
  MIL_HEAP_MARGINAL=$(calc '(a - b) / (c - d)' "$(v million.heap_live)" "$(v idle.heap_live)" "$(v million.devices)" "$(v idle.devices)")
  MIL_LINE="$(fmt0 "$(v million.rate)") results/s committed ($(fmt1 "$(calc 'a * 100' "$MIL_SHARE")") % of offered), lag p50 $(fmt0 "$(v million.db_p50)") ms p99 $(fmt0 "$(v million.db_p99)") ms (database)$(invalid million)$MIL_SHORT"
  MIL_LINE2="heap $(fmt0 "$MIL_HEAP_DEV") bytes/device (probe + worker, one JVM$([ "$MIL_HEAP_MARGINAL" = NA ] || echo "; $(fmt0 "$MIL_HEAP_MARGINAL") above the idle node")),"
  # each role alone after the run (role_heaps): the whole live heap of its JVM over its devices
  MIL_WORKER_DEV=$(calc 'a / b' "$(v million.worker_heap)" "$(v million.worker_devices)")
  # above the lone worker's heap on an empty schema (the same slots, no device): what the devices themselves hold
  MIL_WORKER_MARG=$(calc '(a - b) / c' "$(v million.worker_heap)" "$(v million.empty_heap)" "$(v million.worker_devices)")
  MIL_PROBE_DEV=$(calc 'a / b' "$(v million.probe_heap)" "$(v million.devices)")
  MIL_LINE2+=" history $(fmt1 "$(v million.hist_gb_day)") GB/day ($(fmt1 "$(v million.hist_gb_day_offered)") if all offered were committed)"
  MIL_LINE4="worker $(fmt0 "$MIL_WORKER_MARG") bytes/device above its empty-schema heap ($(fmt0 "$MIL_WORKER_DEV") with it, $(v million.worker_devices) devices),"
  MIL_LINE4+=" probe $(fmt0 "$MIL_PROBE_DEV") bytes/device (whole heap); each in a JVM of its own after the run"
  MIL_LINE3="$(us_line million)"
else
  MIL_LINE="not run (--million; about 4 minutes)"
fi

# goal lines of issue 11: yes / no / NA (a run not done), each with the figure it was judged on
G1A=$(calc '(a >= 0.9 * b) ? 1 : 0' "$(v million.rate)" "$(v million.offered)")
G1B=$(calc '(a < 2000) ? 1 : 0' "$(v million.db_p99)")
G2=$(calc '(a <= 100) ? 1 : 0' "$(v capacity.us_total)")
G3=$(calc '(a >= 1.0) ? 1 : 0' "$RATIO_BROKER")
G4=$(calc '(a <= 0.1) ? 1 : 0' "$(v idle.cores3)")
HALF_P99=$(v half.db_p99) HALF_P99_SRC="database"
[ "$HALF_P99" != NA ] || { HALF_P99=$(v half.p99); HALF_P99_SRC="metrics"; }
G6=$(calc '(a < 1000) ? 1 : 0' "$HALF_P99")
# worker derived state: probe and worker share the JVM, so the whole heap per device is an upper bound of it
if [ "${R[million.worker_oom]:-0}" = 1 ]; then
  G5="no (the lone worker ran out of memory taking every slot over, -Xmx${ROLE_WORKER_HEAP:-$MIL_HEAP})"
elif [ "$MIL_WORKER_MARG" != NA ]; then
  # the lone worker's live heap holding the devices, less its heap on an empty schema, over the devices
  G5="$(yesno "$(calc '(a <= 600) ? 1 : 0' "$MIL_WORKER_MARG")") (lone worker $(fmt0 "$MIL_WORKER_MARG") bytes/device above its empty-schema heap, $(v million.worker_devices) devices)"
elif [ "$MIL_WORKER_DEV" != NA ]; then
  # no empty-schema figure: the whole live heap over the devices, an upper bound
  G5="$(yesno "$(calc '(a <= 600) ? 1 : 0' "$MIL_WORKER_DEV")") (lone worker $(fmt0 "$MIL_WORKER_DEV") bytes/device, the whole live heap over $(v million.worker_devices) devices: an upper bound)"
elif [ "$MIL_HEAP_DEV" = NA ]; then
  G5="NA"
elif awk -v x="$MIL_HEAP_DEV" 'BEGIN { exit !(x <= 600) }'; then
  G5="yes (probe + worker together $(fmt0 "$MIL_HEAP_DEV") bytes/device, an upper bound)"
else
  G5="unknown (probe + worker together $(fmt0 "$MIL_HEAP_DEV") bytes/device; the worker's part is not separable in one JVM)"
fi
gl() { # verdict (1 / 0 / NA), the figure it was judged on, why it is NA
  if [ "$1" = NA ]; then echo "NA ($3)"; else echo "$(yesno "$1") ($2)"; fi
}
if ran million; then NO_MIL="the million run measured nothing"; else NO_MIL="no million-device run: --million"; fi
if ran capacity; then NO_CAP="not measurable in the capacity run"; else NO_CAP="no capacity run"; fi
[ "$RUN_BASELINES" = 1 ] || NO_RATIO="no broker baseline in this run"
[ "$RUN_BASELINES" = 0 ] || NO_RATIO=$NO_CAP
if ran idle; then NO_IDLE="the idle run measured nothing"; else NO_IDLE="no idle run: --idle"; fi
if ran half; then NO_HALF="the half-rate run measured nothing"; else NO_HALF="no half-rate run"; fi
[ "$MIL_HEAP_DEV" != NA ] || G5="NA ($NO_MIL)"
# a slot's own load in the lone worker's takeover of every slot (its slots hold devices / slots devices each)
G5B="NA (not measured here: ./run.sh bench --million measures it in its heap-by-role phase; --commit's snapshot line)"
if [ "$(v million.worker_slot_load_p99)" != NA ]; then
  G5B="$(yesno "$(calc '(a <= 200) ? 1 : 0' "$(v million.worker_slot_load_p99)")") (p99 $(fmt0 "$(v million.worker_slot_load_p99)") ms,"
  G5B+=" $(fmt0 "$(calc 'a / b' "$(v million.worker_devices)" "$RUN_SLOTS")") devices a slot, a lone worker taking all $RUN_SLOTS slots over)"
fi
# a run at another slot count than the node's default says so in the goal lines it judges
AT_SLOTS=""
[ "$SLOTS" = "$NODE_SLOTS" ] || AT_SLOTS=" at $SLOTS slots (BENCH_SLOTS; the node's default is $NODE_SLOTS)"
MIL_MODE=""
case "$(v million.mode)" in NORMAL | NA) ;; *) MIL_MODE=", the probe throttled by mode $(v million.mode) at the window's end" ;; esac
GOALS=(
  "1. a million devices: >= 90 % of the offered $(fmt0 "$(calc 'a * 1000 / b' "$MILLION_GOAL_N" "$MILLION_GOAL_I")")/s committed: $(gl "$G1A" "$(fmt1 "$(calc 'a * 100' "$MIL_SHARE")") % of $(fmt0 "$(v million.offered)")/s$MIL_MODE$AT_SLOTS" "$NO_MIL");
     p99 probe->commit lag < 2 s (database): $(gl "$G1B" "$(fmt0 "$(v million.db_p99)") ms, PostgreSQL shared_buffers $PG_BUFFERS" "$NO_MIL")$MIL_SHORT"
  "2. CPU per result at capacity, node + broker + database <= 100 µs/result: $(gl "$G2" "$(fmt0 "$(v capacity.us_total)") µs$AT_SLOTS" "$NO_CAP")"
  "3. end-to-end / broker alone >= 1.0: $(gl "$G3" "$(fmt3 "$RATIO_BROKER")" "$NO_RATIO")"
  "4. idle, $IDLE_N devices, node + broker + database <= 0.1 cores: $(gl "$G4" "$(fmt2 "$(v idle.cores3)") cores at $IDLE_SLOTS slots" "$NO_IDLE")"
  "5. memory at a million devices: worker derived state <= 600 bytes/device: $G5;
     a 4,000-device slot loads in <= 200 ms: $G5B"
  "6. half-rate p99 lag < 1 s: $(gl "$G6" "$(fmt0 "$HALF_P99") ms, $HALF_P99_SRC" "$NO_HALF"); PostgreSQL synchronous_commit: $PG_SYNC"
)

notes=()
[ "$QUICK" = 1 ] && notes+=("--quick smoke run: ${WINDOW} s windows, smaller fleets; not figures for the README")
notes+=("git $COMMIT$DIRTY, target/node.jar built $JAR_TIME; $SLOTS slots = $((2 * SLOTS)) quorum queues$( [ "$IDLE_SLOTS" = "$SLOTS" ] || echo " ($IDLE_SLOTS slots = $((2 * IDLE_SLOTS)) in the idle run, BENCH_IDLE_SLOTS)")${BENCH_NODE_FLAGS:+; node flags $BENCH_NODE_FLAGS}")
[ "$AGED_DAYS" = 0 ] || notes+=("BENCH_AGED_DAYS=$AGED_DAYS: before each run the node's schema got the past days' partitions its retention keeps: ${AGED_PARTS:-NA} partitions of history, alert events and rollups (a fresh schema: yesterday to 3 days ahead)")
[ "$AGED_HISTORY_MIN" = 0 ] || notes+=("BENCH_AGED_HISTORY_MIN=$AGED_HISTORY_MIN: before each run history was filled with the run's devices' results of the $AGED_HISTORY_MIN minutes before it$([ -z "$AGED_HISTORY_STEP" ] || echo ", one row a device every $AGED_HISTORY_STEP ms") (last run's tables: ${AGED_HISTORY_SIZES:-NA}); a fresh schema's history is empty")
notes+=("PostgreSQL shared_buffers $PG_BUFFERS (the server's setting, not the node's; pages beyond it are read from and written to the OS cache by the sessions themselves)")
ran capacity && notes+=("capacity and half: -Xmx$HEAP, warm-up ${WARMUP} s, window ${WINDOW} s")
jitw=""; for tag in capacity half idle million; do ran "$tag" && jitw+="${jitw:+, }$tag ${R[$tag.jit_wait]:-0} s"; done
notes+=("after each warm-up, waited for the JIT compiler to settle (<= $(fmt0 "$(calc 'a * 100' "$JIT_SETTLE_SHARE")") % of the node's CPU or $JIT_SETTLE_MC milli-cores, at most $JIT_SETTLE_MAX s; BENCH_JIT_SETTLE_MAX_S=0 skips it): $jitw")
modew=""; for tag in half million; do ran "$tag" && modew+="${modew:+, }$tag ${R[$tag.mode_wait]:-0} s$([ "${R[$tag.mode_before]:-NORMAL}" = NORMAL ] || echo " (from ${R[$tag.mode_before]})")"; done
[ -z "$modew" ] || notes+=("then waited until the probe inspected in NORMAL mode (the fleet's backpressure off; at most $MODE_SETTLE_MAX s, BENCH_MODE_SETTLE_MAX_S=0 skips it): $modew")
ran idle && notes+=("idle: -Xmx$HEAP, warm-up ${IDLE_WARMUP} s, window ${IDLE_WINDOW} s; RabbitMQ and PostgreSQL CPU is the whole server's (other users of the shared services count too)")
ran million && notes+=("million: -Xmx$MIL_HEAP, warm-up ${MIL_WARMUP} s, window ${MIL_WINDOW} s; $(v million.devices_seen) of $(v million.devices) devices had a committed result at the end; $(fmt0 "$(v million.db_rows)") history rows received in the window ($(fmt0 "$(v million.db_rate)")/s, $(fmt0 "$(v million.hist_bytes_row)") bytes/row on disk); live heap after a full GC $(fmt0 "$(calc 'a / 1048576' "$(v million.heap_live)")") MiB (jcmd GC.run took $(fmt1 "$(v million.fullgc_s)") s, after the window; a scheduler step-down right after it in the node log is its pause); probe skipped $(fmt0 "$(v million.skipped)") check rounds (buffer full)")
if ran million && awk -v s="$(v million.devices_seen)" -v n="$(v million.devices)" 'BEGIN { exit !(s != "NA" && s < n) }'; then
  notes+=("million: only $(v million.devices_seen) of $(v million.devices) devices had a committed result by the end of the window: the probe or the pipeline fell more than the warm-up behind (or the warm-up is shorter than one interval)")
fi
if ran million && [ "$(v million.worker_heap)" != NA ]; then
  notes+=("million, heap by role (BENCH_ROLE_HEAPS=0 skips it): after the run a scheduler and a worker each in a JVM of its own on the run's schema; the worker held all $RUN_SLOTS slots $(fmt1 "$(v million.worker_load_s)") s after its start (each slot's devices loaded from their snapshots) and emptied the run's queues ($(v million.worker_backlog) messages left): live heap $(fmt0 "$(calc 'a / 1048576' "$(v million.worker_heap)")") MiB; its takeover: the first of $(v million.worker_takeover_slots) slots consumed $(fmt1 "$(v million.worker_takeover_first)") s after its first lease, half by $(fmt1 "$(v million.worker_takeover_half)") s, the last by $(fmt1 "$(v million.worker_takeover_last)") s (slot_lease_history), a slot's own load p50 $(fmt0 "$(v million.worker_slot_load_p50)") ms, p99 $(fmt0 "$(v million.worker_slot_load_p99)") ms (worker_snapshot_load_seconds); the same on an empty schema ${PREFIX}0: $(fmt0 "$(calc 'a / 1048576' "$(v million.empty_heap)")") MiB; a probe alone with the run's $(v million.devices) devices, ${ROLE_PROBE_S} s after its start: $(fmt0 "$(calc 'a / 1048576' "$(v million.probe_heap)")") MiB; class histograms $OUT/heap-million-{worker,empty,probe}.txt, logs $OUT/node-million-*.log")
fi
if ran million && [ "${R[million.worker_oom]:-0}" = 1 ]; then
  notes+=("million, heap by role: the lone worker ran OUT OF MEMORY (-Xmx${ROLE_WORKER_HEAP:-$MIL_HEAP}) while it took the run's slots over (log $OUT/node-million-worker.log)")
fi
if ran million && [ "$RUN_BASELINES" = 0 ]; then
  notes+=("million: no baselines in this run, so no ratio to the broker or database (--million --with-baselines)")
fi
notes+=("lag from the database: received_at - collected_at of the history rows whose received_at falls in the window; received_at is the column default now(), the start of the worker's commit transaction, so it leaves out the commit itself")
[ "$RUN_BASELINES" = 1 ] && notes+=("PerfTest averages include its ramp-up; after the first 5 s: $PERF_SENT_STEADY msg/s published, $PERF_RECV_STEADY consumed. pgbench: $(fmt1 "$PG_TPS") batches/s, latency avg $PG_LAT ms, $PG_FAILED failed")
for tag in capacity half idle million; do
  [ -n "${R[$tag.rate]:-}" ] || continue
  notes+=("$tag: ${R[$tag.devices]} devices every ${R[$tag.interval]} ms; probe appended $(fmt0 "${R[$tag.appended]}")/s, broker confirmed $(fmt0 "${R[$tag.confirmed]}")/s, committed $(fmt0 "${R[$tag.rate]}")/s; outbox depth $(fmt0 "${R[$tag.depth0]}") -> $(fmt0 "${R[$tag.depth1]}") over $(fmt1 "${R[$tag.window]}") s; $(fmt0 "${R[$tag.backlog]}") messages queued at the end; commit latency p50 $(fmt0 "${R[$tag.commit_p50]}") ms p99 $(fmt0 "${R[$tag.commit_p99]}") ms")
  notes+=("$tag: CPU cores used (of $NPROC): node $(fmt2 "${R[$tag.cpu_node]}"), rabbitmq $(fmt2 "${R[$tag.cpu_rabbit]}"), postgres $(fmt2 "${R[$tag.cpu_pg]}"), other processes $(fmt2 "${R[$tag.cpu_other]}"), the bench's own samplers $(fmt2 "${R[$tag.cpu_bench]:-NA}"), idle $(fmt2 "$(calc "($NPROC - a > 0) ? $NPROC - a : 0" "${R[$tag.cpu_busy]}")"); $([ "$tag" = idle ] || echo "$(us_line "$tag"); ")heap ${R[$tag.heap]}; GC pauses $(fmt1 "${R[$tag.gc]}")%; node log ${R[$tag.err]} ERROR / ${R[$tag.warn]} WARN lines before shutdown")
  notes+=("$tag: node CPU by thread group, milli-cores: ${R[$tag.threads]:-NA}; event-loop wake-ups $(fmt0 "${R[$tag.wakeups]:-NA}")/s; postgres CPU by process kind, milli-cores: ${R[$tag.pg_kinds]:-NA}")
  notes+=("$tag: PostgreSQL in the window: ${R[$tag.pg_io]:-NA}")
  notes+=("$tag: the probe published $(fmt0 "${R[$tag.msgs]}") AMQP messages/s carrying $(fmt1 "${R[$tag.per_msg]}") results each; rabbitmq $(fmt0 "${R[$tag.us_msg]}") µs per message (each published, delivered and acked once)")
  notes+=("$tag: sent twice since the node started: $(fmt0 "${R[$tag.replayed]}") rows replayed by the probe (after $(fmt0 "${R[$tag.nacks]}") nacked and $(fmt0 "${R[$tag.returns]}") returned), $(fmt0 "${R[$tag.rewrites]}") worker commits written again because history held one of their results or a rollup row taken for new existed")
  [ "${R[$tag.rabbit_rest]:-NA}" = NA ] || notes+=("$tag: RabbitMQ with the node stopped: $(fmt2 "${R[$tag.rabbit_rest]}") cores while its queues stayed ($((IDLE_SLOTS * 2)) quorum and $IDLE_SLOTS classic slot queues and a few more), $(fmt2 "${R[$tag.rabbit_bare]}") once they were deleted (${IDLE_REST} s each); of the window's $(fmt2 "${R[$tag.cpu_rabbit]}"), about $(fmt2 "$(calc 'a - b' "${R[$tag.rabbit_rest]}" "${R[$tag.rabbit_bare]}")") is the queues with no client (quorum queue ticks and management statistics, every 5 s) and $(fmt2 "$(calc 'a - b' "${R[$tag.cpu_rabbit]}" "${R[$tag.rabbit_rest]}")") the node's connections, consumers and traffic")
  [ "${R[$tag.crit_rows]:-NA}" = NA ] || notes+=("$tag: critical results (history retention class 1, the devices of priority 1): $(fmt0 "${R[$tag.crit_rows]}") rows in the window, lag from the database p50 $(fmt0 "${R[$tag.crit_p50]}") ms p99 $(fmt0 "${R[$tag.crit_p99]}") ms max $(fmt0 "${R[$tag.crit_max]}") ms (all results: p99 $(fmt0 "${R[$tag.db_p99]}") ms)")
  if awk -v a="${R[$tag.appended]}" -v o="${R[$tag.offered]}" 'BEGIN { exit !(a != "NA" && a < 0.95 * o) }'; then
    notes+=("$tag: the probe generated only $(fmt0 "${R[$tag.appended]}") of the $(fmt0 "${R[$tag.offered]}") results/s offered (it shares the CPU with worker, broker and database)")
  fi
  if [ "${R[$tag.rate]}" = NA ] || awk -v r="${R[$tag.rate]}" -v o="${R[$tag.offered]}" 'BEGIN { exit !(r < 0.01 * o || (o >= 100 && r < 10)) }'; then
    notes+=("$tag: NODE PROBLEM? committed rate $(fmt0 "${R[$tag.rate]}")/s is near zero (or /metrics lacked worker_committed_total): see $OUT/node.log")
  fi
  [ "${R[$tag.err]}" = 0 ] || notes+=("$tag: NODE PROBLEM? ${R[$tag.err]} ERROR/OutOfMemoryError lines in the node log before shutdown: see $OUT/node-$tag.log")
  if [ -n "${R[$tag.stall]:-}" ]; then
    IFS=: read -r st_at st_pub st_depth <<<"${R[$tag.stall]}"
    notes+=("$tag: NODE PROBLEM: publishing stalled: in the ${STEP} s before $st_at of the window outbox_published_total stayed at $(fmt0 "$st_pub") and nothing was committed while $(fmt0 "$st_depth") rows waited in the outbox (the node logged nothing about it; see $OUT/metrics-$tag-s*.txt)")
  fi
  [ "${R[$tag.connloss]}" = 0 ] || notes+=("$tag: INVALID RUN: the node lost or could not open RabbitMQ/PostgreSQL connections ${R[$tag.connloss]} times (a service restarted by another process?): see $OUT/node-$tag.log")
done
# where the capacity run stopped: probe -> outbox -> broker (confirms) -> queues -> worker -> database
if [ -n "${R[capacity.rate]:-}" ]; then
  bottleneck="$(awk -v o="${R[capacity.offered]}" -v a="${R[capacity.appended]}" -v c="${R[capacity.confirmed]}" -v k="${R[capacity.rate]}" \
                    -v q="${R[capacity.backlog]}" -v d0="${R[capacity.depth0]}" -v d1="${R[capacity.depth1]}" -v w="${R[capacity.window]}" \
                    -v busy="${R[capacity.cpu_busy]:-NA}" -v n="$NPROC" '
    BEGIN {
      if (a == "NA" || c == "NA" || k == "NA") exit
      grow = (d0 != "NA" && d1 != "NA") ? (d1 - d0) / w : 0
      # every part shares the cores: with none left over, the capacity is the CPU per result, wherever the queue builds
      if (busy != "NA" && busy > n - 0.1) printf "the %d cores (%.2f idle): node, broker and database share them, so the CPU per result sets the capacity (see the µs/result line); where work waited: ", n, (n - busy > 0 ? n - busy : 0)
      if (c < 0.95 * a && grow > 0.05 * a && (q == "NA" || q < 5 * c + 1000))
        printf "outbox -> broker publishing: the broker confirmed %.0f/s of the %.0f/s the probe appended, the outbox grew by %.0f rows/s, yet the slot queues held only %s messages at the end, so the worker kept up with what reached the broker", c, a, grow, q
      else if (q != "NA" && q >= 5 * c + 1000)
        printf "worker/database: %s messages waiting in the slot queues at the end while %.0f/s were committed", q, k
      else if (a < 0.95 * o)
        printf "probe: it generated %.0f of the %.0f results/s offered and the rest of the pipeline kept up", a, o
      else if (busy != "NA" && busy > n - 0.1)
        printf "nowhere in particular"
    }')"
  [ -z "$bottleneck" ] || notes+=("capacity: bottleneck: $bottleneck")
fi
for part in "broker baseline:$PERF_CPU_OTHER" "database baseline:$PG_CPU_OTHER" "capacity run:${R[capacity.cpu_other]:-NA}" "half-rate run:${R[half.cpu_other]:-NA}" \
            "idle run:${R[idle.cpu_other]:-NA}" "million-device run:${R[million.cpu_other]:-NA}"; do
  if awk -v x="${part##*:}" 'BEGIN { exit !(x != "NA" && x > 0.15) }'; then
    notes+=("SKEWED: other processes used $(fmt2 "${part##*:}") of the $NPROC cores during the ${part%%:*}: rerun on a quiet machine")
  fi
done
if [ -n "${R[capacity.rate]:-}" ] && awk -v d0="${R[capacity.depth0]}" -v d1="${R[capacity.depth1]}" 'BEGIN { exit !(d1 != "NA" && d0 != "NA" && d1 <= d0) }' &&
   awk -v a="${R[capacity.appended]}" -v o="${R[capacity.offered]}" 'BEGIN { exit !(a != "NA" && a >= 0.95 * o) }'; then
  notes+=("capacity run did not saturate the platform (outbox depth did not grow and the probe kept up): raise BENCH_CAP_DEVICES")
fi

{
  echo "== inspection-node benchmark ($STARTED_AT, $NPROC cores) =="
  printf '%-59s%s\n' "broker baseline (PerfTest, 64 quorum queues, confirms):" "$BROKER_LINE"
  printf '%-59s%s\n' "database baseline (pgbench, 200-row upsert+history):" "$DB_LINE"
  if ran capacity; then
    printf '%-59s%s\n' "end to end, capacity run (offered $(fmt0 "$(v capacity.offered)")/s):" "$CAP_LINE"
  else
    printf '%-59s%s\n' "end to end, capacity run:" "$CAP_LINE"
  fi
  if ran capacity; then
    printf '%-59s%s\n' "  CPU per committed result at capacity:" \
      "$(us_line capacity) (broker alone $(fmt1 "$BROKER_US") µs/msg, database alone $(fmt1 "$DB_US") µs/row)"
  fi
  echo "$HALF_LINE$(invalid half)"
  if ran idle; then
    printf '%-59s%s\n' "end to end, idle ($IDLE_N devices every $IDLE_I ms$( [ "$IDLE_SLOTS" = "$SLOTS" ] || echo ", $IDLE_SLOTS slots")):" "$IDLE_LINE"
  else
    printf '%-59s%s\n' "end to end, idle:" "$IDLE_LINE"
  fi
  if ran million; then
    printf '%-59s%s\n' "million devices ($(v million.devices) every $(v million.interval) ms, offered $(fmt0 "$(v million.offered)")/s):" "$MIL_LINE"
    printf '%-59s%s\n' "  memory, history:" "$MIL_LINE2"
    [ "$(v million.worker_heap)$(v million.probe_heap)" = NANA ] || printf '%-59s%s\n' "  heap by role:" "$MIL_LINE4"
    printf '%-59s%s\n' "  CPU per committed result at a million devices:" "$MIL_LINE3"
  else
    printf '%-59s%s\n' "million devices:" "$MIL_LINE"
  fi
  echo "ratios: end-to-end / broker = $(fmt3 "$RATIO_BROKER"), end-to-end / database = $(fmt3 "$RATIO_DB")"
  echo "goals (issue 11; NA = not measured in this run):"
  for g in "${GOALS[@]}"; do echo "  $g"; done
  echo "notes:"
  for n in "${notes[@]}"; do echo "  - $n"; done
} >"$OUT/summary.txt"
echo
cat "$OUT/summary.txt"
exit 0
}

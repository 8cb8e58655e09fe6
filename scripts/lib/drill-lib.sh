# Shared helpers of the operator drills (scripts/drill-*.sh). Sourced, never run on its own.
#
# A drill sets DRILL (its name, for messages), parses its flags (drill_need, drill_int, drill_usage_error),
# then calls drill_prepare_jar [PATH] and drill_setup SLOTS,
# starts processes with drill_start / drill_wait_up, does its fault, and ends with
#   drill_finish PROBE_ID   (replay the outbox, wait for empty queues, print the ledger line, exit 0/1)
# Everything the drill started is stopped and its schema and queues removed by the EXIT trap, also on
# Ctrl-C or an error.
#
# Globals after drill_setup: name (schema / queue prefix / Redis channel prefix, drill_<epoch>), dir (run
# directory with the jar copy, logs and the probe's outbox), jar, slots, common (flags every process gets).
# Per node id: DRILL_PID[id], DRILL_PORT[id], DRILL_ROLE[id], DRILL_FLAGS[id]; logs are $dir/<id>.log.
# Environment (optional): DRILL_HEAP (JVM -Xmx, default 384m), DRILL_LEDGER_TIMEOUT_S (default 600), DRILL_UP_TIMEOUT_S
# (how long a node may take to become ready, default 120; a loaded machine needs more),
# DRILL_KEEP=1 (keep the schema and queues for a post-mortem; the end prints how to remove them).

export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

declare -gA DRILL_PID=() DRILL_PORT=() DRILL_ROLE=() DRILL_FLAGS=() DRILL_LOGOFF=()
declare -ga drill_failures=()
drill_heap="${DRILL_HEAP:-384m}"
drill_jar_src=""

# ------------------------------------------------------------------ messages and arguments

say() { echo "$(date +%T) $*"; }
drill_die() {
  echo "$DRILL: ERROR: $*" >&2
  exit 1
}
drill_usage_error() {
  echo "$DRILL: $* (see --help)" >&2
  exit 2
}
# The --help text: the header comment of the drill script (from line 2 up to the first non-comment line).
drill_help() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$1"; }

# drill_need "$@" (inside the flag loop): the flag in $1 has a value in $2, else a usage error naming it.
drill_need() { [ $# -ge 2 ] && [ -n "$2" ] && [[ "$2" != --* ]] || drill_usage_error "$1 needs a value"; }
# drill_int FLAG VALUE MIN: VALUE must be a whole number >= MIN, else a usage error naming FLAG.
drill_int() {
  [[ "$2" =~ ^[0-9]+$ ]] || drill_usage_error "$1 must be a whole number, not '$2'"
  [ "$2" -ge "$3" ] || drill_usage_error "$1 must be at least $3, not $2"
}

# ------------------------------------------------------------------ set-up and teardown

# drill_prepare_jar [PATH]: the jar to run; without --jar, target/node.jar, built only if missing.
drill_prepare_jar() {
  if [ -n "${1:-}" ]; then
    [ -f "$1" ] || drill_usage_error "--jar: no such file '$1'"
    drill_jar_src=$1
  else
    drill_jar_src=target/node.jar
    if [ ! -f "$drill_jar_src" ]; then
      say "target/node.jar is missing: building it (mvn -q -B package -DskipTests)"
      mvn -q -B package -DskipTests || drill_die "the build failed; build target/node.jar or pass --jar PATH"
    fi
  fi
}

# drill_setup SLOTS: services up, run directory, private jar copy, common flags, cleanup trap.
drill_setup() {
  slots=$1
  local t
  for t in java psql sqlite3 curl rabbitmqctl; do
    command -v "$t" >/dev/null 2>&1 || drill_die "'$t' is not installed (the drill needs java, psql, sqlite3, curl and rabbitmqctl)"
  done
  scripts/ensure-services.sh || drill_die "scripts/ensure-services.sh failed: PostgreSQL, RabbitMQ or Redis is not available"
  name="drill_$(date +%s)"
  while [ -e "target/drill/$name" ]; do sleep 1; name="drill_$(date +%s)"; done   # another drill this second
  dir="target/drill/$name"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # a private copy: a rebuild of the jar during the drill must not change the running JVMs' classes
  cp "$drill_jar_src" "$dir/node.jar"
  jar="$dir/node.jar"
  common=(--pg.schema="$name" --topology.prefix="$name" --redis.channel.prefix="$name" --slots.total="$slots"
          --data.dir="$dir" --backoff.max.ms=5000
          --security.allow.insecure.credentials=true    # local services: postgres superuser and guest (not demo mode)
          --scheduler.min.workers=1)   # a drill's fleet is 1-3 workers: the cold-start pace (3 by default) would halve its probes
  # the API needs real secrets: fresh ones per run, passed through the environment (not visible in ps)
  INSPECT_API_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  INSPECT_CONSOLE_PASSWORD=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  export INSPECT_API_TOKEN INSPECT_CONSOLE_PASSWORD
  AUTH=(-H "Authorization: Bearer $INSPECT_API_TOKEN")
  trap drill_cleanup EXIT
  trap 'echo; say "interrupted: cleaning up"; exit 130' INT
  trap 'say "terminated: cleaning up"; exit 143' TERM
  say "$DRILL: run $name ($slots slots); logs in $dir"
}

drill_cleanup() {
  local rc=$? id pid left i
  set +e
  trap - INT TERM
  # a drill that breaks something outside its processes (a stopped service) defines this to repair it
  declare -F drill_cleanup_hook >/dev/null && drill_cleanup_hook
  for id in "${!DRILL_PID[@]}"; do
    pid=${DRILL_PID[$id]}
    [ -n "$pid" ] || continue
    kill -CONT "$pid" 2>/dev/null   # a paused JVM cannot act on SIGTERM
    kill -TERM "$pid" 2>/dev/null
  done
  for i in $(seq 40); do
    left=0
    for id in "${!DRILL_PID[@]}"; do
      pid=${DRILL_PID[$id]}
      [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && left=1
    done
    [ "$left" = 0 ] && break
    sleep 0.5
  done
  for id in "${!DRILL_PID[@]}"; do
    pid=${DRILL_PID[$id]}
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  done
  wait 2>/dev/null
  if [ "${DRILL_KEEP:-0}" = 1 ] && [ -n "${jar:-}" ]; then
    echo "$DRILL: DRILL_KEEP=1: schema and queues $name kept; remove them with:" >&2
    echo "  java -cp $jar dev.inspection.node.Teardown --yes ${common[*]}" >&2
  elif [ -n "${jar:-}" ] && [ -f "$jar" ]; then
    java -cp "$jar" dev.inspection.node.Teardown --yes "${common[@]}" >>"$dir/teardown.log" 2>&1 ||
      echo "$DRILL: teardown of $name failed; see $dir/teardown.log" >&2
    # the probes' reports in Redis ({redis.channel.prefix}:probes), as bench.sh does
    command -v redis-cli >/dev/null 2>&1 && timeout 10 redis-cli -h 127.0.0.1 DEL "$name:probes" >/dev/null 2>&1
    rm -f "$jar"
  fi
  return $rc
}

# ------------------------------------------------------------------ processes

# drill_start ID ROLE [--key=value ...]: starts a JVM (HTTP on a free port) in the background.
drill_start() {
  local id=$1 role=$2 log
  shift 2
  log="$dir/$id.log"
  touch "$log"
  DRILL_LOGOFF[$id]=$(stat -c %s "$log")
  DRILL_ROLE[$id]=$role
  DRILL_FLAGS[$id]="$*"
  DRILL_PORT[$id]=""
  echo "---- $(date '+%F %T') start: --role=$role --node.id=$id $*" >>"$log"
  # DRILL_JVM_OPTS: extra JVM options for every node, {id} replaced by the node's id (a flight recording per node, say:
  # DRILL_JVM_OPTS='-XX:StartFlightRecording=filename=/tmp/jfr/{id}.jfr,settings=profile'; a node killed with -9 leaves none)
  local opts=()
  [ -z "${DRILL_JVM_OPTS:-}" ] || read -r -a opts <<<"${DRILL_JVM_OPTS//\{id\}/$id}"
  # huge pages as in the systemd units: a killed node's sessions end sooner (bench.ExitLatency)
  java "-Xmx$drill_heap" -XX:+UseTransparentHugePages "${opts[@]}" -jar "$jar" --role="$role" --node.id="$id" --http.port=0 "${common[@]}" "$@" >>"$log" 2>&1 &
  DRILL_PID[$id]=$!
}

# drill_log_since ID: what the node logged since its last start.
drill_log_since() { tail -c +$((DRILL_LOGOFF[$1] + 1)) "$dir/$1.log"; }

drill_alive() { [ -n "${DRILL_PID[$1]:-}" ] && kill -0 "${DRILL_PID[$1]}" 2>/dev/null; }

# drill_wait_up ID [TIMEOUT_S]: waits for "is up" (learning the HTTP port) and a 200 from /health/ready.
drill_wait_up() {
  local id=$1 timeout=${2:-${DRILL_UP_TIMEOUT_S:-120}} start=$SECONDS line
  while :; do
    if ! drill_alive "$id"; then
      drill_log_since "$id" | tail -n 15 >&2
      drill_die "node $id exited during start-up (log: $dir/$id.log)"
    fi
    if [ -z "${DRILL_PORT[$id]}" ]; then
      line=$(drill_log_since "$id" | grep -m1 -o 'is up: http://[^ ]*:[0-9]*/' || true)
      [ -n "$line" ] && DRILL_PORT[$id]=$(sed 's#.*:\([0-9]*\)/$#\1#' <<<"$line")
    fi
    if [ -n "${DRILL_PORT[$id]}" ] && curl -sf -o /dev/null --max-time 3 "http://127.0.0.1:${DRILL_PORT[$id]}/health/ready"; then
      return 0
    fi
    [ $((SECONDS - start)) -lt "$timeout" ] || drill_die "node $id is not ready after ${timeout}s (log: $dir/$id.log)"
    sleep 0.5
  done
}

# drill_stop ID [TIMEOUT_S]: SIGTERM (graceful), SIGKILL after TIMEOUT_S; the exit code is in drill_rc.
drill_stop() {
  local id=$1 timeout=${2:-40} pid=${DRILL_PID[$1]} i
  drill_rc=""
  [ -n "$pid" ] || return 0
  kill -CONT "$pid" 2>/dev/null || true
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq $((timeout * 5))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$pid" 2>/dev/null && { say "$id did not stop within ${timeout}s: kill -9"; kill -KILL "$pid" 2>/dev/null || true; }
  drill_rc=0
  wait "$pid" 2>/dev/null || drill_rc=$?
  DRILL_PID[$id]=""
}

# drill_reap ID: the node's process has ended (or is being killed): collect it; exit code in drill_rc.
drill_reap() {
  local pid=${DRILL_PID[$1]}
  drill_rc=0
  [ -n "$pid" ] && { wait "$pid" 2>/dev/null || drill_rc=$?; }
  DRILL_PID[$1]=""
}

# drill_start_probe ID DEVICES INTERVAL_MS [--key=value ...]: a probe with simulated devices. Confirmed
# outbox rows are kept for a day, so the ledger sees everything produced even in a long drill.
drill_start_probe() {
  local id=$1 devices=$2 interval=$3
  shift 3
  drill_start "$id" probe --probe.sim.devices="$devices" --probe.interval.ms="$interval" --outbox.retention.ms=86400000 "$@"
}

# ------------------------------------------------------------------ database, metrics, time

# drill_sql QUERY: one query in the drill's schema; unaligned, tuples only, '|' between columns.
drill_sql() { PGOPTIONS="-c search_path=$name -c client_min_messages=warning" psql -h 127.0.0.1 -U postgres -d test -qtAX -v ON_ERROR_STOP=1 -c "$1"; }

now_ms() { date +%s%3N; }
# PostgreSQL's clock as text, for a later comparison in SQL (the same host clock as now_ms).
db_now() { drill_sql "select now()::text"; }
# A node log line's time as epoch ms: ISO 8601 ("2026-12-02T23:10:34.844Z", the log format since issue 15) or,
# from older jars, "HH:MM:SS.mmm" (today).
log_time_ms() {
  case "$1" in
    *T*) date -d "$1" +%s%3N ;;
    *) date -d "$(date +%F) $1" +%s%3N ;;
  esac
}

# drill_metric ID NAME [LABEL_MATCH]: sum of a metric's samples (all label sets, or those whose labels
# contain LABEL_MATCH, e.g. 'quantile="0.5"'); 0 when absent; empty when the node does not answer.
drill_metric() {
  local port=${DRILL_PORT[$1]} body
  body=$(curl -sf --max-time 5 "http://127.0.0.1:$port/metrics") || return 0
  awk -v m="$2" -v l="${3:-}" '
    $1 == m || index($1, m "{") == 1 { if (l == "" || index($1, l) > 0) { s += $NF } }
    END { s += 0; if (s == int(s)) printf "%d\n", s; else printf "%.6f\n", s }' <<<"$body"
}

# drill_metric_na ID NAME [LABEL_MATCH]: like drill_metric, but "n/a" when this node's /metrics has no
# metric of that name at all (a metric another change adds, read by name before that change is merged).
drill_metric_na() {
  local port=${DRILL_PORT[$1]} body
  body=$(curl -sf --max-time 5 "http://127.0.0.1:$port/metrics") || { echo n/a; return 0; }
  awk -v m="$2" -v l="${3:-}" '
    $1 == m || index($1, m "{") == 1 { seen = 1; if (l == "" || index($1, l) > 0) { s += $NF } }
    END { if (!seen) { print "n/a"; exit } s += 0; if (s == int(s)) printf "%d\n", s; else printf "%.6f\n", s }' <<<"$body"
}

# drill_delta A B: B - A, or "n/a" when either is n/a or empty
drill_delta() {
  [[ "$1" =~ ^[0-9.]+$ && "$2" =~ ^[0-9.]+$ ]] || { echo n/a; return 0; }
  awk -v a="$1" -v b="$2" 'BEGIN { d = b - a; if (d == int(d)) printf "%d\n", d; else printf "%.3f\n", d }'
}

# stats "n1 n2 ...": "min M, median D, max X" (whole numbers)
drill_stats() {
  tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -n | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "n/a"; exit }
    med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "min %d, median %d, max %d (n=%d)\n", v[1], med, v[NR], NR }'
}

# ------------------------------------------------------------------ takeover to the first commit (issue 14)

# drill_first_commits PAIRS SINCE_MS [TIMEOUT_S]: waits until every slot of PAIRS ("(slot,epoch),...", the
# deposed owner's leases) has a history row written under a newer epoch (a commit by its new owner), then
# sets DRILL_FC_TIMES (one "ms" per slot: SINCE_MS -> that first commit, from received_at, the start of the
# commit transaction), DRILL_FC_LIST ("slot=ms" sorted by time, for a per-slot line) and DRILL_FC_MISSING
# (slots without a commit when the timeout ran out; empty when all committed) and DRILL_FC_IDLE (how many
# slots had no commit under the old owner either: left out). DRILL_FC_WAITING_TIMES: the same per slot for its first
# commit of a result collected before SINCE_MS (work that was waiting at the fault; a slot whose first results after
# the fault were all collected later had nothing waiting, so it is left out there). Queries history by slot.
drill_first_commits() {
  local pairs=$1 since=$2 timeout=${3:-120} start=$SECONDS rows n total
  while :; do
    # a slot its old owner never committed (no devices, or none with results yet) is left out: nothing to wait for
    rows=$(drill_sql "select z.slot_id, (extract(epoch from min(h.received_at)) * 1000)::bigint - $since,
          (extract(epoch from min(h.received_at) filter (where h.collected_at < to_timestamp($since / 1000.0))) * 1000)::bigint - $since
        from (values $pairs) z(slot_id, epoch) left join device_status_history h on h.slot_id = z.slot_id and h.writer_epoch > z.epoch
        where exists (select 1 from device_status_history o where o.slot_id = z.slot_id and o.writer_epoch <= z.epoch)
        group by z.slot_id order by 2 nulls last")
    total=$(grep -c '|' <<<"$rows" || true)
    n=$(awk -F'|' '$2 != ""' <<<"$rows" | wc -l)
    [ "$n" = "$total" ] && break
    [ $((SECONDS - start)) -lt "$timeout" ] || break
    sleep 0.2
  done
  DRILL_FC_TIMES=$(awk -F'|' '$2 != "" { printf "%s ", $2 }' <<<"$rows")
  DRILL_FC_LIST=$(awk -F'|' '$2 != "" { printf "%s=%s ", $1, $2 }' <<<"$rows")
  DRILL_FC_WAITING_TIMES=$(awk -F'|' '$3 != "" { printf "%s ", $3 }' <<<"$rows")
  DRILL_FC_MISSING=$(awk -F'|' '$2 == "" { printf "%s ", $1 }' <<<"$rows")
  DRILL_FC_IDLE=$(( $(grep -o '(' <<<"$pairs" | wc -l) - total ))
}

# drill_timer_now ID NAME: "count sum" of a node's timer NAME (e.g. worker_slot_first_commit) for drill_timer_since.
drill_timer_now() { echo "$(drill_metric "$1" "${2}_seconds_count") $(drill_metric "$1" "${2}_seconds_sum")"; }

# drill_timer_since ID NAME BEFORE: "mean X ms over N slot(s), max Y ms (recent)" of what node ID's timer NAME
# recorded since drill_timer_now gave BEFORE; "n/a" when it recorded nothing (or the jar has no such timer).
drill_timer_since() {
  awk -v now="$(drill_timer_now "$1" "$2")" -v b="$3" -v m="$(drill_metric "$1" "${2}_seconds_max")" 'BEGIN {
    split(now, x, " "); split(b, y, " "); n = x[1] - y[1]
    if (n <= 0) { print "n/a"; exit }
    printf "mean %.0f ms over %d slot(s), max %.0f ms (recent)\n", (x[2] - y[2]) * 1000 / n, n, m * 1000 }'
}

# drill_pct VALUES P: the P-th percentile (nearest rank) of space-separated whole numbers.
drill_pct() {
  tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -n | awk -v p="$2" '{ v[NR] = $1 } END {
    if (NR == 0) { print "n/a"; exit }
    i = int((p * NR + 99) / 100); if (i < 1) i = 1; print v[i] }'
}

# ------------------------------------------------------------------ backpressure modes (issue 12)

# drill_fleet_changes SCHEDULER_ID: the fleet mode's changes from GET /api/v1/fleet-mode (the stored
# history, oldest first), one per line: "EPOCH_MS FROM TO REASON"; nothing when the API does not answer.
drill_fleet_changes() {
  local port=${DRILL_PORT[$1]} body
  body=$(curl -sf "${AUTH[@]}" --max-time 10 "http://127.0.0.1:$port/api/v1/fleet-mode?history=500") || return 0
  jq -r '.history // [] | reverse | .[] | [.at, .from, .to, .reason] | @tsv' <<<"$body" |
    while IFS=$'\t' read -r at from to reason; do
      echo "$(date -d "$at" +%s%3N) $from $to $reason"
    done
}

# drill_mode_now ID METRIC [LABEL_MATCH]: the mode a mode gauge (fleet_mode, probe_mode) shows now, e.g.
# drill_mode_now p1 probe_mode 'source="effective"'; "?" when the node does not answer or has no such gauge.
drill_mode_now() {
  local port=${DRILL_PORT[$1]} body
  body=$(curl -sf --max-time 5 "http://127.0.0.1:$port/metrics") || { echo '?'; return 0; }
  awk -v m="$2" -v l="${3:-}" 'index($1, m "{") == 1 && $NF == 1 && (l == "" || index($1, l) > 0) && match($1, /mode="[A-Z_]+"/) {
      print substr($1, RSTART + 6, RLENGTH - 7); found = 1; exit }
    END { if (!found) print "?" }' <<<"$body"
}

# drill_probe_changes PROBE_ID: the probe's effective mode changes from its log (all its starts), one per
# line: "EPOCH_MS MODE (fleet F, own O)"; own-mode changes as "EPOCH_MS own A -> B (reason)"; each start of
# the process as "EPOCH_MS (process started)".
drill_probe_changes() {
  grep -E 'inspecting in mode|own mode [A-Z_]+ -> |^---- [0-9-]+ [0-9:]+ start:' "$dir/$1.log" 2>/dev/null |
    sed -E 's/^([0-9TZ:.-]+) .*inspecting in mode ([A-Z_]+) \((fleet [A-Z_]+, own [A-Z_]+)\).*/\1 \2 (\3)/;
            s/^([0-9TZ:.-]+) .*own mode ([A-Z_]+ -> [A-Z_]+ .*)$/\1 own \2/;
            s/^---- [0-9-]+ ([0-9:]+) start:.*/\1.000 (process started)/' |
    while read -r t rest; do echo "$(log_time_ms "$t") $rest"; done
}

# drill_mode_times CHANGES T_FAIL_MS T_BACK_MS: from "EPOCH_MS ... TO ..." lines (TO = the third field for
# fleet changes, the second for probe changes: pass FIELD=2|3 in the environment), the first entry into a
# BACKPRESSURE mode at or after T_FAIL_MS and the return to NORMAL at or after T_BACK_MS, as
# "entered +X.Y s after the failure (MODE), left +Z.W s after recovery" (or "never entered" / "not left").
drill_mode_times() {
  awk -v f="$2" -v b="$3" -v k="${FIELD:-3}" '
    $1 >= f && in_ == "" && $k ~ /^BACKPRESSURE/ { in_ = $1; mode = $k }
    in_ != "" && $1 >= b && out == "" && $k == "NORMAL" { out = $1 }
    in_ != "" && $1 < b && $k == "NORMAL" { early = $1 }
    END {
      if (in_ == "") { print "never entered backpressure"; exit }
      s = sprintf("entered %s %+.1f s after the failure", mode, (in_ - f) / 1000)
      if (out != "") s = s sprintf(", left %+.1f s after recovery", (out - b) / 1000)
      else if (early != "" ) s = s sprintf(", back to NORMAL %.1f s before recovery", (b - early) / 1000)
      else s = s ", still in it"
      print s }' <<<"$1"
}

# ------------------------------------------------------------------ cluster state

# drill_wait_registered ID...: every id has a row in worker_heartbeat (the worker migrated the schema
# and took its liveness lock). Start workers before the scheduler so that they become ACTIVE together
# (cold start) and the first assignment spreads the slots over all of them.
drill_wait_registered() {
  local start=$SECONDS want=$# ids n
  ids=$(printf "'%s'," "$@")
  while :; do
    n=$(drill_sql "select count(*) from worker_heartbeat where worker_id in (${ids%,})" 2>/dev/null || echo 0)
    [ "$n" = "$want" ] && return 0
    [ $((SECONDS - start)) -lt 120 ] || drill_die "workers $* did not all register within 120 s"
    sleep 0.5
  done
}

# drill_wait_leader_grace [GRACE_MS]: a leader exists and was elected at least GRACE_MS (default 15000,
# scheduler.leader.grace.ms) ago: before that it declares no worker dead, which would slow any fault down.
drill_wait_leader_grace() {
  local grace=${1:-15000} age start=$SECONDS
  while :; do
    age=$(drill_sql "select coalesce((extract(epoch from now() - elected_at) * 1000)::bigint, -1) from scheduler_term where term > 0")
    [ -n "$age" ] && [ "$age" -ge "$grace" ] && return 0
    [ $((SECONDS - start)) -lt 120 ] || drill_die "no scheduler leader for 120 s"
    sleep 1
  done
}

# Live workers: ids of started worker processes that are still running, as an SQL list ('a','b').
drill_live_workers_sql() {
  local id out=""
  for id in "${!DRILL_PID[@]}"; do
    [ "${DRILL_ROLE[$id]}" = worker ] && drill_alive "$id" && out+="'$id',"
  done
  printf '%s' "${out%,}"
}

# drill_queue_stats: "messages consumers0 consumers_other dead" over this drill's slot queues
# (messages = ready + unacknowledged; consumers0 = queues without a consumer; consumers_other = queues
# with more than one; dead = messages in the dead-letter queue).
drill_queue_stats() {
  local out
  if ! out=$(rabbitmqctl -q list_queues --no-table-headers name messages consumers 2>/dev/null); then
    echo "? ? ? ? 0"
    return 0
  fi
  awk -v p="$name.status.s" -v d="$name.dead" '
      index($1, p) == 1 { m += $2; if ($3 == 0) z++; else if ($3 > 1) o++; n++ }
      $1 == d { dead += $2 }
      END { printf "%d %d %d %d %d\n", m, z, o, dead, n }' <<<"$out"
}

# drill_settled [OWNERS_SQL_LIST]: every slot ACTIVE and owned by a live ACTIVE worker (running
# process, state ACTIVE, heartbeat younger than 10 s; optionally one of OWNERS), and every slot queue
# consumed by exactly one consumer. Sets drill_settle_info.
drill_settled() {
  local live owners=${1:-} ok total q
  live=$(drill_live_workers_sql)
  [ -n "$live" ] || { drill_settle_info="no live worker"; return 1; }
  [ -n "$owners" ] || owners=$live
  read -r ok total < <(drill_sql "select count(*) filter (where s.state = 'ACTIVE' and w.state = 'ACTIVE'
      and w.last_heartbeat > now() - interval '10 seconds' and s.owner_worker_id in ($live) and s.owner_worker_id in ($owners)),
      count(*) from slot_lease s left join worker_heartbeat w on w.worker_id = s.owner_worker_id" | tr '|' ' ')
  drill_settle_info="$ok/$total slots ACTIVE on live ACTIVE workers"
  [ "$ok" = "$total" ] && [ "$total" = "$slots" ] || return 1
  read -r q q0 qn _ qtotal < <(drill_queue_stats)
  drill_settle_info+="; $qtotal slot queues, $q0 without a consumer, $qn with several"
  # two lanes (high, normal) per slot, or more (a low lane): a whole number of queues per slot
  [ "$qtotal" -ge $((2 * slots)) ] && [ $((qtotal % slots)) = 0 ] && [ "$q0" = 0 ] && [ "$qn" = 0 ]
}

# drill_wait_settled TIMEOUT_S [OWNERS_SQL_LIST]
drill_wait_settled() {
  local timeout=$1 start=$SECONDS last=$SECONDS
  while ! drill_settled "${2:-}"; do
    [ $((SECONDS - start)) -lt "$timeout" ] || drill_die "not settled after ${timeout}s: $drill_settle_info; holdings: $(drill_holdings)"
    if [ $((SECONDS - last)) -ge 15 ]; then say "  waiting to settle: $drill_settle_info"; last=$SECONDS; fi
    sleep 1
  done
}

# drill_wait_quiet QUIET_S TIMEOUT_S: settled, and no slot moved (a MOVING row in slot_lease_history) for QUIET_S
# seconds: the planner has finished its rounds (scale-out, rebalance), so what the drill does next does not race a move
drill_wait_quiet() {
  local quiet=$1 timeout=$2 start=$SECONDS last=$SECONDS ago
  while :; do
    ago=$(drill_sql "select coalesce(floor(extract(epoch from now() - max(at))), 999999) from slot_lease_history where new_state = 'MOVING'")
    if [ "${ago:-0}" -ge "$quiet" ] && drill_settled; then return 0; fi
    [ $((SECONDS - start)) -lt "$timeout" ] || drill_die "the planner did not go quiet within ${timeout}s (last move ${ago}s ago; $drill_settle_info; holdings: $(drill_holdings))"
    if [ $((SECONDS - last)) -ge 15 ]; then say "  waiting for the planner to go quiet: last move ${ago}s ago; $(drill_holdings)"; last=$SECONDS; fi
    sleep 1
  done
}

# drill_holdings: "w1 ACTIVE 128, w2 ACTIVE 128" (ACTIVE slots per worker, with the worker's state)
drill_holdings() {
  drill_sql "select w.worker_id || ' ' || w.state || ' ' || count(s.slot_id) from worker_heartbeat w
      left join slot_lease s on s.owner_worker_id = w.worker_id and s.state = 'ACTIVE' group by w.worker_id, w.state order by 1" |
    paste -sd, | sed 's/,/, /g'
}

# drill_most_loaded: the live worker holding the most ACTIVE slots (ties: the smaller id)
drill_most_loaded() {
  drill_sql "select owner_worker_id from slot_lease where state = 'ACTIVE' and owner_worker_id in ($(drill_live_workers_sql))
      group by owner_worker_id order by count(*) desc, owner_worker_id limit 1"
}

# drill_wait_flowing ID... : results committed by each of these workers (worker_committed_total > 0)
drill_wait_flowing() {
  local id v start=$SECONDS
  for id in "$@"; do
    while v=$(drill_metric "$id" worker_committed_total); [ -z "$v" ] || [ "$v" = 0 ]; do
      [ $((SECONDS - start)) -lt 120 ] || drill_die "worker $id committed nothing within 120 s"
      sleep 1
    done
  done
}

# ------------------------------------------------------------------ the ledger

# drill_fail REASON: the drill fails (exit 1) at the end, after the ledger, naming REASON.
drill_fail() { drill_failures+=("$1"); }

# drill_expect_not_suspected WORKER LEADER WHEN [HINT]: the drill fails when LEADER's log shows WORKER made SUSPECTED or DEAD
# (each such line printed); WHEN says during what ("during the storm"), HINT where to look. A fault that stalls commits or
# API requests must not stall a worker's heartbeats.
drill_expect_not_suspected() {
  local worker=$1 leader=$2 when=$3 hint=${4:-} lines
  lines=$(grep -hE "worker $worker: [A-Z_]+ -> (SUSPECTED|DEAD)" "$dir/$leader.log" || true)
  if [ -n "$lines" ]; then
    echo "$lines" | sed -E "s/^([0-9TZ:.-]+) .*(worker $worker: .*)\$/  \\1 \\2/"
    drill_fail "the leader suspected the worker $when${hint:+: $hint}"
  else
    say "the leader never suspected the worker $when: it stayed ACTIVE"
  fi
}

# drill_finish PROBE_ID: stops the probe (it stops inspecting), starts it again with no devices so it
# replays whatever it left unconfirmed, waits until its outbox is fully confirmed and this drill's slot
# queues are empty, then compares what the probe produced (its outbox) with what PostgreSQL holds:
#   lost       produced, not in device_status_history (and not shed)
#   shed       given up by the probe at its outbox watermarks (the outbox's shed_row), not in history:
#              recorded, so not a loss (issue 12; per device-minute in GET /api/v1/shed)
#   duplicated in device_status_history more than once
#   unexpected in device_status_history, never produced by this probe
#   stale      device_status_current is not the newest stored result of its device (or is missing)
# Prints the verdict and, as the very last line, "ledger: produced N, lost L, duplicated D, unexpected U,
# stale S"; exits 1 if L, D or S is non-zero or drill_fail was called, 0 otherwise.
# A worker in the DB-degraded write mode (issue 12) spills the history rows of non-critical results to the
# back-fill queue and writes them only after it has left the mode (worker.degraded.dwell.ms healthy). The
# ledger counts history rows, so it waits for every worker to be NORMAL and the back-fill queue to be empty,
# and says how much was spilled (DRILL_BACKFILL_TIMEOUT_S, default 600).
drill_wait_backfilled() {
  local id v spilled=0 start=$SECONDS last=$SECONDS timeout=${DRILL_BACKFILL_TIMEOUT_S:-600} degraded q
  for id in "${!DRILL_ROLE[@]}"; do
    [ "${DRILL_ROLE[$id]}" = worker ] || [ "${DRILL_ROLE[$id]}" = all ] || continue
    v=$(drill_metric "$id" worker_spilled_total)   # empty: the node is gone (a refused start, a killed one)
    spilled=$(( spilled + ${v:-0} ))
  done
  grep -qh "DB-degraded write mode entered" "$dir"/*.log 2>/dev/null || [ "$spilled" != 0 ] || return 0
  say "ledger: workers entered the DB-degraded write mode (history rows spilled: $spilled); waiting for them to leave it and back-fill"
  while :; do
    degraded=""
    for id in "${!DRILL_ROLE[@]}"; do
      { [ "${DRILL_ROLE[$id]}" = worker ] || [ "${DRILL_ROLE[$id]}" = all ]; } && [ "$(drill_metric "$id" worker_degraded)" = 1 ] && degraded+=" $id"
    done
    q=$(rabbitmqctl -q list_queues --no-table-headers name messages 2>/dev/null | awk -v b="$name.backfill" '$1 == b { print $2 }')
    [ -z "$degraded" ] && [ "${q:-0}" = 0 ] && break
    if [ $((SECONDS - start)) -ge "$timeout" ]; then
      drill_fail "still DEGRADED:${degraded:- none}, back-fill queue ${q:-?} message(s) after ${timeout}s"
      break
    fi
    if [ $((SECONDS - last)) -ge 15 ]; then say "  waiting: DEGRADED:${degraded:- none}; back-fill queue ${q:-?} message(s)"; last=$SECONDS; fi
    sleep 1
  done
  say "ledger: every worker NORMAL and the back-fill queue empty after $((SECONDS - start)) s"
  grep -h "DB-degraded write mode" "$dir"/*.log | sed -E 's/^([0-9TZ:.-]+) .*(worker [^:]+): DB-degraded write mode (entered|left)( after [0-9]+ ms)?: ([^;]*);?.*/  \1 \2 \3\4: \5/'
}

drill_finish() {
  local probe=$1 outbox="$dir/outbox-$1.db" start last left q dead produced lost dup unexpected stale shed
  local timeout=${DRILL_LEDGER_TIMEOUT_S:-600} ok_rounds=0
  say "ledger: stopping probe $probe and starting it again without devices to replay its outbox"
  drill_stop "$probe" 60
  drill_start_probe "$probe" 0 1000
  drill_wait_up "$probe"
  start=$SECONDS last=$SECONDS
  while :; do
    left=$(sqlite3 "$outbox" "select count(*) from outbox_unconfirmed" 2>/dev/null || echo '?')
    read -r q _ _ dead _ < <(drill_queue_stats)
    if [ "$left" = 0 ] && [ "$q" = 0 ]; then
      ok_rounds=$((ok_rounds + 1))
      [ "$ok_rounds" -ge 2 ] && break
    else
      ok_rounds=0
    fi
    if [ $((SECONDS - start)) -ge "$timeout" ]; then
      say "ledger: still $left unconfirmed outbox row(s) and $q queued message(s) after ${timeout}s; counting anyway"
      drill_fail "outbox or queues not drained within ${timeout}s"
      break
    fi
    if [ $((SECONDS - last)) -ge 15 ]; then say "  waiting: $left unconfirmed outbox row(s), $q message(s) in the slot queues"; last=$SECONDS; fi
    sleep 1
  done
  say "ledger: outbox fully confirmed and slot queues empty after $((SECONDS - start)) s; dead-lettered: $dead"
  drill_wait_backfilled
  # a drill may name a moment to measure the backlog against (e.g. a service coming back)
  [ -z "${drill_ref_s:-}" ] || say "backlog drained $(( $(date +%s) - drill_ref_s )) s after $drill_ref_label"

  sqlite3 -separator $'\t' "$outbox" "select message_id, 0 from outbox union all select message_id, 1 from shed_row" >"$dir/produced.txt"
  produced=$(wc -l <"$dir/produced.txt")
  drill_sql "drop table if exists produced; create table produced(message_id varchar(160) primary key, shed boolean not null)" >/dev/null
  PGOPTIONS="-c search_path=$name -c client_min_messages=warning" psql -h 127.0.0.1 -U postgres -d test -qX -v ON_ERROR_STOP=1 \
    -c "\\copy produced from '$dir/produced.txt'" || drill_die "cannot load the produced message ids into PostgreSQL"
  lost=$(drill_sql "select count(*) from produced p where not p.shed and not exists (select 1 from device_status_history h where h.message_id = p.message_id)")
  shed=$(drill_sql "select count(*) from produced p where p.shed and not exists (select 1 from device_status_history h where h.message_id = p.message_id)")
  dup=$(drill_sql "select count(*) - count(distinct message_id) from device_status_history")
  unexpected=$(drill_sql "select count(*) from device_status_history h where not exists (select 1 from produced p where p.message_id = h.message_id)")
  stale=$(drill_sql "select count(*) from (select distinct on (device_id) device_id, cycle_id, seq from device_status_history
      order by device_id, cycle_id desc, seq desc) h left join device_status_current c using (device_id)
      where c.device_id is null or (c.cycle_id, c.seq) <> (h.cycle_id, h.seq)")
  [ "$lost" = 0 ] || drill_fail "$lost result(s) lost"
  [ "$dup" = 0 ] || drill_fail "$dup result(s) duplicated"
  [ "$stale" = 0 ] || drill_fail "$stale device(s) with a stale current status"
  [ "$unexpected" = 0 ] || say "note: $unexpected stored result(s) that the probe's outbox does not list (reported, not a failure)"
  # a drill may add its own figures and checks once everything is counted (it may call drill_fail)
  declare -F drill_ledger_hook >/dev/null && drill_ledger_hook
  local verdict=0
  if [ "${#drill_failures[@]}" -eq 0 ]; then
    echo "drill PASSED"
  else
    echo "drill FAILED: $(printf '%s; ' "${drill_failures[@]}" | sed 's/; $//')"
    verdict=1
  fi
  [ "$shed" = 0 ] || say "shed (recorded at the probe's outbox watermarks, not lost): $shed"
  echo "ledger: produced $produced, lost $lost, duplicated $dup, unexpected $unexpected, stale $stale"
  exit $verdict
}

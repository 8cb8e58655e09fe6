#!/usr/bin/env bash
# What each part of the worker's device-state write costs PostgreSQL (issue 11): the commit bench (CommitBench,
# `./run.sh bench --commit`) run once per arm, the arms one after the other and the rounds alternating, each arm a
# worktree of HEAD with the change below applied to its source. Each run interleaves its full batches with the plain
# ones (lease check, current upsert, history insert-or-ignore), so the full / plain ratio of PostgreSQL's session CPU is
# what to compare between arms: the host's drift hits both halves of a run alike. The difference of an arm's ratio to
# the base's, times the plain write's µs, is that part's share of the database's CPU per result.
#
#   base          the write as it is, results of a device 5 s apart (a device checked every 5 s: each rollup row is
#                 updated about twelve times a minute, as in the capacity run)
#   new-minutes   the same write with a device's results 60 s apart: every rollup row inserted once, never updated (what
#                 writing each device-minute's rollup row once would leave; the million run's shape)
#   no-rollups    the rollup rows not written at all (the history statement's two rollup inserts filtered to no row)
#   no-snapshot   the derived snapshot not written (the current upsert keeps the stored one)
#   small-snapshot the snapshot replaced by a JSON string of its first 150 bytes: before the compact layout (about 180
#                 bytes stored against about 520) what it would save the database; now about what it writes anyway
#   v1-snapshot   the snapshots written in the first layout (worker.snapshot.layout=v1, about 520 bytes) instead of
#                 the compact one (about 170): what the compact layout saves, the database and the node's planning
#   plain-lease   the lease check without the back-fill lock and the plan mode (the plain write's lease check)
#   no-alerts     the alert events and alert_current not written
#
# These arms are measurements, not products (but v1-snapshot, a setting): no-rollups, no-snapshot and no-alerts lose data, plain-lease races a
# back-fill. Uncommitted changes are not in the worktrees (they are of HEAD). Each patch is checked to have applied
# exactly once; a source that moved on stops the script with the arm's name. Scratch schemas are the commit bench's own (dropped by it); the worktrees are removed at the end.
#
# Usage: scripts/bench/commit-parts.sh [arm...]   (default: all eight, base first; the first arm named is the reference)
#   COMMIT_PARTS_ROUNDS (2), BENCH_COMMIT_ARGS (--batches=300 --batch=200 --devices=5000; --step-ms is the arm's)
# Takes about 80 s per arm and round. Needs git, python3 (the patches) and what `./run.sh bench --commit` needs.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${COMMIT_PARTS_ROUNDS:-2}
ARGS=${BENCH_COMMIT_ARGS:---batches=300 --batch=200 --devices=5000}
ARMS=("$@")
[ ${#ARMS[@]} -gt 0 ] || ARMS=(base new-minutes no-rollups no-snapshot small-snapshot v1-snapshot plain-lease no-alerts)
WORK=$(mktemp -d /tmp/commit-parts.XXXXXX)
cleanup() {
  for d in "$WORK"/*/; do [ -d "$d" ] && git worktree remove --force "$d" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# replace FILE OLD NEW: a literal replacement that must happen exactly once, or the script stops (exit works inside the
# caller's || too, where set -e does not)
replace() {
  python3 - "$1" "$2" "$3" <<'PY' || { echo "commit-parts.sh: a patch did not apply (above): the source moved on" >&2; exit 1; }
import sys
path, old, new = sys.argv[1:4]
s = open(path).read()
n = s.count(old)
if n != 1:
    sys.exit(f"expected one {old!r} in {path}, found {n}")
open(path, "w").write(s.replace(old, new))
PY
}

HR=src/main/java/dev/inspection/worker/HistoryRollups.java
BS=src/main/java/dev/inspection/worker/BatchStore.java
SP=src/main/java/dev/inspection/worker/StatePlanner.java
AW=src/main/java/dev/inspection/worker/AlertWrites.java
step_of() { case $1 in new-minutes) echo 12 ;; *) echo 1 ;; esac; }
patch_arm() { # arm dir
  case $1 in
    base | new-minutes) ;;
    no-rollups)
      replace "$2/$HR" "FROM a JOIN t lt ON lt.i = a.li WHERE a.fr" "FROM a JOIN t lt ON lt.i = a.li WHERE a.fr AND false"
      replace "$2/$HR" "        WHERE NOT a.fr" "        WHERE NOT a.fr AND false"
      replace "$2/$HR" "if (r.getLong(1) == figures.size())" "if (true)" ;;
    no-snapshot)
      replace "$2/$BS" "convert_from(ds, 'UTF8')::json, pr, now()" "NULL::json, pr, now()"
      replace "$2/$BS" "derived_snapshot = coalesce(EXCLUDED.derived_snapshot, c.derived_snapshot)," "derived_snapshot = c.derived_snapshot," ;;
    small-snapshot)
      replace "$2/$BS" "convert_from(ds, 'UTF8')::json, pr, now()" "to_json(convert_from(substr(ds, 1, 150), 'UTF8')), pr, now()" ;;
    v1-snapshot)
      replace "$2/$SP" "return plan(batch, memory, infos, rules, histories, SnapshotLayout.COMPACT);" "return plan(batch, memory, infos, rules, histories, SnapshotLayout.V1);" ;;
    plain-lease)
      replace "$2/$BS" "pg_advisory_xact_lock_shared(hashtext('inspection.backfill.' || current_schema()), slot_id)::text AS backfill_lock" "''::text AS backfill_lock"
      replace "$2/$BS" "set_config('plan_cache_mode', \$2, true) AS plan_mode" "(\$2::text IS NULL)::text AS plan_mode" ;;
    no-alerts)
      replace "$2/$AW" "if (events.isEmpty()) return Future.succeededFuture();" "if (true) return Future.succeededFuture();" ;;
    *) echo "commit-parts.sh: unknown arm '$1' (base, new-minutes, no-rollups, no-snapshot, small-snapshot, v1-snapshot, plain-lease, no-alerts)" >&2; exit 2 ;;
  esac
}

for arm in "${ARMS[@]}"; do
  git worktree add --detach -q "$WORK/$arm" HEAD
  patch_arm "$arm" "$WORK/$arm" || { echo "commit-parts.sh: arm $arm: the source moved on, its patch did not apply (above)" >&2; exit 1; }
done
echo "commit parts at $(git rev-parse --short HEAD), $(date -u '+%F %H:%M UTC'): $ROUNDS round(s), commit bench $ARGS"
printf '%-15s %-6s %12s %12s %8s\n' arm round "plain µs" "full µs" "ratio"
declare -A SUM PLAIN
for r in $(seq 1 "$ROUNDS"); do
  for arm in "${ARMS[@]}"; do
    log="$WORK/$arm-$r.log"
    (cd "$WORK/$arm" && BENCH_COMMIT_ARGS="$ARGS --step-ms=$(step_of "$arm")" ./run.sh bench --commit) >"$log" 2>&1 \
      || { tail -20 "$log" >&2; echo "commit-parts.sh: arm $arm round $r failed (log above)" >&2; exit 1; }
    line=$(grep 'CPU per result, PostgreSQL' "$log") || { tail -20 "$log" >&2; echo "commit-parts.sh: no session CPU line in arm $arm's output" >&2; exit 1; }
    read -r plain full ratio < <(sed -E 's/.*plain ([0-9.]+) µs, full ([0-9.]+) µs, ratio ([0-9.]+).*/\1 \2 \3/' <<<"$line")
    printf '%-15s %-6s %12s %12s %8s\n' "$arm" "$r" "$plain" "$full" "$ratio"
    SUM[$arm]=$(awk -v a="${SUM[$arm]:-0}" -v b="$ratio" 'BEGIN { print a + b }')
    PLAIN[$arm]=$(awk -v a="${PLAIN[$arm]:-0}" -v b="$plain" 'BEGIN { print a + b }')
  done
done
echo "mean full / plain ratio per arm, and against the first arm (${ARMS[0]}) in µs of PostgreSQL's session CPU per result"
base=$(awk -v s="${SUM[${ARMS[0]}]}" -v n="$ROUNDS" 'BEGIN { print s / n }')
for arm in "${ARMS[@]}"; do
  awk -v arm="$arm" -v s="${SUM[$arm]}" -v p="${PLAIN[$arm]}" -v n="$ROUNDS" -v b="$base" \
    'BEGIN { r = s / n; printf "  %-15s %.2f  (%+.2f x plain %.1f µs = %+.1f µs)\n", arm, r, r - b, p / n, (r - b) * p / n }'
done

#!/usr/bin/env bash
# Single entry point of the inspection node; see usage below or ./run.sh --help.
set -euo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"

JAR=target/node.jar

usage() {
  cat <<'EOF'
usage: ./run.sh <command> [args...]

commands:
  demo [flags...]       start PostgreSQL, RabbitMQ and Redis if needed (scripts/ensure-services.sh),
                        build target/node.jar if needed, run every role in one JVM (--role=all) in demo
                        mode (--demo.mode=true: 10,000 simulated devices, 1 % of them flapping, 40 simulated hotel
                        rooms pushing frames to the probe, generated API token and password)
  test [mvn args...]    start the services and install chromium if needed, mvn -B verify, then check that no test secret reached a log
                        (unit tests *Test with surefire, integration tests *IT with failsafe)
  probe [flags...]      build if needed, run the probe role      (--role=probe)
  worker [flags...]     build if needed, run the worker role     (--role=worker)
  scheduler [flags...]  build if needed, run the scheduler role  (--role=scheduler)
  bench [args...]       start the services if needed (scripts/ensure-services.sh), run scripts/bench.sh
  -h, --help            show this help

Flags are passed to the node, e.g. ./run.sh demo --http.port=8081; every key can also be set with
an INSPECT_* environment variable (INSPECT_X_FILE=/path reads it from a file). List them with: java -jar target/node.jar --help
probe, worker and scheduler run outside demo mode: they add no simulated device unless given
--probe.sim.devices=N, and refuse RabbitMQ's guest account and a PostgreSQL superuser (the local
services' defaults) unless given --security.allow.insecure.credentials=true.
mvn package (and so every build here) also writes the install tarball target/inspection-node-VERSION.tar.gz.
The jar is rebuilt (mvn -q -B package -DskipTests) when it is missing or older than pom.xml or src/.
Missing maven or JDK 17 are installed with apt-get (Debian packages maven, openjdk-17-jdk-headless).
EOF
}

die() {
  echo "run.sh: $*" >&2
  exit 1
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "need root to run: $*"
  fi
}

# Installs Debian's JDK 17 if javac (or java) is missing and, with "maven", Debian's maven if mvn is missing.
ensure_toolchain() {
  local pkgs=()
  if ! command -v javac >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then
    pkgs+=(openjdk-17-jdk-headless)
  fi
  if [ "${1:-}" = maven ] && ! command -v mvn >/dev/null 2>&1; then
    pkgs+=(maven)
  fi
  [ "${#pkgs[@]}" -eq 0 ] && return 0
  echo "installing ${pkgs[*]} (apt-get) ..."
  local log
  log="$(mktemp /tmp/run-sh-apt.XXXXXX)"
  if ! as_root apt-get update >"$log" 2>&1 ||
     ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "${pkgs[@]}" >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    die "apt-get could not install ${pkgs[*]} (full output in $log)"
  fi
  rm -f "$log"
  echo "installed ${pkgs[*]}"
}

# The unit files' test (DistFilesTest) runs systemd-analyze verify: Debian's systemd package has it.
ensure_systemd_analyze() {
  command -v systemd-analyze >/dev/null 2>&1 && return 0
  echo "installing systemd for systemd-analyze (apt-get) ..."
  as_root apt-get update >/dev/null 2>&1 || true
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends systemd >/dev/null 2>&1 ||
    die "apt-get could not install systemd (systemd-analyze checks the install tarball's units)"
}

jar_stale() {
  [ ! -f "$JAR" ] || [ pom.xml -nt "$JAR" ] || [ -n "$(find src -newer "$JAR" -print -quit)" ]
}

build_if_needed() {
  if jar_stale; then
    ensure_toolchain maven
    echo "building $JAR ..."
    mvn -q -B package -DskipTests
    [ -f "$JAR" ] || die "the build finished but $JAR does not exist"
  else
    ensure_toolchain
  fi
}

run_role() { # role, flags...
  local role="$1"
  shift
  build_if_needed
  exec java -jar "$JAR" --role="$role" "$@"
}

cmd="${1:-}"
[ "$#" -gt 0 ] && shift

case "$cmd" in
  demo)
    scripts/ensure-services.sh
    # one worker is the whole demo fleet: its probe opens at the cold-start pace and reaches full speed once that worker is ACTIVE
    run_role all --demo.mode=true --scheduler.min.workers=1 "$@"
    ;;
  test)
    scripts/ensure-services.sh
    scripts/ensure-chromium.sh   # the console's browser test drives Debian's headless chromium
    scripts/ensure-prometheus.sh # the dashboard and alert test runs a private Prometheus and promtool
    ensure_toolchain maven
    ensure_systemd_analyze
    mkdir -p target
    set +e
    mvn -B verify "$@" 2>&1 | tee target/test-output.log
    rc=${PIPESTATUS[0]}
    set -e
    [ "$rc" -eq 0 ] || exit "$rc"
    exec scripts/check-secrets.sh target/test-output.log
    ;;
  probe | worker | scheduler)
    run_role "$cmd" "$@"
    ;;
  bench)
    [ -e scripts/bench.sh ] || die "scripts/bench.sh does not exist"
    # the bench declares 512+ quorum queues: the broker needs its raised file-handle limit (a fresh machine's
    # broker has 1024 and stops accepting connections mid-run); --help needs no services
    case " $* " in *" --help "* | *" -h "*) ;; *) scripts/ensure-services.sh ;; esac
    if [ -x scripts/bench.sh ]; then exec scripts/bench.sh "$@"; fi
    exec bash scripts/bench.sh "$@"
    ;;
  "" | -h | --help | help)
    usage
    ;;
  *)
    echo "run.sh: unknown command '$cmd'" >&2
    echo >&2
    usage >&2
    exit 2
    ;;
esac

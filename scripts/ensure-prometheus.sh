#!/usr/bin/env bash
# Makes sure Prometheus and promtool are installed for the dashboard and alert test (PrometheusIT):
# /usr/bin/prometheus and /usr/bin/promtool, from Debian's package `prometheus`. Quick when both are
# present. When missing it runs apt-get update and apt-get install -y --no-install-recommends prometheus.
# The package's own service is never started by this script (a policy-rc.d forbids it during the install
# when the machine has none): the test runs a private Prometheus on its own port and data directory.
# Exits non-zero, with the tail of apt-get's output, when the install fails.
set -euo pipefail

export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

if [ -x /usr/bin/prometheus ] && [ -x /usr/bin/promtool ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    exec sudo -E bash "$(readlink -f "${BASH_SOURCE[0]}")" "$@"
  fi
  echo "ensure-prometheus: must run as root to install prometheus (apt-get)" >&2
  exit 1
fi

log="$(mktemp /tmp/ensure-prometheus.XXXXXX)"
policy=/usr/sbin/policy-rc.d
own_policy=
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# ensure-prometheus.sh: no service starts during its install\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  own_policy=1
fi
trap '[ -n "$own_policy" ] && rm -f "$policy"' EXIT
echo "ensure-prometheus: installing prometheus (apt-get update + apt-get install -y; log $log) ..."
if ! apt-get update >"$log" 2>&1 ||
   ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus >>"$log" 2>&1; then
  tail -n 20 "$log" >&2
  echo "ensure-prometheus: ERROR: apt-get could not install prometheus (full output in $log)" >&2
  exit 1
fi
rm -f "$log"
echo "ensure-prometheus: installed $(/usr/bin/prometheus --version 2>&1 | head -1)"

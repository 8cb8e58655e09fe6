#!/usr/bin/env bash
# Fails when a secret the integration tests run with (every TestEnv constant named *_TOKEN or *_PASSWORD:
# API_TOKEN, CONSOLE_PASSWORD, REDIS_PASSWORD, ...) appears
# in the build output or in any log a test node wrote: secrets must never be logged (issue 5).
#   scripts/check-secrets.sh BUILD_OUTPUT_FILE
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
out=${1:?usage: scripts/check-secrets.sh BUILD_OUTPUT_FILE}
env_java=src/test/java/dev/inspection/it/TestEnv.java
secrets=$(sed -n 's/.*String [A-Z_]*\(TOKEN\|PASSWORD\) = "\([^"]*\)".*/\2/p' "$env_java")
[ -n "$secrets" ] || { echo "check-secrets: cannot read the test secrets from $env_java" >&2; exit 1; }
found=0
while read -r s; do
  [ -n "$s" ] || continue
  hits=$(grep -rlF -- "$s" "$out" target/it-data target/drill 2>/dev/null || true)
  if [ -n "$hits" ]; then
    echo "check-secrets: a test secret appears in: $hits" >&2
    found=1
  fi
done <<< "$secrets"
[ "$found" -eq 0 ] && echo "check-secrets: no test secret in the build output or the test nodes' logs"
exit "$found"

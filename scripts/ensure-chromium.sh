#!/usr/bin/env bash
# Makes sure headless Chromium and its ChromeDriver are installed for the console's browser test
# (ConsoleBrowserIT): /usr/bin/chromium and /usr/bin/chromedriver, from Debian's packages
# `chromium` and `chromium-driver`. Idempotent and quick when both are present: it only checks
# the two files and prints their versions. When one is missing it runs apt-get update and
# apt-get install -y for exactly the missing package(s) and says so. Nothing is downloaded from
# anywhere but Debian's package archive (no browser build of its own, no driver download).
# Exits non-zero, with the tail of apt-get's output, when the install fails.
set -euo pipefail

export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

CHROMIUM=/usr/bin/chromium
CHROMEDRIVER=/usr/bin/chromedriver

if [ "$(id -u)" -ne 0 ] && { [ ! -x "$CHROMIUM" ] || [ ! -x "$CHROMEDRIVER" ]; }; then
  if command -v sudo >/dev/null 2>&1; then
    exec sudo -E bash "$(readlink -f "${BASH_SOURCE[0]}")" "$@"
  fi
  echo "ensure-chromium: must run as root to install chromium/chromium-driver (apt-get)" >&2
  exit 1
fi

missing=()
[ -x "$CHROMIUM" ] || missing+=(chromium)
[ -x "$CHROMEDRIVER" ] || missing+=(chromium-driver)

if [ "${#missing[@]}" -gt 0 ]; then
  log="$(mktemp /tmp/ensure-chromium.XXXXXX)"
  echo "ensure-chromium: installing ${missing[*]} (apt-get update + apt-get install -y; log $log) ..."
  if ! apt-get update >"$log" 2>&1 ||
     ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "ensure-chromium: ERROR: apt-get could not install ${missing[*]} (full output in $log)" >&2
    exit 1
  fi
  rm -f "$log"
  echo "ensure-chromium: installed ${missing[*]}"
fi

[ -x "$CHROMIUM" ] || { echo "ensure-chromium: ERROR: $CHROMIUM is still missing" >&2; exit 1; }
[ -x "$CHROMEDRIVER" ] || { echo "ensure-chromium: ERROR: $CHROMEDRIVER is still missing" >&2; exit 1; }

# Versions, for the log; a browser that cannot even print its version is reported but not fatal
# here (the test then fails with the browser's own error).
bver="$("$CHROMIUM" --headless=new --no-sandbox --version 2>/dev/null | head -n 1 || true)"
dver="$("$CHROMEDRIVER" --version 2>/dev/null | head -n 1 || true)"
echo "ensure-chromium: present: $CHROMIUM (${bver:-version unknown}), $CHROMEDRIVER (${dver:-version unknown})"

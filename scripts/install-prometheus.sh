#!/usr/bin/env bash
# Installs Debian's `prometheus` package (the server and promtool), which the metrics tests run
# against a real Pigeon. Exits 0 when both are on the machine afterwards, non-zero otherwise (the
# tests then say why they skip; .ci/run calls this first, so CI never skips them).
set -euo pipefail

have() { command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; }
if have; then exit 0; fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
  if ! command -v sudo >/dev/null 2>&1 || ! sudo -n true 2>/dev/null; then
    echo "install-prometheus: not root and no password-less sudo: cannot install Debian's prometheus package" >&2
    exit 1
  fi
  SUDO="sudo -n"
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-prometheus: no apt-get here (not Debian or Ubuntu): install prometheus and promtool yourself" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Only the binaries: the package's service is not started (no systemd in containers; tests start their own).
$SUDO apt-get install -y --no-install-recommends prometheus >/dev/null \
  || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y --no-install-recommends prometheus >/dev/null; }
have

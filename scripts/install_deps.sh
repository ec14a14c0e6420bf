#!/usr/bin/env bash
# Installs the Debian packages perfcast builds against (only those missing), plus any packages named as
# arguments (scripts/install_fuzz_deps.sh passes clang and its runtime). Needs root or sudo.
set -euo pipefail
pkgs=(build-essential cmake nlohmann-json3-dev libtomlplusplus-dev libcli11-dev libfmt-dev
      libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev libsimdjson-dev libfccp-dev libonnx-dev libprotobuf-dev
      protobuf-compiler libonnx-testdata libnlopt-dev
      chromium  # the browser tests (tests/browser/)
      libcpp-httplib-dev                         # perfcast serve (optional at build time)
      pybind11-dev python3-dev python3-matplotlib)  # import perfcast and docs/python.md (optional)
# Node and npm fetch the chart library (docs/charts.md); a machine with its own Node (npm included) keeps it.
command -v npm >/dev/null || pkgs+=(nodejs npm)
pkgs+=("$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
# The chart library embedded in the HTML pages and the browser tests' driver, at the versions package-lock.json
# pins; installed once, nothing is fetched when perfcast builds or runs. Skipped when node_modules is newer than
# the lock.
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi

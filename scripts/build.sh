#!/usr/bin/env bash
# Configures and builds the release preset: every target, or only those named, e.g.
#   scripts/build.sh perfcast          # the command-line tool alone (what scripts/run.sh needs)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
if (($#)); then
  cmake --build --preset release -j "$(nproc)" --target "$@"
else
  cmake --build --preset release -j "$(nproc)"
fi

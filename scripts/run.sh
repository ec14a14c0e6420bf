#!/usr/bin/env bash
# First command of the README: install, build the perfcast tool (not the tests or benchmarks), and run the main job
# on the built-in default.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install_deps.sh
./scripts/build.sh perfcast   # the tool only; scripts/test.sh builds the tests too
./build/release/perfcast "$@"

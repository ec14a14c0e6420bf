#!/usr/bin/env bash
# First command of the README: install, build, and run the main job on the built-in default.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install_deps.sh
./scripts/build.sh
./build/release/perfcast "$@"

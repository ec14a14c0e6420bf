#!/usr/bin/env bash
# Second command of the README: install, build, and pass all tests.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install_deps.sh
./scripts/build.sh
ctest --preset release -j "$(nproc)"

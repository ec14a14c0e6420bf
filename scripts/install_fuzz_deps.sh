#!/usr/bin/env bash
# Installs what scripts/fuzz.sh needs besides scripts/install_deps.sh: Debian's clang and its compiler runtime
# (libFuzzer, ASan, UBSan), through install_deps.sh (only those missing; needs root or sudo).
set -euo pipefail
pkgs=(clang libclang-rt-dev)
if ! dpkg-query -W -f='${Status}' libclang-rt-dev 2>/dev/null | grep -q "install ok installed"; then
  # Debian 12 names the runtime after the clang version (libclang-rt-14-dev) and has no unversioned package.
  ver=$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  pkgs=(clang "libclang-rt-${ver:-14}-dev")
fi
"$(dirname "$0")/install_deps.sh" "${pkgs[@]}"

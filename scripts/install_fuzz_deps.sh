#!/usr/bin/env bash
# Installs what scripts/fuzz.sh needs besides scripts/install_deps.sh: Debian's clang and its compiler runtime
# (libFuzzer, ASan, UBSan). Only those missing; needs root or sudo.
set -euo pipefail
pkgs=(clang libclang-rt-dev)
if ! dpkg-query -W -f='${Status}' libclang-rt-dev 2>/dev/null | grep -q "install ok installed"; then
  # Debian 12 names the runtime after the clang version (libclang-rt-14-dev) and has no unversioned package.
  ver=$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  pkgs=(clang "libclang-rt-${ver:-14}-dev")
fi
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

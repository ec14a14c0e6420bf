#!/usr/bin/env bash
# Regenerates docs/validation.md from `perfcast validate` on the published measurements.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./build/release/perfcast
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$bin validate data/validation/published.csv --markdown "$tmp/published.md" >/dev/null
$bin validate data/validation/published_scaling.csv --markdown "$tmp/scaling.md" >/dev/null
{
  cat docs/validation_intro.md
  echo
  cat "$tmp/published.md"
  echo
  echo "# Scaling set: published_scaling.csv (1 to 8 GPUs)"
  echo
  echo "Its single-GPU rows were not used to set any single-GPU constant (they are the check set of"
  echo "docs/calibration.md); the data-parallel constants were set against its multi-GPU rows"
  echo "(docs/scale-out-validation.md)."
  echo
  cat "$tmp/scaling.md"
} > docs/validation.md
echo "wrote docs/validation.md"

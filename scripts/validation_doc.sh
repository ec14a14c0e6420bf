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
  echo "# Check set: single-GPU rows of published_scaling.csv"
  echo
  echo "Not used to set any constant. Multi-GPU rows are listed as not predicted until data-parallel scaling exists."
  echo
  cat "$tmp/scaling.md"
} > docs/validation.md
echo "wrote docs/validation.md"

#!/usr/bin/env bash
# Set up, build and run the default quick suite on every device found; writes
# results/<host>-<UTC time>.json and the reports beside it: Markdown (.md) and one
# self-contained HTML page with charts (.html).
# Extra arguments go to `gpubench run` (e.g. --preset standard, --device cuda:0).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ensure_packages "${GPUBENCH_BUILD_PACKAGES[@]}"
build=$(build_preset "${GPUBENCH_PRESET:-release}" -DGPUBENCH_BUILD_TESTS=OFF)
gpubench="$build/apps/gpubench/gpubench"

cd "$GPUBENCH_ROOT"
mkdir -p results
out="results/$(hostname)-$(date -u +%Y%m%dT%H%M%SZ).json"
status=0
"$gpubench" run --preset quick --out "$out" "$@" || status=$?
if [ -f "$out" ]; then
  "$gpubench" report "$out" --format md,html --out "${out%.json}.md"
  log "results: $out"
  log "report:  ${out%.json}.md and ${out%.json}.html"
fi
exit "$status"

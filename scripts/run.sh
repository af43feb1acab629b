#!/usr/bin/env bash
# Set up, build and run the default quick suite on every device found; writes
# results/<host>-<UTC time>.json and the reports beside it: Markdown (.md) and one
# self-contained HTML page with charts (.html). The build's own output goes to
# build/<preset>.log; the console shows the run's tables and one closing line.
# Extra arguments go to `gpubench run` (e.g. --preset standard, --device cuda:0).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ensure_packages "${GPUBENCH_BUILD_PACKAGES[@]}"
preset="${GPUBENCH_PRESET:-release}"
build=$(GPUBENCH_BUILD_LOG="${GPUBENCH_BUILD_LOG:-$GPUBENCH_ROOT/build/$preset.log}" \
  build_preset "$preset" -DGPUBENCH_BUILD_TESTS=OFF)
gpubench="$build/apps/gpubench/gpubench"

cd "$GPUBENCH_ROOT"
mkdir -p results
out="results/$(hostname)-$(date -u +%Y%m%dT%H%M%SZ).json"
# The closing line names the results file and the reports (--report writes them beside it).
exec "$gpubench" run --preset quick --out "$out" --report md,html "$@"

#!/usr/bin/env bash
# Set up, build (Release; CUDA sm_80 and sm_90 so it fits CI's 2 cores) and pass the tests.
# GPUBENCH_PRESET=release tests the full architecture list instead.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ensure_packages "${GPUBENCH_BUILD_PACKAGES[@]}" "${GPUBENCH_TEST_PACKAGES[@]}"
build=$(build_preset "${GPUBENCH_PRESET:-ci}" -DGPUBENCH_BUILD_TESTS=ON)
cd "$GPUBENCH_ROOT"
ctest --test-dir "$build" --output-on-failure -j "${GPUBENCH_JOBS:-$(nproc)}"

# In CI, also fuzz the parsers for a bounded time (scripts/fuzz.sh; about a minute per target).
if [ "${CI:-}" = "true" ]; then
  "$GPUBENCH_ROOT/scripts/fuzz.sh"
fi

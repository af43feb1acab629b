#!/usr/bin/env bash
# Builds gpubench as on a machine without the CUDA Toolkit (GPUBENCH_WITH_CUDA off; docs/no-cuda.md),
# with this machine's toolkits hidden:
#   scripts/nocuda.sh build [DIR]   configure and build every target in DIR (default build/nocuda);
#                                   prints DIR
#   scripts/nocuda.sh test          CI's stage: the build, then the tests that differ without CUDA
#                                   (NoCudaBuild.*: version, list, run, doctor, the instruments and a
#                                   results file through report/compare/history) and the commands
#                                   that read results files (report, compare, history, scaling, serving e2e);
#                                   the CPU logic stage 1 tested is not run again
# /usr/local/cuda-* (and what /usr/local/include, /usr/local/lib and /usr/local/bin reach through
# them) become empty folders in a private mount namespace (unshare -m), as scripts/cuda12.sh hides
# CUDA 13; CMake then finds no CUDA compiler and says "CUDA: OFF (no CUDA compiler found)", which
# the test stage checks. GPUBENCH_JOBS sets the parallel jobs (default: every core).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

read_build_test_command 16 "$@"
shift

# Re-run this script in a mount namespace where every CUDA toolkit is an empty folder.
if [ -z "${GPUBENCH_CUDA_HIDDEN:-}" ]; then
  toolkits=()
  for d in /usr/local/cuda-*; do
    [ -d "$d" ] && [ ! -L "$d" ] && toolkits+=("$d")
  done
  if [ ${#toolkits[@]} -gt 0 ]; then
    log "hiding ${toolkits[*]}: building without CUDA"
    rerun_with_dirs_hidden GPUBENCH_CUDA_HIDDEN "${toolkits[@]}" -- "$cmd" "$@" ||
      die "cannot make a mount namespace to hide ${toolkits[*]}"
  fi
fi
unset CUDACXX CUDA_HOME CUDA_PATH CUDAToolkit_ROOT

nocuda_build() {  # DIR [cmake args...]
  local dir="$1"; shift
  ensure_packages "${GPUBENCH_BUILD_PACKAGES[@]}"
  use_ccache
  (cd "$GPUBENCH_ROOT" &&
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$dir.configure.log" 2>&1 &&
    cmake --build "$dir" -j "${GPUBENCH_JOBS:-$(nproc)}" ${GPUBENCH_TARGETS:+--target $GPUBENCH_TARGETS} >&2) ||
    { cat "$dir.configure.log" >&2 2>/dev/null; die "build without CUDA failed ($dir)"; }
  grep -q 'CUDA: OFF' "$dir.configure.log" ||
    die "CMake found a CUDA compiler although the toolkits are hidden: $(grep -m1 'CUDA' "$dir.configure.log")"
  echo "$dir"
}

case "$cmd" in
  build)
    dir="${1:-$GPUBENCH_ROOT/build/nocuda}"
    mkdir -p "$(dirname "$dir")"
    nocuda_build "$dir"
    ;;
  test)
    ensure_packages "${GPUBENCH_TEST_PACKAGES[@]}"
    start=$(date +%s)
    # The binary (every command) and the end-to-end tests that drive it; the unit tests test CPU
    # logic that stage 1 tested (`scripts/nocuda.sh build` builds them too).
    dir=$(GPUBENCH_TARGETS="gpubench gpubench_e2e_tests" nocuda_build "$GPUBENCH_ROOT/build/nocuda" -DGPUBENCH_BUILD_TESTS=ON)
    version=$("$dir/apps/gpubench/gpubench" version | sed -n 2p)
    grep -q 'not built with CUDA' <<<"$version" || die "the build without CUDA does not say so: $version"
    # (The reference table's selectors are checked against GPU plans in stage 1: its collectives
    # rows need the NCCL build.)
    ctest --test-dir "$dir" --output-on-failure -j "${GPUBENCH_JOBS:-$(nproc)}" \
      -R '^(NoCudaBuild|ReportCli|ScalingCli|ServingCli|CompareClock|PlausibilityCli|ReferenceCli)\.|^(include_direction|openmetrics_parses)$' \
      -E '^ReferenceCli\.EverySelectorMatchesACaseGpubenchCanRunOnThatGpu$'
    log "build without CUDA passed in $(( $(date +%s) - start )) s ($version)"
    ;;
esac

#!/usr/bin/env bash
# Build the libFuzzer targets (tests/fuzz: clang, AddressSanitizer + UndefinedBehaviorSanitizer)
# and run each for a bounded time over its seed corpus in tests/fuzz/corpus/<target>/.
# Exits non-zero on any finding: a crash, a sanitizer report, an exception other than the
# expected UsageError, a broken promise, a timeout or running out of memory. The input that
# caused it is kept in build/fuzz/findings/; `build/fuzz/fuzz_<target> FILE` replays it.
#
#   FUZZ_SECONDS   seconds per target (default 60)
#   FUZZ_TARGETS   targets to run (default "axis cli results_reader compare")
#   FUZZ_JOBS      targets run at once (default: GPUBENCH_JOBS, else every core)
#   FUZZ_REACH=1   build every source sanitized and instrumented (build/fuzz-reach), fuzz with
#                  libFuzzer's -print_coverage=1 and check that no source the fuzz build leaves
#                  plain (GPUBENCH_FUZZ_NEVER_REACHED in tests/fuzz/CMakeLists.txt) was reached
# Extra arguments go to every fuzzer (libFuzzer flags, e.g. -jobs=2 or -dict=FILE).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

seconds="${FUZZ_SECONDS:-60}"
targets="${FUZZ_TARGETS:-axis cli results_reader compare}"

ensure_packages "${GPUBENCH_BUILD_PACKAGES[@]}" clang
# libFuzzer and the sanitizer runtimes: part of clang up to LLVM 14 on some distributions,
# libclang-rt-dev (Debian 12, Ubuntu 24.04) on others.
fuzzer_links() {
  local probe
  probe="$(mktemp -d)"
  printf 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }\n' > "$probe/p.cpp"
  clang++ -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" >/dev/null 2>&1
  local rc=$?
  rm -rf "$probe"
  return $rc
}
if ! fuzzer_links; then
  ensure_packages libclang-rt-dev
  fuzzer_links || die "clang++ cannot link -fsanitize=fuzzer,address,undefined: install libFuzzer (libclang-rt-dev)"
fi
GPUBENCH_REQUIRE_CUDA=1 find_cuda  # cudart headers and library (host code only: nvcc compiles nothing here)

build="$GPUBENCH_ROOT/build/fuzz"
reach_args=()
if [ "${FUZZ_REACH:-}" = 1 ]; then
  build="$GPUBENCH_ROOT/build/fuzz-reach"
  reach_args=(-DGPUBENCH_FUZZ_INSTRUMENT_ALL=ON)
  set -- -print_coverage=1 "$@"
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache) && use_ccache
cmake -S "$GPUBENCH_ROOT/tests/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" "${reach_args[@]}" >&2 ||
  die "fuzzer configuration failed"
cmake --build "$build" -j "${GPUBENCH_JOBS:-$(nproc)}" >&2 || die "fuzzer build failed"

findings="$build/findings"
mkdir -p "$findings"
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# One fuzzer per core at a time (libFuzzer's process is single-threaded): on CI's 2 cores the four
# targets take two rounds of FUZZ_SECONDS, not four, with the same time for each target.
jobs="${FUZZ_JOBS:-${GPUBENCH_JOBS:-$(nproc)}}"
fuzz_one() {  # TARGET [libFuzzer args]: exit status 0 when it found nothing
  local t="$1"; shift
  local corpus="$GPUBENCH_ROOT/tests/fuzz/corpus/$t" scratch log="$build/fuzz_$t.log" rc=0
  # New inputs go to a scratch folder: the seed corpus in the tree stays as committed.
  scratch="$(mktemp -d)"
  "$build/fuzz_$t" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/$t-" "$@" "$scratch" "$corpus" >"$log" 2>&1 || rc=$?
  rm -rf "$scratch"
  return $rc
}
declare -A pids=()
for t in $targets; do
  [ -d "$GPUBENCH_ROOT/tests/fuzz/corpus/$t" ] || die "no seed corpus $GPUBENCH_ROOT/tests/fuzz/corpus/$t"
done
log "fuzzing $targets for ${seconds}s each, $jobs at a time (logs: $build/fuzz_<target>.log)"
for t in $targets; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$t" "$@" &
  pids[$t]=$!
done
failed=()
for t in $targets; do
  log="$build/fuzz_$t.log"
  if wait "${pids[$t]}"; then
    log "$t: no findings ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?') inputs)"
  else
    failed+=("$t")
    log "$t: FINDING; the input is in $findings/, the end of the log follows"
    grep -v '^0x' "$log" | tail -n 40 >&2
  fi
done
[ ${#failed[@]} -eq 0 ] || die "fuzzers with findings: ${failed[*]}"
if [ "${FUZZ_REACH:-}" = 1 ]; then
  python3 "$GPUBENCH_ROOT/scripts/fuzz-reach.py" "$build" $targets || die "a source the fuzz build leaves plain was reached"
fi
log "fuzzing: no findings"

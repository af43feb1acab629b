#!/usr/bin/env bash
# scripts/gpu-smoke.sh --dry-run through the real binaries (no GPU needed):
#   - planned for an H200: every step of the script's table is listed, the closing line is
#     "planned: N cases, about S s" with N > 0 and S < 420 (one device call: 15 minutes of device time hold a start of a few minutes and this; 420 since soak, sweeps, tuning and data-parallel steps joined),
#     Hopper's wgmma and mma peaks are planned to run (none skipped), and no step failed to plan;
#   - planned for an A100: wgmma is planned as skipped (the plan follows the named model);
#   - bad usage exits 2.
#   test_gpu_smoke_dry_run.sh GPUBENCH_BINARY PERF_DIR
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
export GPUBENCH="$1" GPUBENCH_PERF_DIR="$2"
smoke="$root/scripts/gpu-smoke.sh"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

out=$("$smoke" --dry-run --assume h200 2>"${TMPDIR:-/tmp}/smoke-dry-run.err"); rc=$?
err=$(cat "${TMPDIR:-/tmp}/smoke-dry-run.err"); rm -f "${TMPDIR:-/tmp}/smoke-dry-run.err"
echo "$out"
[ -z "$err" ] || echo "stderr: $err"
[ "$rc" = 0 ] || fail "exit status $rc"
[ -z "$err" ] || fail "the dry run wrote to stderr (a step could not be planned?)"
last=$(tail -n1 <<<"$out")
if [[ "$last" =~ ^planned:\ ([0-9]+)\ cases,\ about\ ([0-9]+)\ s$ ]]; then
  cases=${BASH_REMATCH[1]} seconds=${BASH_REMATCH[2]}
  [ "$cases" -gt 100 ] || fail "only $cases cases planned"
  [ "$seconds" -lt 420 ] || fail "$seconds s planned for an H200: over the 420 s budget"
else
  fail "last line is not 'planned: N cases, about S s': $last"
fi
# Every step of the table appears once.
names=$(sed -n '/^steps() {/,/^STEPS$/p' "$smoke" | awk 'NF >= 2 && $1 !~ /^#/ && $1 != "steps()" && $1 != "cat" {print $2}')
[ "$(wc -l <<<"$names")" -gt 30 ] || fail "could not read the step table"
for n in $names; do
  grep -q "^$n " <<<"$out" || fail "step $n is not in the plan"
done
# Hopper must run these: no case of them planned as skipped.
for n in memory-peak gemm-custom-tc gemm-custom-rect; do
  line=$(grep "^$n " <<<"$out")
  [[ "$line" =~ \ 0\ skipped ]] || fail "$n plans skipped cases on an H200: $line"
done
grep -q '^memory-peak .* 10 cases ' <<<"$out" || fail "memory-peak does not plan its 10 peaks"
# The timer-ratio pair times triad out of any L2 (issue 25 item 4): at least 128 MiB per array
# (3 arrays: 384 MiB a kernel, >= 100 us at 4.8 TB/s, 7x an H200's 50 MiB L2).
for n in profile-cupti profile-event; do
  size=$(sed -n "s/^run *$n .*--axis size=\([0-9]*\)M.*/\1/p" "$smoke")
  [ -n "$size" ] && [ "$size" -ge 128 ] || fail "$n times triad at ${size:-?} MiB per array: inside or near L2"
done
# Multi-GPU steps are skipped on a one-GPU plan, with the reason.
grep -q '^coll-multi .*needs 2 GPUs, 1 here' <<<"$out" || fail "coll-multi is not skipped for one GPU"

# The plan follows the model: an A100 has no wgmma.
a100=$("$smoke" --dry-run --assume a100-sxm-80gb --only '^gemm-custom-tc$' 2>&1) || fail "a100 plan failed: $a100"
grep -Eq '^gemm-custom-tc +run +4 cases +2 skipped' <<<"$a100" || fail "the A100 plan does not skip wgmma: $a100"

# Bad usage.
"$smoke" --assume h200 >/dev/null 2>&1; [ $? = 2 ] || fail "--assume without --dry-run is not a usage error"
"$smoke" --dry-run --bogus >/dev/null 2>&1; [ $? = 2 ] || fail "an unknown argument is not a usage error"
bad=$("$smoke" --dry-run --assume not-a-gpu 2>&1); [ $? = 2 ] || fail "an unknown model does not exit 2: $bad"

[ "$failures" = 0 ] && echo "gpu-smoke dry run: all checks passed" || { echo "gpu-smoke dry run: $failures check(s) failed"; exit 1; }

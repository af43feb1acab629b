#!/usr/bin/env bash
# scripts/gpu-smoke.sh --dry-run through the real binaries (no GPU needed):
#   - planned for an H200: every step of the script's table is listed, the closing line is
#     "planned: N cases, about S s" with N > 0, each part's plan ("part P: ... about S s") fits
#     its call of the two-call recipe in docs/gpu-hosts.md (the --time-limit of each), Hopper's
#     wgmma and mma peaks are planned to run (none skipped), and no step failed to plan;
#   - the allowances for what gpubench's plans leave out (issue 41 item 5) are in the plan: the
#     Llama 3 layers' host verification (20 s per fp8 case), the serve traces' arrivals, cuDNN
#     graphs, a preset's cases (quick above its measured 59-67 s on the H200);
#   - the steps no GPU has run come first, in part 1, the paths the H200 run passed after them;
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
  cases=${BASH_REMATCH[1]}
  [ "$cases" -gt 100 ] || fail "only $cases cases planned"
else
  fail "last line is not 'planned: N cases, about S s': $last"
fi
# Each part fits its call: the recipe's --time-limit for it, read from docs/gpu-hosts.md.
doc="$root/docs/gpu-hosts.md"
# Where libcudnn does not load (CI's CUDA 12.4 stage hides it), the cuDNN steps plan as skips and
# the totals differ from the docs', which are for a build where it loads (as on a GPU host).
cudnn_here=1
grep -Eq '^attention-fp8 +run +0 cases' <<<"$out" && cudnn_here=0
[ $cudnn_here = 1 ] || echo "note: libcudnn does not load here: the cuDNN allowances and the docs' part totals are not checked"
for p in 1 2; do
  limit=$(sed -n "s/.*gpu-smoke.sh --part $p .*--time-limit \([0-9]*\).*/\1/p" "$doc" | sed -n 1p)
  [ -n "$limit" ] || { fail "docs/gpu-hosts.md has no call running --part $p with a --time-limit"; continue; }
  line=$(grep "^part $p: " <<<"$out")
  if [[ "$line" =~ ^part\ $p:\ [0-9]+\ steps,\ [0-9]+\ cases,\ about\ ([0-9]+)\ s$ ]]; then
    [ "${BASH_REMATCH[1]}" -le "$limit" ] || fail "part $p plans ${BASH_REMATCH[1]} s, over its call's --time-limit $limit"
    # The docs' figure is the CUDA 13 build's; another toolkit plans a few steps otherwise
    # (block-scaled GEMM needs 12.8), so it must agree within 5% (at least 10 s).
    planned=${BASH_REMATCH[1]}
    stated=$(grep -o "part $p plans about [0-9]* s" "$doc" | grep -o '[0-9]* s$' | grep -o '[0-9]*' | sed -n 1p)
    if [ $cudnn_here = 1 ]; then
      if [ -z "$stated" ]; then
        fail "docs/gpu-hosts.md does not say what part $p plans ('part $p plans about N s')"
      elif [ $(( (planned > stated ? planned - stated : stated - planned) * 20 )) -gt $(( planned > 200 ? planned : 200 )) ]; then
        fail "docs/gpu-hosts.md says part $p plans about $stated s; it plans $planned s"
      fi
    fi
  else
    fail "no 'part $p: N steps, M cases, about S s' line: $line"
  fi
done
# The allowances: what gpubench's own plans leave out, added and named on the step's line.
grep -Eq '^infer-fp8 .*\+[0-9.]+ s: .*4 x Llama 3 fp8 verification \(80.0 s\)' <<<"$out" ||
  fail "infer-fp8 plans no fp8 verification allowance: $(grep '^infer-fp8 ' <<<"$out")"
grep -Eq '^infer-8b-layer .*8 x Llama 3 verification' <<<"$out" || fail "infer-8b-layer: no verification allowance"
grep -Eq '^infer-serve .*1 x serve trace \(3.0 s\)' <<<"$out" || fail "infer-serve: no arrivals allowance (16 requests at 16/s + 2 s)"
if [ $cudnn_here = 1 ]; then
  grep -Eq '^attention-fp8 .*2 x cuDNN attention case' <<<"$out" || fail "attention-fp8: no cuDNN graph allowance"
  grep -Eq '^train-paths .*fused train step' <<<"$out" || fail "train-paths: no fused-attention graph allowance"
fi
grep -Eq '^train-largest .*largest-batch search' <<<"$out" || fail "train-largest: no search allowance"
quick=$(grep '^quick ' <<<"$out")
grep -q 'preset case' <<<"$quick" && grep -q 'serve trace' <<<"$quick" || fail "quick: no preset or serve allowance: $quick"
[[ "$quick" =~ about\ +([0-9]+)\.[0-9]\ s ]] && [ "${BASH_REMATCH[1]}" -ge 67 ] ||
  fail "quick plans under the 67 s the H200 took for fewer cases: $quick"
# The never-run steps come first (after doctor), in part 1; the first step of part 2 after them all.
order=$(awk 'NF >= 2 && $1 != "gpu-smoke" && $1 != "part" && $1 != "planned:" {print $1}' <<<"$out")
first_run="attention-fp8 train-fp8 train-paths train-plain train-dp train-largest infer-small infer-8b-layer infer-serve infer-fp8 infer-fp8-serve gemm-grouped memory-patterns coll-exchange coll-per-iter peer-chase dataload-nvjpeg mamf-bf16"
last_new=0
for n in $first_run; do
  at=$(grep -nx "$n" <<<"$order" | cut -d: -f1)
  [ -n "$at" ] || { fail "never-run step $n is not in the plan"; continue; }
  [ "$at" -gt "$last_new" ] && last_new=$at
done
first_old=$(grep -nx -E 'gemm-cublas|memory-bandwidth|quick|soak|datagen|coll-ops|train-mlp' <<<"$order" | sed -n 1p | cut -d: -f1)
[ "$last_new" -lt "${first_old:-0}" ] || fail "a never-run step comes after a path the H200 passed (line $last_new vs $first_old)"
[ "$(head -n1 <<<"$order")" = doctor ] || fail "the plan does not start with doctor: $(head -n1 <<<"$order")"
part1=$("$smoke" --dry-run --assume h200 --part 1 2>&1) || fail "--part 1 plan failed"
for n in $first_run report; do grep -q "^$n " <<<"$part1" || fail "--part 1 lacks $n"; done
grep -q '^gemm-cublas \|^quick ' <<<"$part1" && fail "--part 1 holds a part-2 step"
"$smoke" --dry-run --part 4 >/dev/null 2>&1; [ $? = 2 ] || fail "--part 4 (there are three) is not a usage error"
# Every step of the table appears once.
names=$(sed -n '/^steps() {/,/^STEPS$/p' "$smoke" | awk 'NF >= 2 && $1 !~ /^#/ && $1 != "steps()" && $1 != "cat" && $1 != "PART" {print $2}')
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

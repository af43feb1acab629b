#!/usr/bin/env bash
# scripts/gpu-smoke.sh's real-run path (not the dry run) on a stand-in GPU host
# (tests/scripts/fake_gpu_host: gpubench, the perf peers, compute-sanitizer and nvidia-smi that
# write what the real ones would): every step runs and is checked from its files, the table
# ends PASSED, results/ holds results files only (the tuning cache lives in aux/), each results
# file has its report; a suspect entry or a failed case fails its step and the run (exit 1);
# a step cut by --time-limit is SKIP (out of time) with its finished cases kept; --part 1 runs
# doctor, then the never-run steps first; perf/gpu_goals.sh --smoke reuses the smoke's cases.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
fake="$root/tests/scripts/fake_gpu_host"
export PATH="$fake:$PATH" GPUBENCH="$fake/gpubench" GPUBENCH_PERF_DIR="$fake"
smoke="$root/scripts/gpu-smoke.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$smoke" --out "$work/pass" >"$work/pass.log" 2>&1; rc=$?
sed -n '/^step /,$p' "$work/pass.log"
[ "$rc" = 0 ] || { fail "exit status $rc on a passing host"; tail -n 40 "$work/pass.log"; }
grep -q 'PASSED$' <<<"$(tail -n1 "$work/pass.log")" || fail "no PASSED line"
steps=$(sed -n '/^steps() {/,/^STEPS$/p' "$smoke" | awk 'NF >= 2 && $1 !~ /^#/ && $1 != "steps()" && $1 != "cat" && $1 != "PART" {print $2}')
for n in $steps; do
  row=$(grep "^$n " <<<"$(sed -n '/^step /,$p' "$work/pass.log")")
  [ -n "$row" ] || { fail "step $n has no row"; continue; }
  [[ "$row" == *" PASS "* || "$row" == *" PASS" || "$row" == *" SKIP needs 2 GPUs, 1 here" ]] || fail "step $n: $row"
done
extra=$(cd "$work/pass/results" && ls | grep -v '\.json$'); [ -z "$extra" ] || fail "results/ holds other files: $extra"
[ -f "$work/pass/aux/gemm-tune.json" ] || fail "the tuning cache is not in aux/"
[ ! -e "$work/pass/results/gemm-tune.json" ] || fail "the tuning cache is among the results"
for f in "$work/pass/results"/*.json; do
  [ -f "$work/pass/reports/$(basename "${f%.json}").md" ] || fail "no report of $(basename "$f")"
done
grep -q '^peer memcpy d2d .* gpubench/bare 0.962 ok$' "$work/pass.log" || fail "no memcpy peer ratio printed"
grep -q '^peer chase host_device_latency: .* gpubench/bare 1.020 ok$' "$work/pass.log" || fail "no pointer-chase peer ratio printed"

# A suspect figure fails its step and the run.
FAKE_SUSPECT=gemm-llm "$smoke" --out "$work/suspect" --only '^(gemm-llm|report)$' >"$work/suspect.log" 2>&1; rc=$?
[ "$rc" = 1 ] || fail "a suspect entry: exit $rc, expected 1"
grep -Eq '^gemm-llm +run +1 +0 +0 .* FAIL' "$work/suspect.log" || fail "gemm-llm is not FAIL: $(grep '^gemm-llm' "$work/suspect.log")"
grep -q 'suspect: above the datasheet peak (fake)' "$work/suspect/logs/gemm-llm.log" || fail "the suspect reason is not in the log"
grep -q 'FAILED (1 step(s))$' <<<"$(tail -n1 "$work/suspect.log")" || fail "no FAILED line: $(tail -n1 "$work/suspect.log")"

# A failed case (exit 1 and a failed entry) fails its step, with its reason shown.
FAKE_FAIL=coll-ops "$smoke" --out "$work/failed" --only '^coll-ops$' >"$work/failed.log" 2>&1; rc=$?
[ "$rc" = 1 ] || fail "a failed case: exit $rc, expected 1"
grep -Eq '^coll-ops +run +1 +0 +1 .* FAIL' "$work/failed.log" || fail "coll-ops row: $(grep '^coll-ops' "$work/failed.log")"
grep -q 'failed: verification failed: 3 entries differ' "$work/failed.log" || fail "the failure's reason is not shown"

# A case the plan ran that turned into a skip (exit 0, no failed entry) fails its step (issue 25
# item 3: a path that silently skipped must not pass).
FAKE_SKIP=gemm-tuned "$smoke" --out "$work/skip" --only '^gemm-tuned$' >"$work/skip.log" 2>&1; rc=$?
[ "$rc" = 1 ] || fail "an unexpected skip: exit $rc, expected 1"
grep -Eq '^gemm-tuned +run +1 +1 +0 .* FAIL' "$work/skip.log" || fail "gemm-tuned row: $(grep '^gemm-tuned' "$work/skip.log")"
grep -q 'unexpected skip: .*CUBLAS_STATUS_NOT_SUPPORTED' "$work/skip/logs/gemm-tuned.log" || fail "the unexpected skip is not named in the log"

grep -q '^ratio memory m=256 provider=cublas: .* = 1.000 (expected 0.9..1.02) ok$' "$work/pass.log" || fail "no timer ratio printed"

# A ratio outside its range (the non-blocking communicator twice as slow) fails its step.
FAKE_SLOW=coll-nonblocking "$smoke" --out "$work/slow" --only '^(coll-nonblocking|coll-blocking|nccl-nb-ratio)$' >"$work/slow.log" 2>&1; rc=$?
[ "$rc" = 1 ] || fail "a ratio out of range: exit $rc, expected 1"
grep -Eq '^nccl-nb-ratio +ratio +0 +0 +[1-9].* FAIL' "$work/slow.log" || fail "nccl-nb-ratio row: $(grep '^nccl-nb-ratio' "$work/slow.log")"
grep -q '= 2.000 (expected 0.8..1.25) FAIL$' "$work/slow.log" || fail "the out-of-range ratio is not shown"

# --time-limit: a step whose plan does not fit in what is left is not started; the table still
# comes, and the run ends INCOMPLETE (exit 1), never PASSED.
"$smoke" --out "$work/short" --time-limit 20 --only '^(gemm-cublas|soak|report)$' >"$work/short.log" 2>&1; rc=$?
[ "$rc" = 1 ] || fail "a run cut short by --time-limit: exit $rc, expected 1"
grep -Eq '^gemm-cublas +run .* PASS' "$work/short.log" || fail "gemm-cublas row: $(grep '^gemm-cublas' "$work/short.log")"
grep -Eq '^soak +soak .* SKIP out of time: [0-9]+ s of --time-limit left$' "$work/short.log" || fail "soak row: $(grep '^soak' "$work/short.log")"
grep -Eq '^report +report .* PASS' "$work/short.log" || fail "report row: $(grep '^report' "$work/short.log")"
grep -q 'INCOMPLETE (1 step(s) out of time)$' <<<"$(tail -n1 "$work/short.log")" || fail "no INCOMPLETE line: $(tail -n1 "$work/short.log")"
"$smoke" --time-limit 0 >/dev/null 2>&1; [ $? = 2 ] || fail "--time-limit 0 is not a usage error"

# A step still running when --time-limit runs out is stopped and is SKIP (out of time), never
# FAIL: its finished cases are kept and counted; the next step is not started (issue 41 item 5).
FAKE_HANG=gemm-cublas "$smoke" --out "$work/cut" --time-limit 8 --only '^(gemm-cublas|gemm-cublaslt)$' >"$work/cut.log" 2>&1; rc=$?
[ "$rc" = 1 ] || fail "a step cut by --time-limit: exit $rc, expected 1 (INCOMPLETE)"
grep -Eq '^gemm-cublas +run +1 +0 +0 .* SKIP out of time: stopped at --time-limit after [0-9.]+ s$' "$work/cut.log" ||
  fail "the cut step is not SKIP out of time: $(grep '^gemm-cublas' "$work/cut.log")"
grep -Eq '^gemm-cublaslt +run .* SKIP out of time: [0-9]+ s of --time-limit left$' "$work/cut.log" || fail "gemm-cublaslt row: $(grep '^gemm-cublaslt' "$work/cut.log")"
grep -q 'INCOMPLETE (2 step(s) out of time)$' <<<"$(tail -n1 "$work/cut.log")" || fail "no INCOMPLETE line: $(tail -n1 "$work/cut.log")"
grep -q 'FAIL' <<<"$(sed -n '/^step /,$p' "$work/cut.log")" && fail "a cut step reads FAIL"
# A case that failed before the cut still fails the step.
FAKE_HANG=coll-ops FAKE_FAIL=coll-ops "$smoke" --out "$work/cutfail" --time-limit 8 --only '^coll-ops$' >"$work/cutfail.log" 2>&1; rc=$?
[ "$rc" = 1 ] || fail "a failed case before the cut: exit $rc"
grep -Eq '^coll-ops +run +1 +0 +1 .* FAIL' "$work/cutfail.log" || fail "coll-ops (failed, then cut): $(grep '^coll-ops' "$work/cutfail.log")"
# Not tested here: a step stopped by its own limit (ten times its plan, 120 s at least) with no
# --time-limit stays a FAIL; waiting for it would cost the test two minutes.

# --part: part 1 runs the never-run steps and the report; part 2 the rest and the report.
"$smoke" --out "$work/part1" --part 1 >"$work/part1.log" 2>&1; rc=$?
[ "$rc" = 0 ] || fail "--part 1: exit $rc"
table1=$(sed -n '/^step /,$p' "$work/part1.log")
for n in attention-fp8 infer-fp8 peer-chase mamf-bf16 report; do grep -q "^$n .* PASS" <<<"$table1" || fail "--part 1: $n is not PASS"; done
grep -q '^gemm-cublas \|^quick ' <<<"$table1" && fail "--part 1 ran a part-2 step"
[ "$(sed -n 2p <<<"$table1" | awk '{print $1}')" = doctor ] && [ "$(sed -n 3p <<<"$table1" | awk '{print $1}')" = attention-fp8 ] ||
  fail "the table does not start with doctor, attention-fp8: $(sed -n 2,3p <<<"$table1")"

# perf/gpu_goals.sh --smoke DIR: the infer step's cases are the smoke's quick step's: reused, not run.
GPUBENCH="$fake/gpubench" "$root/perf/gpu_goals.sh" --out "$work/goals" --smoke "$work/pass" >"$work/goals.log" 2>&1
grep -q '^gpu_goals.sh: infer: all 3 cases reused from quick.json' "$work/goals.log" || { fail "goals did not reuse quick's infer cases"; cat "$work/goals.log"; }
grep -q '^gpu_goals.sh: memory: runs (' "$work/goals.log" || fail "goals' memory step (not in the smoke) did not run"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert [b['gpubench']['axes']['phase'] for b in d['benchmarks']] == ['prefill','decode','serve'], d" \
  "$work/goals/infer.json" || fail "goals' infer.json does not hold the smoke's entries"
FAKE_SKIP=quick "$smoke" --out "$work/pass2" --only '^quick$' >/dev/null 2>&1
GPUBENCH="$fake/gpubench" "$root/perf/gpu_goals.sh" --out "$work/goals2" --smoke "$work/pass2" >"$work/goals2.log" 2>&1
grep -q '^gpu_goals.sh: infer: runs (1 of 3 cases not ok in' "$work/goals2.log" || { fail "a case missing from the smoke was not run again"; cat "$work/goals2.log"; }
GPUBENCH="$fake/gpubench" "$root/perf/gpu_goals.sh" --smoke "$work/nowhere" >/dev/null 2>&1; [ $? = 2 ] || fail "--smoke without results/ is not a usage error"

[ "$failures" = 0 ] && echo "gpu-smoke on a stand-in host: all checks passed" || { echo "gpu-smoke on a stand-in host: $failures check(s) failed"; exit 1; }

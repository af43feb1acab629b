#!/usr/bin/env bash
# scripts/smoke_check.py against fixture files (tests/fixtures/smoke), passing and failing ones:
# each case states the exit status and a line the output must hold.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
check="$root/scripts/smoke_check.py"
fx="$root/tests/fixtures/smoke"
off=(--expect-off "metrics=^insufficient privileges for GPU performance counters")
failures=0
expect() {  # STATUS PATTERN ARGS...: smoke_check.py ARGS exits STATUS and prints a line matching PATTERN
  local want="$1" pattern="$2"; shift 2
  local out rc
  out=$(python3 "$check" "$@" 2>&1); rc=$?
  if [ "$rc" != "$want" ] || ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL: smoke_check.py $* -> exit $rc (expected $want), output:"; echo "$out" | sed 's/^/    /'
    echo "    (expected a line matching: $pattern)"
    failures=$((failures + 1))
  else
    echo "ok: $* -> $rc"
  fi
}
# Results files.
expect 0 '^counts: ok=2 skipped=2 failed=0$' results "$fx/results_ok.json" "${off[@]}" --require-on telemetry
expect 1 'suspect: 312 TFLOP/s is 118%' results "$fx/results_suspect.json" "${off[@]}"
expect 1 'failed: loss is NaN at step 1' results "$fx/results_failed.json" "${off[@]}"
expect 1 '^counts: ok=2 skipped=2 failed=1$' results "$fx/results_failed.json" "${off[@]}"
expect 1 'custom:wgmma on compute capability 9.0 must be ok, is skipped' results "$fx/results_wgmma_skipped.json" "${off[@]}"
expect 0 '^counts: ok=1 skipped=3 failed=0$' results "$fx/results_wgmma_skipped_sm80.json" "${off[@]}"
expect 1 'mma_fp8 peak on compute capability 9.0 must be ok' results "$fx/results_mma_skipped.json" "${off[@]}"
expect 1 "instrument telemetry must be on, is 'off: NVML unavailable" results "$fx/results_telemetry_off.json" "${off[@]}" --require-on telemetry
expect 1 "instrument metrics: 'off: CUPTI failed: CUPTI_ERROR_UNKNOWN' is not an expected state" results "$fx/results_metrics_unexpected_off.json" "${off[@]}"
# An off reason not listed is a failure, also for the permission one when it is not listed.
expect 1 "instrument metrics: 'off: insufficient privileges" results "$fx/results_ok.json"
expect 1 'instrument trace must be on, is absent' results "$fx/results_ok.json" "${off[@]}" --require-on telemetry,trace
expect 1 'only 2 case\(s\) ran ok, expected at least 3' results "$fx/results_ok.json" "${off[@]}" --min-cases 3
# Issue 30: an ok block-scaled GEMM (mxfp8/nvfp4) carries a passed verification and both figures
# (synthetic B200 fixtures: no Blackwell has been lent).
expect 0 '^counts: ok=2 skipped=0 failed=0$' results "$fx/results_blockscaled_ok.json" "${off[@]}"
expect 1 'dtype=nvfp4/.*block-scaled GEMM without tflops_with_quantize in its metrics' results "$fx/results_blockscaled_one_figure.json" "${off[@]}"
# Issue 25 item 3: the plan ran N cases; a skip it did not expect fails the step unless its
# reason is on the allow-list (SKIP_ALLOWED, --allow-skip).
expect 0 '^counts: ok=2 skipped=2 failed=0$' results "$fx/results_ok.json" "${off[@]}" --planned 2 --planned-skipped 2
expect 1 'unexpected skip: train/model:transformer/precision:bf16-amp/dp:ddp/device:cuda:0: cuBLASLt: CUBLAS_STATUS_NOT_SUPPORTED' results "$fx/results_unexpected_skip.json" "${off[@]}" --planned 3 --planned-skipped 2
expect 0 '^counts: ok=2 skipped=3 failed=0$' results "$fx/results_unexpected_skip.json" "${off[@]}" --planned 3 --planned-skipped 2 --allow-skip 'NOT_SUPPORTED'
expect 0 '^counts: ok=2 skipped=3 failed=0$' results "$fx/results_allowed_skip.json" "${off[@]}" --planned 3 --planned-skipped 2
expect 1 'the file holds 4 entries of the 6 planned' results "$fx/results_ok.json" "${off[@]}" --planned 4 --planned-skipped 2
expect 2 'No such file' results "$fx/does_not_exist.json"
expect 2 'expected INSTRUMENT=REGEX' results "$fx/results_ok.json" --expect-off metrics
# ratio: cases matched by suite, device and axes (a case skipped in one file is left out).
expect 0 'ratio collectives op=all_reduce size=67108864 graph=0: 440.00 us / 400.00 us = 1.100 \(expected 0.8..1.25\) ok$' ratio "$fx/coll_nonblocking.json" "$fx/coll_blocking.json" 0.8 1.25
expect 1 'ratio collectives op=all_reduce size=8 graph=0: .* = 1.500 \(expected 0.8..1.25\) FAIL$' ratio "$fx/coll_nonblocking_slow.json" "$fx/coll_blocking.json" 0.8 1.25
expect 1 'problem: no case is ok in both' ratio "$fx/ratio_unrelated.json" "$fx/coll_blocking.json" 0.8 1.25
expect 2 'invalid float value' ratio "$fx/coll_nonblocking.json" "$fx/coll_blocking.json" low 1.25
# soak and tuning files.
expect 0 '^sweep 80%: on' soak "$fx/soak_ok.json" --sweep 2
expect 1 'problem: verdict: .*throughput dropped 8.1%' soak "$fx/soak_failed.json"
expect 0 'sweep: changing the limit was refused' soak "$fx/soak_refused.json" --sweep 2
expect 1 'problem: sweep: expected 3 points all on, got 2' soak "$fx/soak_ok.json" --sweep 3
expect 1 'cuda:0: 4 samples with a rate, expected at least 10' soak "$fx/soak_short.json"
expect 1 'problem: no gpubench.soak' soak "$fx/results_ok.json"
expect 0 '^tuning train: recommended .*"micro_batch": 8.*speed-up 2.5' tuning "$fx/tuning_train.json" --target train
expect 1 'problem: recommended: \{"workers": 0\}' tuning "$fx/tuning_dataload_bad.json" --target dataload
expect 0 '^decode_gpu hw_load=0: 2510 images/s, 0.31 host cores, p99 batch 14.20 ms' tuning "$fx/tuning_dataload_gpu.json" --target dataload
expect 0 '^decode_gpu hw_load=65: skipped: NVJPEG_STATUS_ARCH_MISMATCH' tuning "$fx/tuning_dataload_gpu.json" --target dataload
expect 1 'problem: decode_gpu not considered: decode=gpu needs a CUDA device' tuning "$fx/tuning_dataload_no_decode.json" --target dataload
expect 2 'invalid choice' tuning "$fx/tuning_train.json" --target gemm
# The MAMF search: a TFLOP/s and shape, the SM clock of the best measurement, the budget kept.
expect 0 '^mamf bf16 on cuda:0: 742.3 TFLOP/s at 4096x8192x8192, clock 1980.0 MHz, 40 of 512 shapes measured \(301 pruned\)' mamf "$fx/mamf_ok.json"
expect 1 'problem: no SM clock recorded for the best measurement: unavailable' mamf "$fx/mamf_no_clock.json"
expect 1 'problem: the search took 31.0 s of a 10 s budget' mamf "$fx/mamf_no_clock.json"
# doctor --json
expect 0 '^doctor: 2 finding\(s\), 0 error\(s\)$' doctor "$fx/doctor_ok.json"
expect 1 'doctor error: ecc: uncorrectable ECC errors: 3' doctor "$fx/doctor_error.json"
# The profile step
expect 0 '^profile: 1 kernel names, 312 W mean, 1 kernel events' profile "$fx/profile.json" "$fx/profile.trace.json"
# metrics "on" must come with metric values in the case.
expect 1 'metrics on but no metric values' profile "$fx/profile_metrics_empty.json" "$fx/profile.trace.json"
expect 0 '^profile: 1 kernel names, 312 W mean.*gpu__time_duration' profile "$fx/profile_metrics.json" "$fx/profile.trace.json"
expect 1 'no power in the case' profile "$fx/profile_no_power.json" "$fx/profile.trace.json"
# Bare memcpy peer vs the memory suite: within 10% passes, 23% off fails.
expect 0 'peer memcpy d2d 268435456 B: bare 4295.0 GB/s, gpubench 4129.8 GB/s, gpubench/bare 0.962 ok' peer-memcpy "$fx/memcpy_bare_close.txt" "$fx/memory_ref.json"
expect 1 'peer memcpy d2d .* gpubench/bare 0.769 FAIL' peer-memcpy "$fx/memcpy_bare_far.txt" "$fx/memory_ref.json"
expect 1 'no ok memory/d2d entry of size 268435456' peer-memcpy "$fx/memcpy_bare_close.txt" "$fx/results_ok.json"
# Bare pointer-chase peer vs host_device_latency: within 15% passes (840 / 800), 40% off fails.
expect 0 'peer chase host_device_latency: bare 800.0 ns, gpubench 840.0 ns, gpubench/bare 1.050 ok' peer-chase "$fx/chase_bare_close.txt" "$fx/memory_overheads.json"
expect 1 'gpubench/bare 1.400 FAIL' peer-chase "$fx/chase_bare_far.txt" "$fx/memory_overheads.json"
expect 1 'printed no host_device_latency line' peer-chase "$fx/chase_bare_no_gpu.txt" "$fx/memory_overheads.json"
expect 1 'no ok memory/host_device_latency entry' peer-chase "$fx/chase_bare_close.txt" "$fx/results_ok.json"
# The cuBLASLt peer: its own verdict; no GPU proves nothing.
expect 0 '^peer cuBLASLt bf16 8192\^3 on NVIDIA H200: .* PASS$' peer-cublaslt "$fx/cublaslt_pass.txt"
expect 1 'difference \+6.11% \(goal < 2%\) FAIL$' peer-cublaslt "$fx/cublaslt_fail.txt"
expect 1 'not checked, no CUDA device' peer-cublaslt "$fx/cublaslt_no_gpu.txt"
[ "$failures" = 0 ] && echo "smoke_check fixtures: all passed" || { echo "smoke_check fixtures: $failures failed"; exit 1; }

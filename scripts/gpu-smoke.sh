#!/usr/bin/env bash
# Runs every GPU code path at a small size with verification on, then the quick preset, on the
# first CUDA device; exits non-zero on any failure. Meant to finish within 5 minutes on one GPU.
# Works from a checkout (builds if needed) or from a bundle (uses the gpubench beside it).
# Results and reports go to $OUT (default: smoke-results/).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ -n "${GPUBENCH:-}" ]; then
  gpubench="$GPUBENCH"
elif [ -x "$here/gpubench" ]; then
  gpubench="$here/gpubench"  # inside a bundle
else
  source "$here/lib.sh"
  ensure_packages "${GPUBENCH_BUILD_PACKAGES[@]}"
  build=$(build_preset "${GPUBENCH_PRESET:-release}" -DGPUBENCH_BUILD_TESTS=OFF)
  gpubench="$build/apps/gpubench/gpubench"
fi
out="${OUT:-smoke-results}"
mkdir -p "$out"
device="${GPUBENCH_SMOKE_DEVICE:-cuda:0}"
fail=0
step() {
  local name="$1"; shift
  echo "== $name: gpubench $*"
  if "$gpubench" "$@"; then echo "== $name: ok"; else echo "== $name: FAILED"; fail=1; fi
}

"$gpubench" version
# gemm: every provider and precision at a tiny and an odd size (every entry checked); fp8
# (sm_89+) and int8 run in the TN layout, the others in NN and TN. Unsupported combinations
# are skipped with their reason.
step gemm-cublas run --device "$device" --suite gemm --axis provider=cublas \
  --axis dtype=fp64,fp32,tf32,fp16,bf16,fp16-acc16,int8 --axis layout=nn,tn --axis m=64,200 \
  --min-time 0.05 --out "$out/gemm-cublas.json"
step gemm-cublaslt run --device "$device" --suite gemm --axis provider=cublaslt,cublaslt-tuned \
  --axis dtype=fp64,fp32,tf32,fp16,bf16,fp16-acc16,fp8-e4m3,fp8-e5m2,int8 --axis layout=tn --axis m=64,256 \
  --lt-candidates 8 --min-time 0.05 --out "$out/gemm-cublaslt.json"
# Every layout, strided batches, padded leading dimensions and beta = 1, on a non-square problem.
step gemm-layouts run --device "$device" --suite gemm --axis provider=cublas,cublaslt --axis dtype=fp32,bf16 \
  --axis layout=nn,nt,tn,tt --axis m=96 --axis n=80 --axis k=72 --axis batch=1,3 --axis pad=0,8 --axis beta=0,1 \
  --min-time 0.02 --out "$out/gemm-layouts.json"
# Epilogues fused into cuBLASLt and as a separate elementwise kernel after cuBLAS/cuBLASLt.
step gemm-epilogues run --device "$device" --suite gemm --axis provider=cublas,cublaslt --axis dtype=fp32,fp16,bf16 \
  --axis layout=tn --axis m=256 --axis epilogue=bias,gelu,bias-gelu --axis fusion=fused,separate \
  --min-time 0.05 --out "$out/gemm-epilogues.json"
# Tuning: search, write the cache, then run cublaslt-tuned from it.
step gemm-tune tune gemm --device "$device" --axis dtype=bf16,fp8-e4m3 --axis m=256,1024 --lt-candidates 8 \
  --cache "$out/gemm-tuning.json"
step gemm-tuned run --device "$device" --suite gemm --axis provider=cublaslt,cublaslt-tuned --axis dtype=bf16,fp8-e4m3 \
  --axis layout=tn --axis m=256,1024 --tuning-cache "$out/gemm-tuning.json" --min-time 0.05 \
  --out "$out/gemm-tuned.json"
# Non-square problem with sampled verification (m*n > 1024) and the cold-L2 path.
step gemm-cold run --device "$device" --suite gemm --axis m=1536 --axis n=512 --axis k=256 --axis dtype=bf16,fp32 \
  --cold --min-time 0.05 --out "$out/gemm-cold.json"
# A small transformer's GEMMs by role (llm preset, gated MLP, GQA, tp=2).
step gemm-llm run --device "$device" --suite gemm --preset llm --axis model=h256-f1024-a8-kv2-s64-b2-v1000-glu \
  --axis tp=1,2 --min-time 0.05 --out "$out/gemm-llm.json"
# gemm custom kernels (provider=custom:*): every rung at small sizes beside cuBLAS, verified on
# every entry (CPU reference up to 1024 entries, device reference GEMM above). Sizes a kernel
# does not tile (200 for regblock) and GPUs without wgmma are skipped with the reason.
step gemm-custom-fp32 run --device "$device" --suite gemm --axis m=64,200,256 --axis dtype=fp32 \
  --axis provider=cublas,custom:naive,custom:tiled,custom:regblock --min-time 0.05 --out "$out/gemm-custom-fp32.json"
step gemm-custom-tc run --device "$device" --suite gemm --axis m=256,512 --axis dtype=fp16,bf16 \
  --axis provider=cublas,custom:wmma,custom:wgmma --min-time 0.05 --out "$out/gemm-custom-tc.json"
step gemm-custom-rect run --device "$device" --suite gemm --axis m=384 --axis n=512 --axis k=192 --axis dtype=bf16 \
  --axis provider=custom:wmma,custom:wgmma --min-time 0.05 --out "$out/gemm-custom-rect.json"
# memory: every GPU path of the ceilings suite at small sizes (each verifies its answer).
step memory-bandwidth run --device "$device" --suite memory --axis test=copy,scale,add,triad,dot,fill \
  --axis size=1M,4000016 --min-time 0.05 --out "$out/memory-bandwidth.json"
step memory-copies run --device "$device" --suite memory \
  --axis test=h2d_pinned,h2d_pageable,d2h_pinned,d2h_pageable,bidir_pinned,bidir_pageable,d2d,h2d_sm,d2h_sm \
  --axis size=4k,1000,8M --min-time 0.05 --out "$out/memory-copies.json"
# Peer copies run where there are two GPUs or more (none planned otherwise).
step memory-peer run --device cuda --suite memory --axis test=p2p,p2p_noaccess,p2p_bidir --axis size=4k,8M \
  --min-time 0.05 --out "$out/memory-peer.json"
# fp8 is skipped with a reason below sm_89.
step memory-peak run --device "$device" --suite memory \
  --axis test=fma_fp64,fma_fp32,fma_fp16x2,fma_bf16x2,fma_int32,mma_fp16,mma_bf16,mma_tf32,mma_int8,mma_fp8 \
  --min-time 0.05 --out "$out/memory-peak.json"
step memory-overheads run --device "$device" --suite memory \
  --axis test=launch,launch_queue,graph_launch,graph_queue,sync,malloc,malloc_async --axis size=0,4k,64M \
  --min-time 0.05 --out "$out/memory-overheads.json"
step memory-cold run --device "$device" --suite memory --axis test=triad,launch --axis size=0,64M --cold \
  --min-time 0.05 --out "$out/memory-cold.json"
# train: a tiny step of every precision, both models, each recompute and accumulation (each
# case checks loss and every gradient against the CPU double reference before timing).
step train-paths run --device "$device" --suite train --axis model=mlp,transformer --axis layers=2 --axis hidden=64 \
  --axis heads=4 --axis ffn_mult=4 --axis seq=32 --axis micro_batch=2 --axis vocab=512 \
  --axis precision=fp32,tf32,fp16-amp,bf16-amp --axis accum=1,2 --axis recompute=none,block \
  --min-time 0.05 --out "$out/train-paths.json"
# train: the largest-batch search (doubling, then bisection; out-of-memory trials released).
step train-largest-batch run --device "$device" --suite train --axis model=transformer --axis layers=1 \
  --axis hidden=256 --axis heads=4 --axis ffn_mult=4 --axis seq=1024 --axis micro_batch=0 --axis vocab=8192 \
  --axis precision=bf16-amp --axis accum=1 --axis recompute=none --min-time 0.05 --out "$out/train-largest-batch.json"
# Case isolation with CUDA: each case in a fresh child process, under a timeout.
step isolate run --device "$device" --suite gemm --axis m=256 --axis dtype=bf16,fp32 --isolate --case-timeout 120 \
  --min-time 0.05 --out "$out/isolate.json"
# Instruments: a traced case with telemetry and the CUPTI timer, a Perfetto trace written, and
# hardware metrics (off with a stated reason where counters need admin rights). The checks: the
# case's trace lists kernels, its telemetry has non-zero power, the trace file has kernel events.
step profile run --device "$device" --suite gemm --axis m=512 --axis dtype=bf16 --profile nvtx,trace,telemetry,host,metrics \
  --trace-dir "$out/traces" --min-time 0.05 --out "$out/profile.json"
step profile-cupti-timer run --device "$device" --suite memory --axis test=triad --axis size=16M --timer cupti \
  --min-time 0.05 --out "$out/profile-cupti-timer.json"
check_profile() {
  python3 - "$out/profile.json" "$out/traces/profile.trace.json" <<'PY'
import json, sys
results, trace = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
print("profile context:", json.dumps(results["context"]["gpubench"]["profile"]))
entry = next(b for b in results["benchmarks"] if b["run_type"] == "iteration")
p = entry["gpubench"].get("profile", {})
assert p.get("trace", {}).get("kernels"), f"no kernels in the case's trace: {p.get('trace')}"
power = p.get("telemetry", {}).get("power_w", {}).get("mean", 0)
assert power > 0, f"no power in the case's telemetry: {p.get('telemetry')}"
kernels = [e for e in trace if e.get("ph") == "X" and e.get("cat") == "kernel"]
assert kernels, "no kernel events in the trace file"
print(f"profile: {len(p['trace']['kernels'])} kernel names, {power:.0f} W mean, {len(kernels)} kernel events in the trace;"
      f" metrics: {json.dumps(p.get('metrics'))}")
PY
}
if check_profile; then echo "== profile checks: ok"; else echo "== profile checks: FAILED"; fail=1; fi
# dataload: GPU augmentation (fp32, fp16; checked against the CPU reference), batch copies
# (pageable/pinned, synchronous/double-buffered; read back) and the pipeline with the GPU
# consumer kernel (its checksum of each batch checked), augmenting in the workers or on the GPU
# (aug=gpu: the augmented batch checked against the reference), on a small generated dataset.
"$gpubench" datagen --out "$out/dataload-data" --count 32 --tokens 0 >/dev/null || fail=1
export GPUBENCH_DATASET="$out/dataload-data"
step dataload-gpu run --device "$device" --suite dataload \
  --axis stage=augment,h2d,pipeline --axis workers=1 --axis dtype=fp32,fp16 --axis batch=8 --axis io=memory,cached,cold \
  --axis prefetch=0,2 --axis pinned=0,1 --axis aug=cpu,gpu --axis step_us=0,2000 --min-time 0.05 \
  --out "$out/dataload-gpu.json"
# The train consumer: the mlp's bf16 step on the pooled batch (its inputs checked against the
# host's pooling, the loss finite), with CPU and GPU augmentation.
step dataload-train run --device "$device" --suite dataload --axis stage=pipeline --axis consumer=train-768 \
  --axis workers=1 --axis dtype=fp16 --axis batch=8 --axis io=memory,cached --axis prefetch=2 --axis pinned=1 \
  --axis aug=cpu,gpu --min-time 0.05 --out "$out/dataload-train.json"
unset GPUBENCH_DATASET
# collectives: every NCCL operation on one GPU (a one-rank communicator), every type (fp8 is
# skipped with a reason below sm_90 or NCCL 2.24), reduction and layout, then a CUDA Graph launch.
step collectives-nccl run --device "$device" --suite collectives --axis gpus=1 \
  --axis dtype=fp32,fp16,bf16,fp64,int32,fp8_e4m3,fp8_e5m2 --axis redop=sum,prod,max,min,avg --axis inplace=0,1 \
  --axis size=8,4k,1M --min-time 0.02 --out "$out/collectives-nccl.json"
step collectives-graph run --device "$device" --suite collectives --axis gpus=1 --axis graph=1 --axis size=8,1M \
  --min-time 0.02 --out "$out/collectives-graph.json"
# Every GPU in one process, and (with mpirun) one rank per GPU, where there are two GPUs or more.
gpus=$(nvidia-smi -L 2>/dev/null | wc -l || echo 0)
if [ "$gpus" -ge 2 ]; then
  step collectives-multi run --device cuda --suite collectives --axis size=8,1M,64M --min-time 0.05 \
    --out "$out/collectives-multi.json"
  if command -v mpirun >/dev/null; then
    mpi_flags=(--oversubscribe -np "$gpus")
    [ "$(id -u)" -eq 0 ] && mpi_flags=(--allow-run-as-root "${mpi_flags[@]}")
    echo "== collectives-mpi: mpirun ${mpi_flags[*]} gpubench run --suite collectives"
    if mpirun "${mpi_flags[@]}" "$gpubench" run --device cuda --suite collectives --axis size=8,1M,64M --axis graph=0,1 \
      --min-time 0.05 --out "$out/collectives-mpi.json"; then echo "== collectives-mpi: ok"; else echo "== collectives-mpi: FAILED"; fail=1; fi
  fi
fi
# The quick preset, as scripts/run.sh runs it.
step quick run --device "$device" --preset quick --out "$out/quick.json"
for f in "$out"/*.json; do "$gpubench" report "$f" --output "${f%.json}.md" || fail=1; done
[ -f "$out/quick.md" ] && cat "$out/quick.md"
if [ "$fail" = 0 ]; then echo "gpu-smoke: PASSED"; else echo "gpu-smoke: FAILED"; fi
exit "$fail"

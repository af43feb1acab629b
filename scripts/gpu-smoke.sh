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
# gemm: every dtype through cuBLAS, at a tiny and an odd size (checks every entry).
step gemm-paths run --device "$device" --suite gemm --axis m=64,200 --axis dtype=fp64,fp32,tf32,fp16,bf16 \
  --min-time 0.05 --out "$out/gemm-paths.json"
# Non-square problem with sampled verification (m*n > 1024) and the cold-L2 path.
step gemm-cold run --device "$device" --suite gemm --axis m=1536 --axis n=512 --axis k=256 --axis dtype=bf16,fp32 \
  --cold --min-time 0.05 --out "$out/gemm-cold.json"
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
# Case isolation with CUDA: each case in a fresh child process, under a timeout.
step isolate run --device "$device" --suite gemm --axis m=256 --axis dtype=bf16,fp32 --isolate --case-timeout 120 \
  --min-time 0.05 --out "$out/isolate.json"
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

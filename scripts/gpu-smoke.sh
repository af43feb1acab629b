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
# Case isolation with CUDA: each case in a fresh child process, under a timeout.
step isolate run --device "$device" --suite gemm --axis m=256 --axis dtype=bf16,fp32 --isolate --case-timeout 120 \
  --min-time 0.05 --out "$out/isolate.json"
# The quick preset, as scripts/run.sh runs it.
step quick run --device "$device" --preset quick --out "$out/quick.json"
for f in "$out"/*.json; do "$gpubench" report "$f" --output "${f%.json}.md" || fail=1; done
[ -f "$out/quick.md" ] && cat "$out/quick.md"
if [ "$fail" = 0 ]; then echo "gpu-smoke: PASSED"; else echo "gpu-smoke: FAILED"; fi
exit "$fail"

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
# The quick preset, as scripts/run.sh runs it.
step quick run --device "$device" --preset quick --out "$out/quick.json"
for f in "$out"/*.json; do "$gpubench" report "$f" --output "${f%.json}.md" || fail=1; done
[ -f "$out/quick.md" ] && cat "$out/quick.md"
if [ "$fail" = 0 ]; then echo "gpu-smoke: PASSED"; else echo "gpu-smoke: FAILED"; fi
exit "$fail"

#!/usr/bin/env bash
# Builds gpubench with CUDA 12.4 (the toolkit scripts/toolkit-cuda12.sh assembles), for hosts whose
# driver predates CUDA 13 (r525 and newer; docs/cuda12.md), with the machine's other toolkits hidden:
#   scripts/cuda12.sh build [DIR [-DVAR=VALUE...]]  configure and build in DIR (default build/cuda12-release,
#                                                   every default architecture); prints DIR
#   scripts/cuda12.sh test                          CI's CUDA 12 stage: Release, sm_90 (and sm_90a's
#                                                   wgmma) in build/cuda12; runs the tests of what CUDA 12 changes
# GPUBENCH_JOBS sets the parallel jobs (default: every core). /usr/local/include and /usr/local/lib*
# link into /usr/local/cuda-13.0 on machines set up by NVIDIA's installer, so the compiler and linker
# would silently take CUDA 13's headers and libraries: the build runs in a private mount namespace
# (unshare -m) where every other /usr/local/cuda-* folder is an empty one. CMake checks that
# cuda_runtime_api.h's CUDART_VERSION is the compiler's (printed at configure: "CUDART_VERSION 12040").
set -euo pipefail
source "$(dirname "$0")/lib.sh"

read_build_test_command 13 "$@"
shift

toolkit="$("$GPUBENCH_ROOT/scripts/toolkit-cuda12.sh")"
toolkit="${toolkit%/bin/nvcc}"
# Where this machine's CUDA 12 libraries are, for the bundle launcher's search (scripts/cuda-libs.sh)
# and the bundle's test (test-bundle-root.sh), which otherwise look for them in CUDA 13's places.
export GPUBENCH_CUDA_LIBS="$toolkit/lib64${GPUBENCH_CUDA_LIBS:+:$GPUBENCH_CUDA_LIBS}"

# Re-run this script in a mount namespace where the other CUDA toolkits are empty folders.
if [ -z "${GPUBENCH_OTHER_CUDA_HIDDEN:-}" ]; then
  others=()
  for d in /usr/local/cuda-*; do
    [ -d "$d" ] && [ ! -L "$d" ] && [ "$(cd "$d" && pwd -P)" != "$(cd "$toolkit" && pwd -P)" ] && others+=("$d")
  done
  if [ ${#others[@]} -gt 0 ]; then
    log "hiding ${others[*]} while building with CUDA 12.4"
    rerun_with_dirs_hidden GPUBENCH_OTHER_CUDA_HIDDEN "${others[@]}" -- "$cmd" "$@" ||
      log "warning: cannot make a mount namespace: ${others[*]} stay visible; CMake's CUDART_VERSION check guards the headers"
  fi
fi

cuda12_build() {  # DIR [cmake args...]
  local dir="$1"; shift
  ensure_packages "${GPUBENCH_BUILD_PACKAGES[@]}"
  # The attention suite's cuDNN provider: the frontend's headers and cudnn.h, which CUDA 12.4's
  # toolkit lacks (PyPI nvidia-cudnn-cu12's, in build/deps/cudnn-cu12).
  ensure_cudnn_frontend
  ensure_cudnn_headers 12 "$toolkit"
  ensure_nvjpeg_headers 12 "$toolkit"  # the dataload suite's decode=gpu (PyPI nvidia-nvjpeg-cu12's nvjpeg.h)
  use_ccache
  # The toolkit's nvcc, headers and libraries only: no CUDA 13 from the environment.
  unset CUDA_HOME CUDA_PATH CUDAToolkit_ROOT
  export CUDACXX="$toolkit/bin/nvcc" PATH="$toolkit/bin:$PATH"
  (cd "$GPUBENCH_ROOT" &&
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT="$toolkit" "$@" >&2 &&
    cmake --build "$dir" -j "${GPUBENCH_JOBS:-$(nproc)}" >&2) || die "CUDA 12.4 build failed ($dir)"
  echo "$dir"
}

case "$cmd" in
  build)
    dir="${1:-$GPUBENCH_ROOT/build/cuda12-release}"
    [ $# -gt 0 ] && shift
    cuda12_build "$dir" -DGPUBENCH_BUILD_TESTS=OFF -DGPUBENCH_BUILD_PERF=ON "$@"  # perf/: the bundle's peers
    ;;
  test)
    ensure_packages "${GPUBENCH_TEST_PACKAGES[@]}"
    start=$(date +%s)
    # What CUDA 12.4 changes, once (issue 50): stage 1 ran the CPU logic's unit tests and the
    # CPU benchmarks' end-to-end tests with the same C++ compiler and libraries, so this stage
    # builds without the CPU unit tests and runs the tests of what the toolkit decides: the CUDA
    # unit tests (label cuda), the GPU plans (dry runs, the fp8, block-scaled and cuDNN gating:
    # the e2e tests named ...Plan..., ...Skipped..., ...Cuda...), the toolkit and driver rules
    # (Doctor, version, the instruments), the NVML and NVTX bindings, the peak kernels' SASS and
    # the bundle with its launcher in a Debian root.
    dir=$(cuda12_build "$GPUBENCH_ROOT/build/cuda12" -DCMAKE_CUDA_ARCHITECTURES=90 -DGPUBENCH_BUILD_TESTS=ON \
      -DGPUBENCH_BUILD_CPU_UNIT_TESTS=OFF)
    version=$("$dir/apps/gpubench/gpubench" version | sed -n '3,4p' | tr '\n' ' ')
    grep -q 'runtime 12\.4.*minimum NVIDIA driver: 525\.' <<<"$version" ||
      die "the CUDA 12 build does not say runtime 12.4 and driver >= 525: $version"
    ctest --test-dir "$dir" --output-on-failure -j "${GPUBENCH_JOBS:-$(nproc)}" -R "$(tr -d ' \n' <<'RE'
^(DryRun|Doctor|Cli|Profile|ReferenceCli|NvmlFake|NvmlFakeSoak|PowerControlFake|NvtxRanges)\.
|^(Attention|Train|Infer|GemmCli|Dataload|CollectivesMpi)\.[A-Za-z0-9_]*(Plan|Skipped|Cuda)[A-Za-z0-9_]*$
|^(bundle_debian_root|gpu_smoke_dry_run|peak_kernels_sass|cudnn_headers|openmetrics_parses)$
RE
)"
    ctest --test-dir "$dir" --output-on-failure -j "${GPUBENCH_JOBS:-$(nproc)}" -L '^cuda$'
    log "CUDA 12.4 stage passed in $(( $(date +%s) - start )) s ($version)"
    ;;
esac

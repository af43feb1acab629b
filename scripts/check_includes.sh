#!/usr/bin/env bash
# The layers' include direction (../shared/ARCHITECTURE.md, issue 32): one line per #include
# that breaks it, exit 1 if any. Run by ctest (include_direction).
#   bench/core/, bench/suites/  never include reports/, apps/ or profilers/
#   kernels/                    never includes bench/
#   reports/                    includes nothing CUDA (it builds and runs where there is no toolkit) and
#                               nothing of kernels/ but kernels/infer/scheduler.hpp: `gpubench serving`
#                               projects with the very scheduler the infer suite's serve case runs (one
#                               policy, so measured and projected latencies compare like for like), and
#                               that header is host-only (checked as portable below)
#   bench/soak/, bench/tune/    never include profilers/ (instruments reach them through bench/core)
#   *_none.cpp, cuda_portable.hpp and the other headers a build without CUDA compiles in place
#   of CUDA code include nothing CUDA (docs/no-cuda.md; CI's no-CUDA stage builds them)
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
check() {  # FOLDERS... -- REGEX WHY [ALLOWED]: ALLOWED (a regex over the include line) exempts
  local folders=() regex why allowed
  while [[ $1 != -- ]]; do folders+=("$1"); shift; done
  shift
  regex=$1 why=$2 allowed=${3:-}
  local hits
  hits=$(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.cu' --include='*.cuh' "^\s*#\s*include\s*[\"<]($regex)" \
    "${folders[@]}" || true)
  if [[ -n $hits && -n $allowed ]]; then hits=$(grep -vE "$allowed" <<<"$hits" || true); fi
  if [[ -n $hits ]]; then
    while IFS= read -r line; do printf 'include direction: %s: %s\n' "$line" "$why"; done <<<"$hits"
    bad=1
  fi
}
check bench/core bench/suites -- 'reports/|apps/|profilers/' "bench/core and bench/suites never include reports/, apps/ or profilers/"
check kernels -- 'bench/' "kernels/ never includes bench/"
check reports -- 'cuda[_a-z]*\.h|cublas|cublasLt|nccl\.h|cupti|nvml\.h|nvtx|cudnn|kernels/' "reports/ includes nothing CUDA and nothing of kernels/ but kernels/infer/scheduler.hpp" \
  ':[0-9]+:\s*#\s*include\s*"kernels/infer/scheduler\.hpp"'
check bench/soak bench/tune -- 'profilers/' "bench/soak and bench/tune reach the host figures through bench/core"
mapfile -t portable < <(git ls-files '*_none.cpp' bench/core/cuda_portable.hpp kernels/blas/algo_config.hpp \
  kernels/blas/algo_config.cpp kernels/common/fill_host.hpp kernels/common/fill_host.cpp \
  kernels/infer/scheduler.hpp kernels/infer/scheduler.cpp 2>/dev/null)
[[ ${#portable[@]} -eq 0 ]] || check "${portable[@]}" -- 'cuda[_a-zA-Z0-9]*\.h|cublas|nccl\.h|cupti|nvml\.h|nvtx|cudnn|[^">]*\.cuh|bench/core/cuda(_case)?\.hpp|kernels/blas/cublaslt\.hpp' \
  "what a build without CUDA compiles includes nothing CUDA"
if [[ $bad -eq 0 ]]; then echo "include direction: ok"; fi
exit $bad

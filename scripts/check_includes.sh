#!/usr/bin/env bash
# The layers' include direction (../shared/ARCHITECTURE.md, issue 32): one line per #include
# that breaks it, exit 1 if any. Run by ctest (include_direction).
#   bench/core/, bench/suites/  never include reports/, apps/ or profilers/
#   kernels/                    never includes bench/
#   reports/                    includes nothing CUDA (it builds and runs where there is no toolkit)
#   bench/soak/, bench/tune/    never include profilers/ (instruments reach them through bench/core)
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
check() {  # FOLDERS... -- REGEX WHY
  local folders=() regex why
  while [[ $1 != -- ]]; do folders+=("$1"); shift; done
  shift
  regex=$1 why=$2
  local hits
  hits=$(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.cu' --include='*.cuh' "^\s*#\s*include\s*[\"<]($regex)" \
    "${folders[@]}" || true)
  if [[ -n $hits ]]; then
    while IFS= read -r line; do printf 'include direction: %s: %s\n' "$line" "$why"; done <<<"$hits"
    bad=1
  fi
}
check bench/core bench/suites -- 'reports/|apps/|profilers/' "bench/core and bench/suites never include reports/, apps/ or profilers/"
check kernels -- 'bench/' "kernels/ never includes bench/"
check reports -- 'cuda[_a-z]*\.h|cublas|cublasLt|nccl\.h|cupti|nvml\.h|nvtx|cudnn|kernels/' "reports/ includes nothing CUDA"
check bench/soak bench/tune -- 'profilers/' "bench/soak and bench/tune reach the host figures through bench/core"
if [[ $bad -eq 0 ]]; then echo "include direction: ok"; fi
exit $bad

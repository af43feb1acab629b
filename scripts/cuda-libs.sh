# Finds the CUDA libraries a gpubench bundle leaves to the host (cuBLAS, cuBLASLt, NCCL, CUPTI,
# Perfworks) and prints the LD_LIBRARY_PATH that reaches them. Sourced by the bundle's
# `gpubench` launcher and by gpu-smoke.sh; runs in bash with `set -u`. Source it; do not run it.
#
#   cuda_libs_find REQUIRED OPTIONAL
#     REQUIRED, OPTIONAL: space-separated sonames. Looks for each in, in this order:
#     $GPUBENCH_CUDA_LIBS (a colon list of folders), $CUDA_HOME/lib64, $CUDA_PATH/lib64,
#     /usr/local/cuda/lib64 and its extras/CUPTI/lib64, /usr/local/cuda-*/lib64 (newest first),
#     the folders of pip's NVIDIA wheels (site-packages/nvidia/*/lib: nvidia/cublas/lib for CUDA
#     12 wheels, nvidia/cu13/lib for CUDA 13 ones; for every python3 on PATH, and the usual prefixes
#     /usr, /usr/local, /opt/*, /opt/*/.venv where there is none), the folders already on LD_LIBRARY_PATH, then
#     ldconfig's cache. Sets CUDA_LIBS_PATH (the folders, colon-separated, no duplicates),
#     CUDA_LIBS_FOUND ("soname=path" lines) and CUDA_LIBS_MISSING (required sonames not found,
#     space-separated) and CUDA_LIBS_OPTIONAL_MISSING. Returns 1 when a required one is missing.

cuda_libs_candidate_dirs() {
  local d py
  local IFS=:
  for d in ${GPUBENCH_CUDA_LIBS:-}; do [ -n "$d" ] && echo "$d"; done
  unset IFS
  [ -n "${CUDA_HOME:-}" ] && echo "$CUDA_HOME/lib64" && echo "$CUDA_HOME/extras/CUPTI/lib64"
  [ -n "${CUDA_PATH:-}" ] && echo "$CUDA_PATH/lib64"
  echo /usr/local/cuda/lib64
  echo /usr/local/cuda/extras/CUPTI/lib64
  echo /usr/local/cuda/targets/x86_64-linux/lib
  ls -d /usr/local/cuda-*/lib64 2>/dev/null | sort -rV
  # pip's NVIDIA wheels: nvidia/<component>/lib (CUDA 12 wheels) and nvidia/cu13/lib (CUDA 13).
  for py in python3 python; do
    command -v "$py" >/dev/null 2>&1 || continue
    "$py" - 2>/dev/null <<'PY' || true
import glob, os, site, sys
roots = list(getattr(site, "getsitepackages", lambda: [])()) + [site.getusersitepackages()] + sys.path
seen = set()
for r in roots:
    for d in sorted(glob.glob(os.path.join(r, "nvidia", "*", "lib"))) + sorted(glob.glob(os.path.join(r, "nvidia", "cu*", "lib*"))):
        if d not in seen and os.path.isdir(d):
            seen.add(d)
            print(d)
PY
  done
  # The same folders where no python3 is on PATH: system, /usr/local, conda and /opt virtual environments.
  ls -d /usr/lib/python3*/*-packages/nvidia/*/lib /usr/local/lib/python3*/*-packages/nvidia/*/lib \
    /opt/*/lib/python3*/site-packages/nvidia/*/lib /opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib 2>/dev/null || true
  IFS=:
  for d in ${LD_LIBRARY_PATH:-}; do [ -n "$d" ] && echo "$d"; done
  unset IFS
}

# The first path of `soname` in the candidate folders, else from ldconfig's cache; empty if none.
cuda_libs_locate() {
  local soname="$1" d
  while IFS= read -r d; do
    if [ -e "$d/$soname" ]; then echo "$d/$soname"; return 0; fi
  done <<<"$CUDA_LIBS_DIRS"
  if command -v ldconfig >/dev/null 2>&1 || [ -x /sbin/ldconfig ]; then
    local path
    path=$({ ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | awk -v n="$soname" '$1 == n && p == "" {p = $NF} END {if (p != "") print p}')
    [ -n "$path" ] && { echo "$path"; return 0; }
  fi
  return 1
}

cuda_libs_find() {
  local required="$1" optional="${2:-}" soname path dir
  CUDA_LIBS_DIRS=$(cuda_libs_candidate_dirs | awk 'NF && !seen[$0]++')
  CUDA_LIBS_PATH="" CUDA_LIBS_FOUND="" CUDA_LIBS_MISSING="" CUDA_LIBS_OPTIONAL_MISSING=""
  for soname in $required $optional; do
    if path=$(cuda_libs_locate "$soname"); then
      CUDA_LIBS_FOUND+="$soname=$path"$'\n'
      dir=$(dirname "$path")
      case ":$CUDA_LIBS_PATH:" in *":$dir:"*) ;; *) CUDA_LIBS_PATH="${CUDA_LIBS_PATH:+$CUDA_LIBS_PATH:}$dir" ;; esac
    elif [[ " $required " == *" $soname "* ]]; then
      CUDA_LIBS_MISSING+="${CUDA_LIBS_MISSING:+ }$soname"
    else
      CUDA_LIBS_OPTIONAL_MISSING+="${CUDA_LIBS_OPTIONAL_MISSING:+ }$soname"
    fi
  done
  [ -z "$CUDA_LIBS_MISSING" ]
}

# What each soname is, for messages: "libcublasLt.so.13 (cuBLASLt; CUDA 13 toolkit lib64 or pip nvidia-cublas)".
cuda_libs_describe() {
  case "$1" in
    libcublasLt.so.*) echo "$1 (cuBLASLt: the CUDA toolkit's lib64, or pip's nvidia-cublas wheel)" ;;
    libcublas.so.*) echo "$1 (cuBLAS: the CUDA toolkit's lib64, or pip's nvidia-cublas wheel)" ;;
    libnccl.so.*) echo "$1 (NCCL: the CUDA toolkit, libnccl2, or pip's nvidia-nccl wheel)" ;;
    libcupti.so.*) echo "$1 (CUPTI, for --profile trace/metrics and --timer cupti: extras/CUPTI/lib64 or pip's nvidia-cuda-cupti wheel)" ;;
    libnvperf_*.so) echo "$1 (Perfworks, for --profile metrics: beside libcupti)" ;;
    *) echo "$1" ;;
  esac
}

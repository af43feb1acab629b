# Shared by run.sh, test.sh, bundle.sh and gpu-smoke.sh: install missing build dependencies and
# build one CMake preset. Source it; do not run it.

GPUBENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian/Ubuntu packages the build needs (the CUDA Toolkit itself comes from NVIDIA).
GPUBENCH_BUILD_PACKAGES=(cmake ninja-build g++ pkg-config ccache libbenchmark-dev libfmt-dev
  libboost-program-options-dev nlohmann-json3-dev libopenblas-dev libturbojpeg0-dev liburing-dev libopenmpi-dev openmpi-bin
  libavcodec-dev libavformat-dev)
# Extra packages for the tests: GoogleTest, Google Benchmark's compare.py with scipy, ...;
# debootstrap: the bundle's test in a minimal Debian root (tests: bundle_debian_root);
# python3-prometheus-client: the real parser that checks `report --format openmetrics`;
# python3-venv: build/py-venv for the PyPI packages of the Kubernetes manifests check (ensure_py_venv).
GPUBENCH_TEST_PACKAGES=(libgtest-dev libgmock-dev libbenchmark-tools python3-scipy libjpeg-turbo-progs chromium debootstrap
  python3-prometheus-client python3-venv)
# A one-machine Slurm cluster for scripts/test-slurm.sh (CI submits scripts/slurm/*.sbatch to it).
GPUBENCH_SLURM_PACKAGES=(munge slurmctld slurmd slurm-client)

log() { printf '[gpubench] %s\n' "$*" >&2; }
die() { printf '[gpubench] error: %s\n' "$*" >&2; exit 1; }

# Installs whichever of the given packages are missing (apt, through sudo when not root).
ensure_packages() {
  local missing=()
  for p in "$@"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = 'install ok installed' ] || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get: install them by hand"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "missing packages (${missing[*]}): run as root or install sudo"
    sudo="sudo"
  fi
  log "installing: ${missing[*]}"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# debian_root DIR [PACKAGE,...]: a minimal Debian root (debootstrap --variant=minbase: no compiler,
# no dev package, no Python) of this machine's Debian release (else trixie, whose glibc is at
# least as new as the build machine's), with the given packages added; made once (about a minute
# from deb.debian.org) and reused. Root or passwordless sudo. Returns 1 (the log's tail printed)
# when debootstrap fails, e.g. without a network to the Debian mirror.
debian_suite() { (. /etc/os-release 2>/dev/null; [ "${ID:-}" = debian ] && [ -n "${VERSION_CODENAME:-}" ] && echo "$VERSION_CODENAME") || echo trixie; }
debian_root() {
  local dir="$1" include="${2:-}" sudo=""
  [ -x "$dir/bin/bash" ] && return 0
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  local log_file="/tmp/debootstrap-$(basename "$dir").log"
  log "debootstrap --variant=minbase ${include:+--include=$include }$(debian_suite) $dir (log: $log_file)"
  $sudo rm -rf "$dir.partial"
  if ! $sudo debootstrap --variant=minbase ${include:+--include="$include"} "$(debian_suite)" "$dir.partial" \
      http://deb.debian.org/debian >"$log_file" 2>&1; then
    tail -n 5 "$log_file" >&2
    return 1
  fi
  $sudo mv "$dir.partial" "$dir"
}

# Finds nvcc (PATH, CUDACXX, /usr/local/cuda) and exports CUDACXX for CMake. Without one the
# build goes on without CUDA (GPUBENCH_WITH_CUDA=OFF: CPU suites, report, compare, history,
# scaling; GPU cases say "not built with CUDA"); GPUBENCH_REQUIRE_CUDA=1 makes that an error.
# Returns 1 when there is none.
find_cuda() {
  local nvcc="${CUDACXX:-}"
  [ -n "$nvcc" ] || nvcc="$(command -v nvcc || true)"
  [ -n "$nvcc" ] || { [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc; }
  if [ -n "$nvcc" ] && "$nvcc" --version >/dev/null 2>&1; then
    export CUDACXX="$nvcc"
    return 0
  fi
  [ "${GPUBENCH_REQUIRE_CUDA:-0}" = 1 ] &&
    die "the CUDA Toolkit (12.4 or newer) was not found: install it or set CUDACXX to nvcc's path"
  log "no CUDA Toolkit (nvcc) found: building without CUDA (GPU cases say 'not built with CUDA'; see docs/no-cuda.md)"
  unset CUDACXX
  return 1
}

# The major version of the CUDA Toolkit whose nvcc is $1 ("release 13.0" -> 13).
cuda_major() {
  "$1" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p'
}

# The official nvml.h (PyPI nvidia-nvml-dev, matching CUDA 13.0) in build/deps/nvml, where the
# CUDA Toolkit lacks it: the build checks gpubench's NVML declarations against it. Optional:
# without pip or the network the build goes on unchecked.
ensure_nvml_header() {
  [ -f "${CUDA_HOME:-/usr/local/cuda}/include/nvml.h" ] && return 0
  [ -f "$GPUBENCH_ROOT/build/deps/nvml/nvidia/cu13/include/nvml.h" ] && return 0
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$GPUBENCH_ROOT/build/deps/nvml" \
    nvidia-nvml-dev==13.0.87 >/dev/null 2>&1 || log "nvml.h not installed (pip failed): NVML declarations go unchecked"
}

# PyPI packages the offline checks import, in a virtual environment of their own, build/py-venv
# (tests/scripts/check_kubernetes_manifests.py re-runs itself with its interpreter):
# kubernetes-validate 1.37.0 ships the Kubernetes API schemas (1.25 to 1.37; the check uses 1.31)
# and needs no network; jsonschema validates the MPIJob against the MPI Operator's CRD schema.
# Optional: without pip or the network the check reports itself skipped.
GPUBENCH_PY_VENV_PACKAGES=(kubernetes-validate==1.37.0 jsonschema==4.26.0 PyYAML==6.0.3)
ensure_py_venv() {
  local venv="$GPUBENCH_ROOT/build/py-venv" want
  want="${GPUBENCH_PY_VENV_PACKAGES[*]}"
  [ -x "$venv/bin/python3" ] && [ "$(cat "$venv/.gpubench-packages" 2>/dev/null)" = "$want" ] && return 0
  # Debian's own interpreter: its venv module (python3-venv) and ensurepip.
  local py=python3
  [ -x /usr/bin/python3 ] && py=/usr/bin/python3
  "$py" -m venv --clear "$venv" >/dev/null 2>&1 ||
    { log "no Python venv (python3-venv): the Kubernetes manifests check will be skipped"; return 0; }
  if "$venv/bin/python3" -m pip install -q --disable-pip-version-check "${GPUBENCH_PY_VENV_PACKAGES[@]}" >/dev/null 2>&1; then
    echo "$want" >"$venv/.gpubench-packages"
  else
    log "kubernetes-validate/jsonschema not installed (pip failed): the Kubernetes manifests check will be skipped"
  fi
}

# cuobjdump and nvdisasm (PyPI nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm) in
# build/deps/sass-tools, where the CUDA Toolkit lacks them: the peak_kernels_sass test reads the
# peak kernels' SASS with them (skipped without). Optional, like the NVML header.
ensure_sass_tools() {
  local bin="${CUDA_HOME:-/usr/local/cuda}/bin"
  [ -x "$bin/cuobjdump" ] && [ -x "$bin/nvdisasm" ] && return 0
  [ -x "$GPUBENCH_ROOT/build/deps/sass-tools/nvidia/cu13/bin/nvdisasm" ] && return 0
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$GPUBENCH_ROOT/build/deps/sass-tools" \
    nvidia-cuda-cuobjdump==13.2.51 nvidia-cuda-nvdisasm==13.2.51 >/dev/null 2>&1 ||
    log "cuobjdump/nvdisasm not installed (pip failed): the peak SASS check will be skipped"
}

# The cuDNN frontend's headers (PyPI nvidia-cudnn-frontend) in build/deps/cudnn_frontend: the
# attention suite's cuDNN provider is built with them (and cudnn.h: ensure_cudnn_headers). Optional:
# without them the build has no cuDNN provider and says so.
ensure_cudnn_frontend() {
  [ -f "$GPUBENCH_ROOT/build/deps/cudnn_frontend/include/cudnn_frontend.h" ] && return 0
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$GPUBENCH_ROOT/build/deps/cudnn_frontend" \
    nvidia-cudnn-frontend==1.32.0 >/dev/null 2>&1 || log "cuDNN frontend not installed (pip failed): no cuDNN attention provider"
}

# cudnn.h and the headers it includes, where the CUDA Toolkit at TOOLKIT lacks them (NVIDIA's
# toolkits do not ship cuDNN; the CUDA 12.4 one scripts/toolkit-cuda12.sh assembles never has it):
# the include/ folder of PyPI's nvidia-cudnn-cu<MAJOR> wheel, in build/deps/cudnn-cu<MAJOR>/include,
# with SOURCE naming the wheel (CMake finds it there after the toolkit's own; doctor and `gpubench
# version` say which). Only the headers are needed: the frontend loads libcudnn at run time. The
# wheel is large (cu12: 658 MB, cu13: 366 MB; 376 KB of headers, the same files in both), so it is
# downloaded once (pinned by SHA-256), its 14 headers kept in the cache beside the CUDA 12.4
# toolkit's downloads, and the wheel dropped. 9.19: the cuDNN the provider first ran with (H200) and
# whose headers the CUDA 13 build machine's toolkit holds. Optional: without it, no cuDNN provider.
GPUBENCH_CUDNN_WHEELS=(  # CUDA major, the wheel's MB, the pin
  "12 658 nvidia-cudnn-cu12==9.19.0.56 --hash=sha256:ac6ad90a075bb33a94f2b4cf4622eac13dd4dc65cf6dd9c7572a318516a36625"
  "13 366 nvidia-cudnn-cu13==9.19.0.56 --hash=sha256:d20e1734305e9d68889a96e3f35094d733ff1f83932ebe462753973e53a572bf"
)
ensure_cudnn_headers() {  # MAJOR TOOLKIT
  local major="$1" toolkit="$2" pin="" mb=""
  [ -f "$toolkit/include/cudnn.h" ] || [ -f "$toolkit/targets/x86_64-linux/include/cudnn.h" ] && return 0
  for entry in "${GPUBENCH_CUDNN_WHEELS[@]}"; do
    [ "${entry%% *}" = "$major" ] && read -r _ mb pin <<<"$entry"
  done
  [ -n "$pin" ] || { log "no cudnn.h for CUDA $major (no pinned nvidia-cudnn-cu$major): no cuDNN attention provider"; return 0; }
  wheel_headers "$pin" "$mb" nvidia/cudnn/include/ cudnn.h cudnn-headers "$GPUBENCH_ROOT/build/deps/cudnn-cu$major" ||
    log "cudnn.h not installed (downloading or unpacking ${pin%% *} failed): no cuDNN attention provider with CUDA $major"
}

# nvjpeg.h, which no CUDA Toolkit here ships (the CUDA 13 build machine's lacks it, as does the
# 12.4 one scripts/toolkit-cuda12.sh assembles): the include/ of PyPI's nvidia-nvjpeg (CUDA 13)
# or nvidia-nvjpeg-cu12 wheel, in build/deps/nvjpeg-cu<MAJOR>/include (a 3.8 or 5.3 MB wheel,
# pinned by SHA-256; its one header kept in the cache). The dataload suite's decode=gpu loads
# libnvjpeg at run time; without the header it is built without it (those cases say so).
GPUBENCH_NVJPEG_WHEELS=(  # CUDA major, the wheel's MB, the pin, the header's folder in the wheel
  "12 5 nvidia-nvjpeg-cu12==12.4.0.76 --hash=sha256:3888f10b32fbd58e80166c48e01073732d752fa5f167b7cb5b9615f1c6375a20 nvidia/nvjpeg/include/"
  "13 4 nvidia-nvjpeg==13.3.2.43 --hash=sha256:27f9c4a25a73f1d1ad35c342c8d657c8ff43e23877f338ef15fb2602ac2e5aa8 nvidia/cu13/include/"
)
ensure_nvjpeg_headers() {  # MAJOR TOOLKIT
  local major="$1" toolkit="$2" pin="" mb="" prefix=""
  [ -f "$toolkit/include/nvjpeg.h" ] || [ -f "$toolkit/targets/x86_64-linux/include/nvjpeg.h" ] && return 0
  local entry name hash
  for entry in "${GPUBENCH_NVJPEG_WHEELS[@]}"; do
    [ "${entry%% *}" = "$major" ] && read -r _ mb name hash prefix <<<"$entry" && pin="$name $hash"
  done
  [ -n "$pin" ] || { log "no nvjpeg.h for CUDA $major (no pinned wheel): no GPU JPEG decode"; return 0; }
  wheel_headers "$pin" "$mb" "$prefix" nvjpeg.h nvjpeg-headers "$GPUBENCH_ROOT/build/deps/nvjpeg-cu$major" ||
    log "nvjpeg.h not installed (downloading or unpacking ${pin%% *} failed): no GPU JPEG decode with CUDA $major"
}

# wheel_headers PIN MB PREFIX HEADER CACHE_NAME DEST: the .h files directly under PREFIX of the
# pinned PyPI wheel (PIN: "name==version --hash=sha256:..."), downloaded once into the cache (the
# wheel dropped, the headers kept), copied to DEST/include with DEST/SOURCE naming the wheel.
# Returns 1 when the download or the unpacking fails (DEST then left alone).
wheel_headers() {
  local pin="$1" mb="$2" prefix="$3" header="$4" cache_name="$5" dest="$6"
  [ -f "$dest/include/$header" ] && return 0
  local name="${pin%% *}"
  local cached="${GPUBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpubench}/$cache_name/${name/==/-}"
  if [ ! -f "$cached/include/$header" ]; then
    log "fetching $header from PyPI $name (a $mb MB wheel, once; only its headers are kept in $cached)"
    local tmp="$cached.tmp"
    rm -rf "$tmp" && mkdir -p "$tmp/wheel"
    echo "$pin" >"$tmp/requirements.txt"
    # The x86_64 wheel on any host: the headers are the same in every wheel, the hash is that one's.
    if ! python3 -m pip download -q --no-cache-dir --disable-pip-version-check --no-deps --only-binary=:all: \
        --platform manylinux_2_27_x86_64 --platform manylinux2014_x86_64 --require-hashes -r "$tmp/requirements.txt" -d "$tmp/wheel" >/dev/null 2>&1 ||
       ! python3 - "$tmp" "$prefix" "$header" <<'PY'
import glob, os, sys, zipfile
tmp, prefix, header = sys.argv[1:4]
(wheel,) = glob.glob(os.path.join(tmp, "wheel", "*.whl"))
os.makedirs(os.path.join(tmp, "include"))
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        name = info.filename[len(prefix):]
        if info.filename.startswith(prefix) and name.endswith(".h") and "/" not in name:
            with open(os.path.join(tmp, "include", name), "wb") as out:
                out.write(z.read(info))
if not os.path.exists(os.path.join(tmp, "include", header)):
    sys.exit(f"no {prefix}{header} in {wheel}")
PY
    then
      rm -rf "$tmp"
      return 1
    fi
    rm -rf "$tmp/wheel" "$tmp/requirements.txt" "$cached"
    mv "$tmp" "$cached"
  fi
  rm -rf "$dest" && mkdir -p "$dest"
  cp -r "$cached/include" "$dest/include"
  echo "PyPI $name" >"$dest/SOURCE"
}

# Compiles through ccache where it is installed. CCACHE_BASEDIR makes the paths in a compile
# command relative to the tree, so the same source compiled for another build folder of the
# same toolkit (build/ci, build/nocuda's e2e tests, another checkout) is a cache hit.
use_ccache() {
  command -v ccache >/dev/null || return 0
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$GPUBENCH_ROOT}"
  # The unit tests' precompiled header (tests/CMakeLists.txt): ccache caches a compile that uses
  # one only with these sloppiness settings (ccache manual, "Precompiled headers").
  export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
}

# build_preset NAME [extra cmake -D...]: configure (once) and build; prints the build folder.
build_preset() {
  local preset="$1"; shift
  if find_cuda; then
    ensure_nvml_header
    ensure_sass_tools
    ensure_cudnn_frontend
    ensure_cudnn_headers "$(cuda_major "$CUDACXX")" "$(dirname "$(dirname "$(readlink -f "$CUDACXX")")")"
    ensure_nvjpeg_headers "$(cuda_major "$CUDACXX")" "$(dirname "$(dirname "$(readlink -f "$CUDACXX")")")"
  fi
  use_ccache
  local jobs="${GPUBENCH_JOBS:-$(nproc)}"
  # GPUBENCH_BUILD_LOG=FILE: the compiler's output goes there, not to the console (run.sh), and
  # only its last lines are shown when the build fails.
  local log_file="${GPUBENCH_BUILD_LOG:-}"
  if [ -n "$log_file" ]; then
    mkdir -p "$(dirname "$log_file")"
    log "building preset $preset (log: ${log_file#"$GPUBENCH_ROOT"/})"
    (cd "$GPUBENCH_ROOT" && cmake --preset "$preset" "$@" && cmake --build "build/$preset" -j "$jobs") >"$log_file" 2>&1 ||
      { tail -n 30 "$log_file" | cut -c1-160 >&2; die "build failed (preset $preset; log: $log_file)"; }
  else
    (cd "$GPUBENCH_ROOT" && cmake --preset "$preset" "$@" >&2 && cmake --build "build/$preset" -j "$jobs" >&2) ||
      die "build failed (preset $preset)"
  fi
  echo "$GPUBENCH_ROOT/build/$preset"
}

# The command word of scripts/cuda12.sh and scripts/nocuda.sh: sets `cmd` to build or test. -h
# prints the script's header comment (lines 2 to LAST); no command or an unknown one exits 2.
read_build_test_command() {  # LAST "$@"
  local last="$1"; shift
  cmd="${1:-}"
  case "$cmd" in
    build|test) ;;
    -h|--help) sed -n "2,${last}p" "$0"; exit 0 ;;
    "") sed -n "2,${last}p" "$0" >&2; exit 2 ;;
    *) printf "[gpubench] %s: unknown command '%s' (accepted: build, test)\n" "$(basename "$0")" "$cmd" >&2; exit 2 ;;
  esac
}

# Re-runs the calling script ("$0" ARGS...) in a private mount namespace (unshare -m; a user
# namespace too when not root) where each DIR is an empty folder, with GUARD=1 in its
# environment so that run goes on; it does not return then. Returns 1 when no mount namespace
# can be made here (the caller decides whether that is fatal).
rerun_with_dirs_hidden() {  # GUARD DIR... -- ARGS...
  local guard="$1"; shift
  local dirs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do dirs+=("$1"); shift; done
  shift
  local ns=(unshare -m)
  [ "$(id -u)" -eq 0 ] || ns=(unshare -Urm)
  "${ns[@]}" true 2>/dev/null || return 1
  local empty="$GPUBENCH_ROOT/build/.empty"  # stays empty: only ever a mount source
  mkdir -p "$empty"
  exec "${ns[@]}" -- env "$guard=1" bash -c '
    empty="$1"; shift; n="$1"; shift
    for d in "${@:1:$n}"; do mount --bind "$empty" "$d" || exit 1; done
    shift "$n"; exec "$@"' _ "$empty" "${#dirs[@]}" "${dirs[@]}" "$0" "$@"
}

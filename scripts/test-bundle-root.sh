#!/usr/bin/env bash
# Proves a bundle (scripts/bundle.sh) self-contained: runs it inside a minimal Debian root made
# with debootstrap (--variant=minbase: no compiler, no dev package, no CUDA, no Python), where
# the only CUDA files are the libraries the bundle names in cuda-libs.txt, copied from this
# machine into /opt/host-cuda-libs (standing in for a GPU host's toolkit lib64 or pip folders).
# Inside the root (chroot), it checks:
#   1. the launcher without the CUDA folder: exit 127, naming every missing required library;
#   2. with the folder (GPUBENCH_CUDA_LIBS): ldd of every bundled program finds every library;
#   3. `gpubench version`;
#   4. a CPU run (memory triad and OpenBLAS sgemm): status ok in the results file;
#   5. `gpu-smoke.sh --dry-run --assume h200`: the plan's closing line;
#   6. without GPUBENCH_CUDA_LIBS, the libraries in pip's folders of a virtual environment
#      (nvidia/cu13/lib, nvidia/nccl/lib under /opt/venv): found there.
#
#   scripts/test-bundle-root.sh [--build DIR] [--bundle DIR] [--root DIR]
#     --build DIR    make the bundle from this build folder (default build/ci)
#     --bundle DIR   use this unpacked bundle instead (gpubench-<version>/)
#     --root DIR     the Debian root, made once and reused (default $GPUBENCH_DEBROOT or
#                    /tmp/gpubench-debroot-<suite>); the suite is this machine's Debian release,
#                    else trixie (its glibc is at least as new as the build machine's)
# Exit status: 0 passed, 1 failed, 77 skipped (printed reason: not root and no sudo, no
# debootstrap, no network to make the root).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root_dir="$(cd "$here/.." && pwd)"
build="$root_dir/build/ci" bundle="" debroot="${GPUBENCH_DEBROOT:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift ;;
    --bundle) bundle="$2"; shift ;;
    --root) debroot="$2"; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test-bundle-root: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
skip() { echo "test-bundle-root: SKIPPED: $*"; exit 77; }
fail() { echo "test-bundle-root: FAILED: $*"; exit 1; }

sudo=""
if [ "$(id -u)" != 0 ]; then
  sudo -n true 2>/dev/null || skip "needs root or passwordless sudo (debootstrap, chroot, mount)"
  sudo="sudo -n"
fi
command -v debootstrap >/dev/null || [ -x /usr/sbin/debootstrap ] || skip "debootstrap is not installed (apt-get install debootstrap)"
source "$here/lib.sh"
suite=$(debian_suite)
debroot="${debroot:-/tmp/gpubench-debroot-$suite}"
debian_root "$debroot" || skip "debootstrap $suite failed (no network to deb.debian.org?): /tmp/debootstrap-$(basename "$debroot").log"
in_root() { $sudo env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root chroot "$debroot" "$@"; }
dev_packages=$(in_root dpkg-query -W -f '${Package}\n' | grep -c -- '-dev$' || true)
echo "== root: $debroot, Debian $suite, $(in_root dpkg-query -W -f '${Package}\n' | wc -l) packages," \
  "$dev_packages dev packages; glibc $(in_root ldd --version | awk 'NR == 1 {print $NF}'); python3: $(in_root sh -c 'command -v python3 || echo none')"
[ "$dev_packages" = 0 ] || fail "the root has dev packages"

# The bundle.
if [ -z "$bundle" ]; then
  [ -x "$build/apps/gpubench/gpubench" ] || fail "no gpubench in $build (build it, or give --bundle)"
  out=$(mktemp -d)
  made_bundle="$out"
  "$here/bundle.sh" --build "$build" --out "$out" || fail "bundle.sh failed"
  bundle=$(ls -d "$out"/gpubench-*/ | sed -n 1p)
fi
bundle="${bundle%/}"
name=$(basename "$bundle")
echo "== bundle: $bundle ($(du -sb "$bundle" | awk '{printf "%.1f MiB", $1 / 1048576}') unpacked)"

# Fresh copies inside the root: the bundle in /opt, the host's CUDA libraries it names.
$sudo rm -rf "$debroot/opt/$name" "$debroot/opt/host-cuda-libs" "$debroot/tmp/smoke"
$sudo cp -a "$bundle" "$debroot/opt/$name"
$sudo mkdir -p "$debroot/opt/host-cuda-libs"
source "$here/cuda-libs.sh"
while read -r kind soname; do
  [ "$kind" = required ] || [ "$kind" = optional ] || continue
  if path=$(CUDA_LIBS_DIRS=$(cuda_libs_candidate_dirs | awk 'NF && !seen[$0]++') cuda_libs_locate "$soname"); then
    # A hard link where the root shares the file system (instant), else a copy.
    $sudo ln "$(readlink -f "$path")" "$debroot/opt/host-cuda-libs/$soname" 2>/dev/null ||
      $sudo cp -L "$path" "$debroot/opt/host-cuda-libs/$soname"
  elif [ "$kind" = required ]; then
    fail "this machine lacks $soname, which the bundle needs: cannot stand in for a GPU host"
  fi
done <"$bundle/cuda-libs.txt"
echo "== host CUDA libraries in the root: $(ls "$debroot/opt/host-cuda-libs" | paste -sd' ' -)"

$sudo mkdir -p "$debroot/proc"
mounted=0
if ! [ -e "$debroot/proc/self" ]; then
  $sudo mount -t proc proc "$debroot/proc" || fail "cannot mount /proc in the root"
  mounted=1
fi
cleanup() {
  [ "$mounted" = 1 ] && $sudo umount "$debroot/proc"
  [ -n "${made_bundle:-}" ] && rm -rf "$made_bundle"
  $sudo rm -rf "$debroot/opt/$name" "$debroot/opt/host-cuda-libs" "$debroot/opt/venv" "$debroot/tmp/smoke"
}
trap cleanup EXIT

failures=0
check() {  # NAME COMMAND...: runs it in the root, shows its output, counts a failure
  local what="$1"; shift
  echo "== $what"
  if ! "$@"; then echo "-- FAILED: $what"; failures=$((failures + 1)); fi
}
launcher="/opt/$name/gpubench"

# 1. Without the CUDA folder the launcher names what is missing and starts nothing.
missing_case() {
  local text rc
  text=$(in_root "$launcher" version 2>&1); rc=$?
  echo "$text"
  [ "$rc" = 127 ] || { echo "exit status $rc, expected 127"; return 1; }
  local s
  for s in $(awk '$1 == "required" {print $2}' "$bundle/cuda-libs.txt"); do
    grep -q "missing CUDA library $s " <<<"$text" || { echo "does not name $s"; return 1; }
  done
}
check "launcher without CUDA libraries: exit 127 naming each" missing_case
with_cuda=(env GPUBENCH_CUDA_LIBS=/opt/host-cuda-libs)
# 2. Every library of every bundled program resolves inside the root.
resolve_case() {
  local prog bad=0
  for prog in "$debroot/opt/$name"/bin/gpubench*; do
    local out
    out=$(in_root env LD_LIBRARY_PATH="/opt/$name/lib:/opt/host-cuda-libs" ldd "/opt/$name/bin/$(basename "$prog")" 2>&1)
    if grep -q "not found" <<<"$out"; then echo "$(basename "$prog"): $(grep 'not found' <<<"$out" | paste -sd' ' -)"; bad=1; fi
    # Nothing may come from outside the bundle, the CUDA folder and the C library.
    local foreign
    foreign=$(awk '$2 == "=>" {print $1, $3}' <<<"$out" | grep -v " /opt/\| /lib/x86_64-linux-gnu/lib\(c\|m\|dl\|rt\|pthread\|resolv\|util\)\.so" || true)
    [ -z "$foreign" ] || { echo "$(basename "$prog") loads from the root's system: $foreign"; bad=1; }
    echo "$(basename "$prog"): $(awk '$2 == "=>"' <<<"$out" | wc -l) libraries, all found"
  done
  return $bad
}
check "ldd of every bundled program inside the root" resolve_case
# 3. version
check "gpubench version" in_root "${with_cuda[@]}" "$launcher" version
# 4. A CPU run, its results file checked.
cpu_run() {
  in_root "${with_cuda[@]}" "$launcher" run --device cpu --suite memory --axis test=triad --axis size=1M --min-time 0.05 \
    --out /tmp/smoke/cpu-memory.json || return 1
  in_root "${with_cuda[@]}" "$launcher" run --device cpu --suite gemm --axis m=128 --axis dtype=fp32 --min-time 0.05 \
    --out /tmp/smoke/cpu-gemm.json || return 1
  local f
  for f in cpu-memory cpu-gemm; do
    grep -q '"status": "ok"' "$debroot/tmp/smoke/$f.json" || { echo "$f.json: no ok entry"; return 1; }
    echo "$f.json: $(grep -c '"status": "ok"' "$debroot/tmp/smoke/$f.json") ok entry(ies)"
  done
}
check "a CPU run inside the root (memory triad, OpenBLAS sgemm)" cpu_run
# 5. The smoke plan for an H200, from inside the bundle.
dry_run_case() {
  local text
  text=$(in_root "${with_cuda[@]}" "/opt/$name/gpu-smoke.sh" --dry-run --assume h200) || { echo "$text"; return 1; }
  echo "$text" | tail -n 4
  [[ "$(tail -n1 <<<"$text")" =~ ^planned:\ [1-9][0-9]*\ cases,\ about\ [0-9]+\ s$ ]]
}
check "gpu-smoke.sh --dry-run --assume h200 inside the root" dry_run_case

# 6. No folder given: the launcher finds the libraries where pip's CUDA wheels put them in a
#    virtual environment (nvidia/cu13/lib, nvidia/nccl/lib; CUDA 12 wheels: nvidia/cublas/lib, ...),
#    as on a PyTorch GPU host. The sonames are the bundle's (a CUDA 12 build's: scripts/cuda12.sh).
pip_layout_case() {
  local venv="$debroot/opt/venv/lib/python3.12/site-packages/nvidia" s dir
  local cublaslt wheel=cu13
  cublaslt=$(awk '$2 ~ /^libcublasLt[.]so[.]/ {print $2}' "$bundle/cuda-libs.txt")
  [[ "$cublaslt" == *.so.12 ]] && wheel=cublas
  $sudo rm -rf "$debroot/opt/venv"
  while read -r kind s; do
    [ "$kind" = required ] || [ "$kind" = optional ] || continue
    [ -e "$debroot/opt/host-cuda-libs/$s" ] || continue
    case "$s" in libnccl*) dir=nccl ;; *) dir=$wheel ;; esac
    $sudo mkdir -p "$venv/$dir/lib"
    $sudo ln "$debroot/opt/host-cuda-libs/$s" "$venv/$dir/lib/$s" 2>/dev/null || $sudo cp "$debroot/opt/host-cuda-libs/$s" "$venv/$dir/lib/"
  done <"$bundle/cuda-libs.txt"
  local text
  text=$(in_root env GPUBENCH_LAUNCHER_VERBOSE=1 "$launcher" version 2>&1) || { echo "$text"; return 1; }
  grep 'launcher' <<<"$text"
  grep -q "$cublaslt from /opt/venv/lib/python3.12/site-packages/nvidia/$wheel/lib/" <<<"$text" &&
    grep -q "libnccl.so.2 from /opt/venv/lib/python3.12/site-packages/nvidia/nccl/lib/" <<<"$text" &&
    grep -q "^gpubench [0-9]" <<<"$text"
}
check "launcher with the libraries in pip's folders of a virtual environment" pip_layout_case
$sudo rm -rf "$debroot/opt/venv"

if [ "$failures" = 0 ]; then echo "test-bundle-root: PASSED (Debian $suite minbase root, bundle $name)"; exit 0; fi
fail "$failures check(s)"

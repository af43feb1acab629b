#!/usr/bin/env bash
# Makes a relocatable bundle for GPU hosts that lack gpubench's build dependencies:
#   bundle/gpubench-<version>/
#     gpubench          launcher: finds the host's CUDA libraries, then runs bin/gpubench
#     bin/              gpubench and the perf peers gpu-smoke.sh runs (gpubench_perf_cublaslt, _memcpy)
#     lib/              every non-CUDA, non-glibc shared library they load (fmt, Boost.Program_options,
#                       Google Benchmark, OpenBLAS and libgfortran, libjpeg-turbo, Open MPI, libstdc++, ...)
#     cuda-libs.txt     the CUDA libraries left to the host: "required SONAME" (linked) or
#                       "optional SONAME" (loaded at run time: CUPTI, Perfworks)
#     cuda-libs.sh, gpu-smoke.sh, smoke_check.py, smoke_allowances.awk, gpu_goals.sh, gpu_goals_check.py
#   and bundle/gpubench-<version>.tar.gz of it.
# CUDA libraries (cuBLAS, cuBLASLt, NCCL, CUPTI) are never copied unless --with-cuda-libs is given
# (libnccl alone is ~218 MB): GPU hosts have them with the toolkit (lib64) or as pip's
# nvidia-* wheels, and the launcher finds them there or names the one that is missing. cudart is
# linked statically; libcuda and libnvidia-ml come from the driver. MPI runs (mpirun) use the
# host's Open MPI launcher and plugins: the bundle carries only the libraries a single process loads.
#
#   scripts/bundle.sh [--build DIR] [--out DIR] [--with-cuda-libs] [--max-mib N] [--cuda 12] [--no-tarball]
#     --cuda 12     build with CUDA 12.4 (scripts/cuda12.sh, build/cuda12-release) for drivers r525 and
#                   newer: bundle/gpubench-<version>-cuda12; its CUDA libraries are the 12.4 toolkit's
#                   (docs/cuda12.md; with --with-cuda-libs 868 MiB: give --max-mib 1024)
#     --build DIR   use this existing build folder (default: build/$GPUBENCH_PRESET, release, built here)
#     --out DIR     where bundle/ goes (default: the checkout's bundle/)
#     --max-mib N   fail when the packed bundle (.tar.gz) is larger (default 64: what one device call carries)
#     --no-tarball  the folder only (scripts/image.sh copies it into an image; packing it is wasted time)
# Prints the measured sizes: the folder, each part, and the .tar.gz.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

with_cuda=0 build="" out_dir="$GPUBENCH_ROOT/bundle" max_mib=64 cuda="" tarball=1
while [ $# -gt 0 ]; do
  case "$1" in
    --with-cuda-libs) with_cuda=1 ;;
    --no-tarball) tarball=0 ;;
    --build) [ $# -ge 2 ] || die "bundle.sh: --build needs a folder"; build="$2"; shift ;;
    --out) [ $# -ge 2 ] || die "bundle.sh: --out needs a folder"; out_dir="$2"; shift ;;
    --max-mib) [[ "${2:-}" =~ ^[0-9]+$ ]] || die "bundle.sh: --max-mib needs a number"; max_mib="$2"; shift ;;
    --cuda) [ "${2:-}" = 12 ] || die "bundle.sh: --cuda takes 12 (without it: the machine's toolkit)"; cuda=12; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "bundle.sh: unknown argument '$1' (accepted: --build DIR, --out DIR, --with-cuda-libs, --max-mib N, --cuda 12, --no-tarball)" ;;
  esac
  shift
done

if [ -z "$build" ] && [ "$cuda" = 12 ]; then
  build=$("$GPUBENCH_ROOT/scripts/cuda12.sh" build)
elif [ -z "$build" ]; then
  ensure_packages "${GPUBENCH_BUILD_PACKAGES[@]}"
  build=$(GPUBENCH_REQUIRE_CUDA=1 build_preset "${GPUBENCH_PRESET:-release}" -DGPUBENCH_BUILD_TESTS=OFF)  # perf/ (the peers) is built regardless
fi
bin="$build/apps/gpubench/gpubench"
[ -x "$bin" ] || die "bundle.sh: no gpubench binary in $build (build it first, or leave out --build)"
programs=("$bin")
for p in gpubench_perf_cublaslt gpubench_perf_memcpy gpubench_perf_chase_gpu; do
  if [ -x "$build/perf/$p" ]; then programs+=("$build/perf/$p"); else log "bundle: $p not built: gpu-smoke.sh's peer step will fail"; fi
done
version=$("$bin" version | awk 'NR == 1 {print $2}')
[ -n "$version" ] || die "bundle.sh: '$bin version' printed no version"
version+="${cuda:+-cuda$cuda}"
mkdir -p "$out_dir"
out_dir="$(cd "$out_dir" && pwd)"
dest="$out_dir/gpubench-$version"
rm -rf "$dest" "$dest.tar.gz"
mkdir -p "$dest/bin" "$dest/lib"

is_cuda_lib() {
  case "$1" in libcublas*|libcublasLt*|libnccl*|libcudart*|libcupti*|libnvperf*|libnvrtc*|libnvJitLink*) return 0 ;; esac
  return 1
}
# The C library and its loader come from the host (a glibc at least as new as the build's; the
# build machine is Debian 12, glibc 2.36), as do the driver's libraries.
is_host_lib() {
  case "$1" in
    linux-vdso.so*|ld-linux*|libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|libresolv.so*|libutil.so*) return 0 ;;
    libcuda.so*|libnvidia-ml.so*) return 0 ;;
  esac
  return 1
}

declare -A required=()
for prog in "${programs[@]}"; do
  cp "$prog" "$dest/bin/"
  # Symbols the GPU host does not need (about 2.5 MiB of the 64 one device call carries).
  if command -v strip >/dev/null; then strip --strip-unneeded "$dest/bin/$(basename "$prog")"; fi
  # ldd lists the whole closure; "not found" is fine for CUDA libraries only (they stay on the host).
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    is_host_lib "$name" && continue
    if is_cuda_lib "$name"; then
      required[$name]=1
      [ "$with_cuda" = 1 ] && [ "$path" != not ] && cp -L "$path" "$dest/lib/$name"
      continue
    fi
    [ "$path" = not ] && die "bundle.sh: $(basename "$prog") needs $name, which is not found on this machine"
    [ -f "$dest/lib/$name" ] || cp -L "$path" "$dest/lib/$name"
  done < <(ldd "$prog")
done
# Loaded at run time (dlopen), so ldd does not list them: CUPTI (trace, metrics, --timer cupti)
# and the Perfworks libraries CUPTI loads for hardware metrics. The CUPTI soname follows the
# CUDA major version gpubench was built with (profilers/cupti/cupti_api.cpp).
cuda_major=$("$bin" version | sed -n 's/.*CUDA runtime \([0-9]*\)\..*/\1/p' | sed -n 1p)
[ -n "$cuda_major" ] || die "bundle.sh: '$bin version' names no CUDA runtime version"
# cuDNN and the shared CUDA runtime: the attention suite's cudnn provider (the cuDNN frontend)
# loads both at run time (a host without them skips those cases with the reason); the launcher
# finds them in the toolkit's folders or pip's nvidia/*/lib.
optional=("libcupti.so.$cuda_major" libnvperf_host.so libnvperf_target.so libcudnn.so.9 "libcudart.so.$cuda_major")
{
  if [ "$with_cuda" = 1 ]; then
    echo "# CUDA libraries gpubench-$version loads: copied into lib/ (--with-cuda-libs); the launcher checks them."
  else
    echo "# CUDA libraries gpubench-$version leaves to the host (scripts/bundle-launcher.sh finds them)."
  fi
  for name in $(printf '%s\n' "${!required[@]}" | sort); do echo "required $name"; done
  for name in "${optional[@]}"; do echo "optional $name"; done
} >"$dest/cuda-libs.txt"
if [ "$with_cuda" = 1 ]; then
  cupti=$(ldconfig -p | awk -v n="${optional[0]}" '$1 == n && p == "" {p = $NF} END {if (p != "") print p}')
  # (|| true: with pipefail, ls naming a missing file would end the script without a word.)
  [ -n "$cupti" ] || cupti=$(ls /usr/local/cuda/lib64/"${optional[0]}" /usr/local/cuda/extras/CUPTI/lib64/"${optional[0]}" 2>/dev/null | sed -n 1p || true)
  if [ "$cuda" = 12 ]; then  # the toolkit built with, not the machine's CUDA 13
    cupti="$(dirname "$("$GPUBENCH_ROOT/scripts/toolkit-cuda12.sh")")/../lib64/${optional[0]}"
  fi
  if [ -n "$cupti" ]; then
    for f in "$cupti" "$(dirname "$cupti")"/libnvperf_host.so "$(dirname "$cupti")"/libnvperf_target.so; do
      [ -f "$f" ] && cp -L "$f" "$dest/lib/$(basename "$f")"
    done
  fi
fi
# bin/gpubench's RPATH is $ORIGIN/lib (apps/gpubench/CMakeLists.txt): through this link it finds
# the bundle's libraries when started directly too (the CUDA ones then need LD_LIBRARY_PATH).
ln -s ../lib "$dest/bin/lib"
cp "$GPUBENCH_ROOT/scripts/bundle-launcher.sh" "$dest/gpubench"
cp "$GPUBENCH_ROOT/scripts/cuda-libs.sh" "$GPUBENCH_ROOT/scripts/gpu-smoke.sh" "$GPUBENCH_ROOT/scripts/smoke_check.py" \
   "$GPUBENCH_ROOT/scripts/smoke_allowances.awk" "$dest/"
cp "$GPUBENCH_ROOT/perf/gpu_goals.sh" "$GPUBENCH_ROOT/perf/gpu_goals_check.py" "$dest/"  # the suites' CUDA goals
chmod +x "$dest/gpubench" "$dest/gpu-smoke.sh" "$dest/smoke_check.py" "$dest/gpu_goals.sh" "$dest/gpu_goals_check.py"
[ "$tarball" = 1 ] && tar -C "$out_dir" -czf "$dest.tar.gz" "gpubench-$version"

mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
total=$(du -sb "$dest" | awk '{print $1}')
log "bundle: $dest"
log "  bin/: $(mib "$(du -sb "$dest/bin" | awk '{print $1}')") ($(cd "$dest/bin" && ls | grep -vx lib | paste -sd' ' -))"
log "  lib/: $(mib "$(du -sb "$dest/lib" | awk '{print $1}')") in $(ls "$dest/lib" | wc -l) libraries; largest: $(cd "$dest/lib" && ls -S | sed -n 1,3p | paste -sd' ' -)"
if [ "$tarball" = 0 ]; then
  log "  unpacked: $(mib "$total") (no tarball: --no-tarball)"
  exit 0
fi
log "  unpacked: $(mib "$total"); $dest.tar.gz: $(mib "$(stat -c %s "$dest.tar.gz")")"
log "  CUDA libraries $([ "$with_cuda" = 1 ] && echo "bundled" || echo "left to the host"): $(grep -v '^#' "$dest/cuda-libs.txt" | paste -sd',' - | sed 's/,/, /g')"
log "on the GPU host: tar xzf gpubench-$version.tar.gz && gpubench-$version/gpu-smoke.sh"
# What a device call carries is the tarball (beside the checkout's tracked files, about 5 MiB):
# the limit is on it. The unpacked folder stays on the GPU host.
packed=$(stat -c %s "$dest.tar.gz")
if [ "$packed" -gt $((max_mib * 1048576)) ]; then
  die "bundle.sh: the bundle's tarball is $(mib "$packed"), over the limit of $max_mib MiB (--max-mib)"
fi

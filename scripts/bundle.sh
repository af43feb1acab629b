#!/usr/bin/env bash
# Makes a relocatable bundle for GPU hosts that lack the build dependencies:
#   bundle/gpubench-<version>/{gpubench, lib/*.so*, gpu-smoke.sh} and a .tar.gz of it.
# The binary finds lib/ through its RPATH ($ORIGIN/lib). CUDA libraries (cuBLAS) are not
# bundled unless --with-cuda-libs is given: GPU hosts normally have them with the toolkit or
# the driver's CUDA runtime packages. cudart is linked statically; libcuda comes from the driver.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

with_cuda=0
for a in "$@"; do
  case "$a" in
    --with-cuda-libs) with_cuda=1 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) die "bundle.sh: unknown argument '$a' (accepted: --with-cuda-libs)" ;;
  esac
done

ensure_packages "${GPUBENCH_BUILD_PACKAGES[@]}"
build=$(build_preset "${GPUBENCH_PRESET:-release}" -DGPUBENCH_BUILD_TESTS=OFF)
bin="$build/apps/gpubench/gpubench"
version=$("$bin" version | head -n1 | awk '{print $2}')
dest="$GPUBENCH_ROOT/bundle/gpubench-$version"
rm -rf "$dest"
mkdir -p "$dest/lib"
cp "$bin" "$dest/gpubench"
cp "$GPUBENCH_ROOT/scripts/gpu-smoke.sh" "$dest/"

# Copy every shared library the binary loads except glibc's, the C++ runtime's loader basics,
# and (unless asked) CUDA's.
ldd "$bin" | awk '/=> \// {print $1, $3}' | while read -r name path; do
  case "$name" in
    libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libgcc_s.so*) continue ;;
    libcublas*|libcudart*|libcuda.so*) [ "$with_cuda" = 1 ] || continue ;;
  esac
  cp -L "$path" "$dest/lib/$name"
done
# libcupti is loaded at run time (--profile trace,metrics), so ldd does not list it.
if [ "$with_cuda" = 1 ]; then
  cupti=$(ldconfig -p | awk '/libcupti\.so\.[0-9]+ / {print $NF; exit}')
  if [ -n "$cupti" ]; then
    cp -L "$cupti" "$dest/lib/$(basename "$cupti")"
    # CUPTI loads the Perfworks libraries itself for hardware metrics.
    for f in "$(dirname "$cupti")"/libnvperf_host.so "$(dirname "$cupti")"/libnvperf_target.so; do
      [ -f "$f" ] && cp -L "$f" "$dest/lib/"
    done
  fi
fi
# libstdc++ is bundled too (copied above) so older distributions run it.
tar -C "$GPUBENCH_ROOT/bundle" -czf "$GPUBENCH_ROOT/bundle/gpubench-$version.tar.gz" "gpubench-$version"
log "bundle: $dest (and bundle/gpubench-$version.tar.gz)"
log "on the GPU host: tar xzf gpubench-$version.tar.gz && gpubench-$version/gpu-smoke.sh"

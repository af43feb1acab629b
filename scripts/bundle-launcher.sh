#!/usr/bin/env bash
# The `gpubench` of a bundle (scripts/bundle.sh copies this file there as gpubench-<version>/gpubench).
# Runs bin/gpubench with the bundle's own libraries (lib/) first, then the host's CUDA libraries
# wherever the host keeps them (the toolkit's lib64, pip's nvidia/*/lib folders, ...: see
# cuda-libs.sh), since the bundle carries none of them. The sonames come from cuda-libs.txt,
# written by bundle.sh from the binary itself. A required library the host lacks is named, with
# where it was looked for, and the launcher exits 127 without starting gpubench.
#   GPUBENCH_CUDA_LIBS=DIR[:DIR]   look there first
#   GPUBENCH_LAUNCHER_VERBOSE=1    print which library was taken from where (stderr)
#   GPUBENCH_BIN=NAME              run bin/NAME instead of bin/gpubench (the bundled perf peers)
set -euo pipefail
here="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
source "$here/cuda-libs.sh"
required="" optional=""
# cuda-libs.txt: "required SONAME" (linked: gpubench cannot start without it) or "optional SONAME"
# (loaded at run time for one feature: gpubench says which feature is off without it).
while read -r kind soname; do
  case "$kind" in
    required) required+=" $soname" ;;
    optional) optional+=" $soname" ;;
  esac
done <"$here/cuda-libs.txt"
# A bundle made with --with-cuda-libs carries them in lib/: looked at first, as the loader will.
GPUBENCH_CUDA_LIBS="$here/lib${GPUBENCH_CUDA_LIBS:+:$GPUBENCH_CUDA_LIBS}"
if ! cuda_libs_find "$required" "$optional"; then
  for s in $CUDA_LIBS_MISSING; do
    echo "gpubench: missing CUDA library $(cuda_libs_describe "$s")" >&2
  done
  echo "gpubench: looked in: $(echo "$CUDA_LIBS_DIRS" | paste -sd' ' -) and ldconfig's cache;" \
    "set GPUBENCH_CUDA_LIBS=DIR to the folder that holds it" >&2
  exit 127
fi
if [ "${GPUBENCH_LAUNCHER_VERBOSE:-0}" = 1 ]; then
  printf '%s' "$CUDA_LIBS_FOUND" | sed 's/^/gpubench launcher: /; s/=/ from /' >&2
  for s in $CUDA_LIBS_OPTIONAL_MISSING; do echo "gpubench launcher: not found (optional): $(cuda_libs_describe "$s")" >&2; done
fi
export LD_LIBRARY_PATH="$here/lib${CUDA_LIBS_PATH:+:$CUDA_LIBS_PATH}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$here/bin/${GPUBENCH_BIN:-gpubench}" "$@"

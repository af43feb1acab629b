#!/usr/bin/env bash
# Builds gpubench's OCI image from what this machine has (no registry, no pull): a minimal Debian
# root (debootstrap --variant=minbase), the bundle (scripts/bundle.sh) in /opt/gpubench with the
# CUDA user-space libraries it loads (cuBLAS/cuBLASLt, NCCL, CUPTI and Perfworks, the shared CUDA
# runtime, cuDNN with the NVRTC its runtime-compiled engines need) copied from the toolkit it was
# built with. The driver's libraries (libcuda, libnvidia-ml) are not in it: the NVIDIA Container
# Toolkit (docker --gpus, CDI), the Kubernetes device plugin, pyxis/enroot or Apptainer's --nv put
# the host's in at start. One image for Kubernetes and Slurm alike (docs/containers.md).
#
#   scripts/image.sh [--cuda 13|12] [--tag NAME] [--build DIR] [--mpi] [--without-cudnn] [--cudnn-libs DIR]
#                    [--save FILE]
#     --cuda 12        the CUDA 12.4 build (drivers r525 and newer; scripts/cuda12.sh, docs/cuda12.md)
#     --tag NAME       the image's name (default gpubench:cuda13, gpubench:cuda12, with -mpi for --mpi)
#     --build DIR      bundle this existing build folder (default: bundle.sh's own, a release build)
#     --mpi            add openssh-server and Open MPI's mpirun (openmpi-bin): what the Kubeflow MPI
#                      Operator's launcher and workers need (deploy/kubernetes/collectives-mpijob.yaml)
#     --without-cudnn  leave cuDNN out (about 490 MiB; the attention suite's cudnn provider then
#                      skips its cases with the reason)
#     --cudnn-libs DIR take cuDNN from DIR (the lib/ of PyPI's nvidia-cudnn-cu12 or -cu13 wheel). Without it
#                      CUDA 13 takes the toolkit's; CUDA 12 looks only in the 12.4 toolkit, which has
#                      none, so a CUDA 12 image has cuDNN only with this option (docs/containers.md)
#     --save FILE      also write the image as an OCI archive (podman save --format oci-archive), for
#                      `enroot import`, `apptainer build` or a registry
# Prints the image's size and what it is made of. The CUDA libraries' versions are read from the
# image's own `gpubench version` and recorded in its labels (io.gpubench.*).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

cuda=13 tag="" build="" mpi=0 cudnn=1 save="" cudnn_libs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cuda) [[ "${2:-}" =~ ^(12|13)$ ]] || die "image.sh: --cuda takes 12 or 13"; cuda="$2"; shift ;;
    --tag) [ -n "${2:-}" ] || die "image.sh: --tag needs a name"; tag="$2"; shift ;;
    --build) [ -n "${2:-}" ] || die "image.sh: --build needs a folder"; build="$2"; shift ;;
    --mpi) mpi=1 ;;
    --without-cudnn) cudnn=0 ;;
    --cudnn-libs) [ -d "${2:-}" ] || die "image.sh: --cudnn-libs needs a folder"; cudnn_libs="$(cd "$2" && pwd)"; shift ;;
    --save) [ -n "${2:-}" ] || die "image.sh: --save needs a file"; save="$2"; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "image.sh: unknown argument '$1' (accepted: --cuda 13|12, --tag NAME, --build DIR, --mpi, --without-cudnn, --cudnn-libs DIR, --save FILE)" ;;
  esac
  shift
done
tag="${tag:-gpubench:cuda$cuda$([ "$mpi" = 1 ] && echo -mpi)}"
[ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null || die "image.sh: needs root or passwordless sudo (debootstrap, the root's files)"
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo -n"
ensure_packages podman debootstrap
start=$SECONDS

# 1. The Debian root, made once per variant and reused (copied below: it stays clean).
suite=$(debian_suite)
packages="" root="${GPUBENCH_DEBROOT:-/tmp/gpubench-debroot-$suite}"
if [ "$mpi" = 1 ]; then
  # Open MPI from the same Debian release as the build's libmpi; sshd for mpirun's remote starts.
  packages="openssh-server,openmpi-bin"
  root="/tmp/gpubench-debroot-$suite-mpi"
fi
debian_root "$root" "$packages" || die "image.sh: debootstrap failed (no network to deb.debian.org?)"

# 2. The bundle, with the CUDA libraries it links and loads (bundle.sh names them in cuda-libs.txt).
work=$(mktemp -d /tmp/gpubench-image.XXXXXX)
trap '$sudo rm -rf "$work"' EXIT
bundle_args=(--out "$work/bundle" --with-cuda-libs --no-tarball)
[ -n "$build" ] && bundle_args+=(--build "$build")
[ "$cuda" = 12 ] && bundle_args+=(--cuda 12)
"$GPUBENCH_ROOT/scripts/bundle.sh" "${bundle_args[@]}" >&2
bundle=$(ls -d "$work"/bundle/gpubench-*/ | sed -n 1p)
bundle="${bundle%/}"
cuda_major=$("$bundle/bin/gpubench" version 2>/dev/null | sed -n 's/.*CUDA runtime \([0-9]*\)\..*/\1/p' | sed -n 1p || true)
[ "$cuda_major" = "$cuda" ] || die "image.sh: the bundled gpubench is built with CUDA ${cuda_major:-unknown}, not $cuda (give --build a CUDA $cuda build folder)"

# The libraries bundle.sh leaves to the host even with --with-cuda-libs: the shared CUDA runtime
# and cuDNN (loaded by the cuDNN frontend at run time), and NVRTC, which cuDNN's runtime-compiled
# engines need. cuDNN 9 needs all its sub-libraries unless CUDNN_LIB_CONFIG says otherwise
# (cuDNN frontend docs, "cuDNN Library Configuration"). Found where the launcher would find them.
source "$GPUBENCH_ROOT/scripts/cuda-libs.sh"
extra=("libcudart.so.$cuda")
if [ "$cudnn" = 1 ]; then
  extra+=(libcudnn.so.9 libcudnn_graph.so.9 libcudnn_engines_precompiled.so.9 libcudnn_engines_runtime_compiled.so.9
          libcudnn_heuristic.so.9 libcudnn_ops.so.9 libcudnn_cnn.so.9 libcudnn_adv.so.9 "libnvrtc.so.$cuda")
fi
if [ "$cuda" = 12 ]; then
  # Only the CUDA 12.4 toolkit the build used: this machine's other folders hold CUDA 13 builds
  # of the same sonames (cuDNN 9 for CUDA 13 would load, and fail, in a CUDA 12 image).
  dirs="$(cd "$(dirname "$("$GPUBENCH_ROOT/scripts/toolkit-cuda12.sh")")/../lib64" && pwd)"
else
  dirs=$(cuda_libs_candidate_dirs | awk 'NF && !seen[$0]++')
fi
[ -n "$cudnn_libs" ] && dirs="$cudnn_libs"$'\n'"$dirs"
locate() {  # SONAME: the first of $dirs that holds it; CUDA 13 also asks ldconfig's cache
  local d
  while IFS= read -r d; do
    [ -n "$d" ] && [ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
  done <<<"$dirs"
  [ "$cuda" = 13 ] && CUDA_LIBS_DIRS="" cuda_libs_locate "$1"
}
missing=()
for soname in "${extra[@]}"; do
  [ -f "$bundle/lib/$soname" ] && continue
  if path=$(locate "$soname"); then
    cp -L "$path" "$bundle/lib/$soname"
    # NVRTC loads its builtins library by name at run time.
    if [[ "$soname" == libnvrtc.so.* ]]; then
      for b in "$(dirname "$path")"/libnvrtc-builtins.so.*; do [ -f "$b" ] && cp -L "$b" "$bundle/lib/"; done
    fi
  else
    missing+=("$soname")
  fi
done
[ ${#missing[@]} -eq 0 ] || log "image: not found on this machine, left out of the image: ${missing[*]} (the features that load them say so at run time)"

# 3. The image's file system: the root, trimmed of what a benchmark never reads, and the bundle.
rootfs="$work/rootfs"
$sudo cp -a "$root" "$rootfs"
$sudo rm -rf "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
  "$rootfs"/usr/share/locale/* "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/* \
  "$rootfs"/opt/* "$rootfs"/tmp/*
$sudo cp -a "$bundle" "$rootfs/opt/gpubench"
$sudo ln -sf /opt/gpubench/gpubench "$rootfs/usr/local/bin/gpubench"
# Writable by any user (sticky, as /tmp): the Kubernetes manifests run it as uid 1000.
$sudo mkdir -p "$rootfs/work" "$rootfs/results"
$sudo chmod 1777 "$rootfs/work" "$rootfs/results"
if [ "$mpi" = 1 ]; then
  # What the MPI Operator's launcher and workers expect of sshd and ssh (as its own base image
  # sets them): sshd -D refuses to start without /run/sshd; the operator's keys are mounted with
  # group-readable modes (StrictModes no); workers' host keys are new to the launcher each run.
  $sudo mkdir -p "$rootfs/run/sshd" "$rootfs/etc/ssh/sshd_config.d" "$rootfs/etc/ssh/ssh_config.d"
  printf 'StrictModes no\n' | $sudo tee "$rootfs/etc/ssh/sshd_config.d/gpubench-mpi-operator.conf" >/dev/null
  printf 'Host *\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n' |
    $sudo tee "$rootfs/etc/ssh/ssh_config.d/gpubench-mpi-operator.conf" >/dev/null
fi

# 4. What is in it, read from the image's own gpubench (in the root, as the container will run it).
$sudo mkdir -p "$rootfs/proc"
$sudo mount -t proc proc "$rootfs/proc"
version_text=$($sudo env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root chroot "$rootfs" gpubench version 2>&1) || {
  $sudo umount "$rootfs/proc"; die "image.sh: gpubench version failed inside the image's root: $version_text"; }
$sudo umount "$rootfs/proc"
field() { printf '%s\n' "$version_text" | sed -n "s/^$1: \([^ ]*\).*/\1/p" | sed -n 1p; }
gpubench_version=$(printf '%s\n' "$version_text" | awk 'NR == 1 {print $2}')
runtime=$(printf '%s\n' "$version_text" | sed -n 's/^CUDA runtime \([0-9.]*\).*/\1/p')
labels=(
  "org.opencontainers.image.title=gpubench"
  "org.opencontainers.image.description=GPU benchmarks: gpubench $gpubench_version, CUDA $runtime user-space libraries; the driver's come from the host"
  "org.opencontainers.image.version=$gpubench_version"
  "org.opencontainers.image.revision=$(git -C "$GPUBENCH_ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
  "org.opencontainers.image.created=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  "io.gpubench.cuda.runtime=$runtime"
  "io.gpubench.cuda.cublas=$(field cublas)"
  "io.gpubench.cuda.nccl=$(field nccl)"
  "io.gpubench.cuda.cudnn=$(field cudnn | grep -E '^[0-9]' || echo none)"
  "io.gpubench.minimum-driver=$(printf '%s\n' "$version_text" | sed -n 's/^minimum NVIDIA driver: \([0-9.]*\).*/\1/p')"
  "io.gpubench.debian=$suite"
  "io.gpubench.mpi=$([ "$mpi" = 1 ] && printf '%s\n' "$version_text" | sed -n 's/^mpi: //p' | sed -n 1p || echo none)"
)

# 5. The image: the file system as one layer, the launcher as its entrypoint.
changes=(--change 'ENTRYPOINT ["/opt/gpubench/gpubench"]' --change 'CMD ["--help"]' --change 'WORKDIR /work'
  # What the NVIDIA Container Toolkit reads to inject the GPUs and the driver's compute (libcuda,
  # PTX JIT) and utility (NVML) libraries.
  --change 'ENV NVIDIA_VISIBLE_DEVICES=all' --change 'ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility'
  --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin')
for l in "${labels[@]}"; do changes+=(--change "LABEL $l"); done
previous=$(podman image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
$sudo tar -C "$rootfs" -c . | podman import "${changes[@]}" - "$tag" >/dev/null
# The image this tag named before, now untagged: removed unless a container still uses it.
[ -n "$previous" ] && [ "$previous" != "$(podman image inspect --format '{{.Id}}' "$tag")" ] &&
  podman rmi "$previous" >/dev/null 2>&1 || true
[ -n "$save" ] && podman save --format oci-archive -o "$save" "$tag"

mib() { awk -v b="$1" 'BEGIN { printf "%.0f MiB", b / 1048576 }'; }
size=$(podman image inspect --format '{{.Size}}' "$tag")
cuda_bytes=$(cd "$bundle/lib" && du -cb $(ls | grep -E '^lib(cublas|nccl|cupti|nvperf|cudart|cudnn|nvrtc)') | tail -n1 | awk '{print $1}')
log "image $tag: $(mib "$size") ($(printf '%s\n' "$version_text" | sed -n 1p))"
bundle_bytes=$(du -sb "$bundle" | awk '{print $1}')
log "  Debian $suite minbase root${packages:+ with $packages}: $(mib $(( $($sudo du -sb "$rootfs" | awk '{print $1}') - bundle_bytes )))"
log "  /opt/gpubench: $(mib "$bundle_bytes"), of which CUDA libraries $(mib "$cuda_bytes"): $(cd "$bundle/lib" && ls -S | grep -E '^lib(cublas|nccl|cupti|nvperf|cudart|cudnn|nvrtc)' | paste -sd' ' -)"
for l in "${labels[@]}"; do case "$l" in io.gpubench.*) log "  label $l" ;; esac; done
[ -n "$save" ] && log "  OCI archive: $save ($(mib "$(stat -c %s "$save")"))"
log "image built in $((SECONDS - start)) s; run it: podman run --rm --device nvidia.com/gpu=all $tag doctor (docs/containers.md)"

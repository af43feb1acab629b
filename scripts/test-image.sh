#!/usr/bin/env bash
# Builds gpubench's OCI image (scripts/image.sh) and proves it with podman, as a cluster would run
# it but without a GPU or a network (docs/containers.md):
#   1. `version` prints gpubench and its CUDA runtime; `--help` works; the labels name the CUDA
#      libraries' versions, and they match what `version` prints inside;
#   2. `doctor` exits with its usual codes and names the driver libraries the container lacks;
#   3. a CPU `run` writes its results file to a mounted folder (status ok gemm entries), which
#      `gpubench report` reads outside the container;
#   4. `evaluate --dry-run --assume h100-sxm:8` plans a whole node;
#   5. with --mpi: the MPI variant (--without-cudnn, to keep it light) has sshd and mpirun, and
#      `mpirun -np 2` inside it runs a CPU collectives case over two ranks;
#   6. with --cuda12 DIR: the CUDA 12.4 image from that build folder prints its CUDA 12 runtime
#      and passes doctor.
# Podman runs with the runc runtime and no default ulimits (this machine kind's cgroups refuse
# crun and the default rlimits: a containers.conf of its own, the machine's is not touched).
#
#   scripts/test-image.sh [--build DIR] [--mpi] [--cuda12 DIR] [--keep]
#     --build DIR    the CUDA 13 build folder to bundle (default build/ci)
#     --keep         keep the test images (gpubench:test, gpubench:test-mpi, gpubench:test-cuda12)
# Exit status: 0 passed, 1 failed, 77 skipped (printed reason: not root, no network for debootstrap).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
build="$GPUBENCH_ROOT/build/ci" mpi=0 cuda12="" keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift ;;
    --mpi) mpi=1 ;;
    --cuda12) cuda12="$2"; shift ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test-image: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
skip() { echo "test-image: SKIPPED: $*"; exit 77; }
[ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null || skip "needs root or passwordless sudo (debootstrap, podman)"
[ -x "$build/apps/gpubench/gpubench" ] || { echo "test-image: FAILED: no gpubench in $build"; exit 1; }
ensure_packages podman runc debootstrap
gpubench_host="$build/apps/gpubench/gpubench"

conf_dir=$(mktemp -d /tmp/gpubench-test-image.XXXXXX)
out="$conf_dir/out"
mkdir -p "$out"
printf '[containers]\ndefault_ulimits = []\n[engine]\nruntime = "runc"\n' >"$conf_dir/containers.conf"
export CONTAINERS_CONF="$conf_dir/containers.conf"
images=()
cleanup() {
  [ "$keep" = 1 ] || for i in "${images[@]}"; do podman rmi -f "$i" >/dev/null 2>&1; done
  rm -rf "$conf_dir"
}
trap cleanup EXIT

failures=0
check() {  # NAME COMMAND...: runs it, shows its output, counts a failure
  local what="$1"; shift
  echo "== $what"
  if ! "$@"; then echo "-- FAILED: $what"; failures=$((failures + 1)); fi
}
in_image() { local image="$1"; shift; podman run --rm --network=none "$image" "$@"; }

build_image() {  # TAG ARGS...: scripts/image.sh, its size and time printed
  local tag="$1"; shift
  local start=$SECONDS
  local log_file="$conf_dir/image-${tag//[:\/]/_}.log"
  "$here/image.sh" --tag "$tag" "$@" >"$log_file" 2>&1
  local rc=$?
  grep -E '^\[gpubench\] (  |image|error)' "$log_file"
  [ "$rc" = 0 ] && podman image exists "$tag" || { echo "image.sh exited $rc and made no image $tag:"; tail -n 15 "$log_file"; return 1; }
  images+=("$tag")
  echo "-- $tag built in $((SECONDS - start)) s"
}
if ! build_image gpubench:test --build "$build"; then
  grep -q 'debootstrap failed' /tmp/debootstrap-*.log 2>/dev/null && skip "debootstrap failed (no network to deb.debian.org?)"
  echo "test-image: FAILED: scripts/image.sh"; exit 1
fi
tag=gpubench:test

# 1. version, help, labels.
version_case() {
  local text
  text=$(in_image "$tag" version) || { echo "$text"; return 1; }
  sed -n 1,4p <<<"$text"
  grep -q '^gpubench [0-9]' <<<"$text" && grep -q '^CUDA runtime 13\.' <<<"$text" || return 1
  # The labels record what the image's gpubench loads.
  local label
  for lib in cublas nccl cudnn; do
    label=$(podman image inspect --format "{{ index .Labels \"io.gpubench.cuda.$lib\" }}" "$tag")
    echo "label io.gpubench.cuda.$lib=$label"
    grep -q "^$lib: $label" <<<"$text" || { echo "version inside prints no '$lib: $label'"; return 1; }
  done
}
check "version inside the image: gpubench, CUDA runtime 13, libraries as labelled" version_case
help_case() { local text; text=$(in_image "$tag" --help) || return 1; grep -q 'evaluate' <<<"$text"; }
check "--help inside the image" help_case

# 2. doctor without a GPU: its usual exit code (0: nothing blocking), the missing libraries named.
doctor_case() {
  local text rc
  text=$(in_image "$tag" doctor 2>&1); rc=$?
  grep -E 'container|driver' <<<"$text" | sed -n 1,4p
  [ "$rc" = 0 ] || { echo "doctor exited $rc"; return 1; }
  grep -q 'in a podman container' <<<"$text" &&
    grep -q 'libcuda.so.1, libnvidia-ml.so.1, libnvidia-ptxjitcompiler.so.1 not found' <<<"$text" &&
    grep -q -- '--device nvidia.com/gpu=all' <<<"$text"
}
check "doctor inside the image names the missing driver libraries" doctor_case

# 3. A CPU run whose results file lands in a mounted folder, read by report outside.
run_case() {
  podman run --rm --network=none -v "$out:/out" "$tag" run --device cpu --preset quick --suite gemm --out /out/r.json \
    >"$conf_dir/run.log" 2>&1 || { tail -n 20 "$conf_dir/run.log"; return 1; }
  python3 - "$out/r.json" <<'EOF' || return 1
import json, sys
doc = json.load(open(sys.argv[1]))
entries = [b["gpubench"] for b in doc["benchmarks"] if "gpubench" in b]
ok = [e for e in entries if e.get("suite") == "gemm" and e.get("status") == "ok"]
bad = [e for e in entries if e.get("status") not in ("ok", "skipped")]
print(f"{len(ok)} ok gemm entries, {len(bad)} failed, of {len(entries)}")
sys.exit(0 if ok and not bad else 1)
EOF
  "$gpubench_host" report "$out/r.json" --format md --out "$out/r.md" >/dev/null && grep -q gemm "$out/r.md" &&
    echo "report outside the container: $(wc -l <"$out/r.md") lines"
}
check "a CPU gemm run to a mounted folder, reported outside" run_case

# The Kubernetes manifests run it as uid 1000 without a passwd entry or HOME.
nonroot_case() {
  mkdir -p "$out/nonroot" && chmod 777 "$out/nonroot"
  podman run --rm --network=none --user 1000:1000 -v "$out/nonroot:/results" "$tag" run --device cpu --preset quick \
    --suite memory -a test=triad --out /results/m.json >"$conf_dir/nonroot.log" 2>&1 || { tail -n 20 "$conf_dir/nonroot.log"; return 1; }
  grep -q '"status": "ok"' "$out/nonroot/m.json" && echo "uid 1000: $(grep -c '"status": "ok"' "$out/nonroot/m.json") ok entries"
}
check "as uid 1000 (the Kubernetes manifests' user)" nonroot_case

# 4. A whole node's evaluation, planned.
evaluate_case() {
  local text
  text=$(in_image "$tag" evaluate --dry-run --assume h100-sxm:8 2>&1) || { echo "$text" | tail -n 5; return 1; }
  echo "$text" | tail -n 2
  grep -q 'screen' <<<"$text"
}
check "evaluate --dry-run --assume h100-sxm:8 inside the image" evaluate_case

# 5. The MPI variant: sshd, mpirun, two ranks in one container.
if [ "$mpi" = 1 ]; then
  if build_image gpubench:test-mpi --build "$build" --mpi --without-cudnn; then
    mpi_case() {
      podman run --rm --network=none --entrypoint /bin/sh gpubench:test-mpi -c \
        'test -x /usr/sbin/sshd && command -v mpirun && mpirun --version | sed -n 1p &&
         /usr/sbin/sshd -t && /usr/sbin/sshd -T | grep -x "strictmodes no" &&
         ssh -G worker-0 | grep -x "stricthostkeychecking false"' || return 1
      podman run --rm --network=none -v "$out:/out" --entrypoint mpirun gpubench:test-mpi --allow-run-as-root \
        --oversubscribe -np 2 gpubench run --device cpu --suite collectives --preset quick \
        -a op=all_reduce -a size=4096,262144 --out /out/c.json >"$conf_dir/mpi.log" 2>&1 || { tail -n 20 "$conf_dir/mpi.log"; return 1; }
      python3 - "$out/c.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
entries = [b["gpubench"] for b in doc["benchmarks"] if "gpubench" in b]
ok = [e for e in entries if e.get("suite") == "collectives" and e.get("status") == "ok"]
print(f"{len(ok)} ok collectives entries over mpirun -np 2")
sys.exit(0 if ok else 1)
EOF
    }
    check "the MPI variant: sshd, mpirun, a two-rank CPU collective" mpi_case
  else
    echo "-- FAILED: the MPI variant's image"; failures=$((failures + 1))
  fi
fi

# 6. The CUDA 12.4 image.
if [ -n "$cuda12" ]; then
  if build_image gpubench:test-cuda12 --cuda 12 --build "$cuda12" --without-cudnn; then
    cuda12_case() {
      local text
      text=$(in_image gpubench:test-cuda12 version) || return 1
      echo "$text" | sed -n '3,4p'
      grep -q '^CUDA runtime 12\.4' <<<"$text" && in_image gpubench:test-cuda12 doctor >/dev/null
    }
    check "the CUDA 12.4 image: version and doctor" cuda12_case
  else
    echo "-- FAILED: the CUDA 12.4 image"; failures=$((failures + 1))
  fi
fi

if [ "$failures" = 0 ]; then echo "test-image: PASSED (${images[*]})"; exit 0; fi
echo "test-image: FAILED: $failures check(s)"
exit 1

#!/usr/bin/env bash
# Assembles a CUDA 12.4 toolkit into DIR (default: ~/.cache/gpubench/cuda-12.4) and prints its nvcc's
# path, so a machine that has only CUDA 13 can build gpubench for the drivers of the CUDA 12 era
# (r525 and newer; see docs/cuda12.md):
#   nvcc=$(scripts/toolkit-cuda12.sh) && scripts/cuda12.sh build     # or by hand, see docs/cuda12.md
# The compiler (nvcc, cicc, ptxas, cudafe++, fatbinary, nvlink) and the static CUDA runtime come
# from Debian trixie's non-free packages, fetched through a private APT configuration (its own
# sources list and state folder: the machine's apt is not touched); headers and shared libraries
# from NVIDIA's PyPI *-cu12 wheels. Every file is pinned by version and SHA-256. Idempotent: a
# finished DIR (its .complete stamp names this manifest) is reused as it is; downloads are cached
# in ~/.cache/gpubench/downloads. Needs curl-less tools only: apt-get, dpkg-deb, python3 -m pip.
set -euo pipefail

GPUBENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${GPUBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpubench}"
dir="${1:-$cache/cuda-12.4}"
case "$dir" in -h|--help) sed -n '2,11p' "$0"; exit 0 ;; esac

log() { printf '[toolkit-cuda12] %s\n' "$*" >&2; }
die() { printf '[toolkit-cuda12] error: %s\n' "$*" >&2; exit 1; }

# Debian trixie non-free (https://packages.debian.org/trixie/nvidia-cuda-toolkit): name, version,
# SHA-256 of the .deb. The snapshot archive keeps these versions when trixie moves on.
DEBS=(
  "nvidia-cuda-toolkit 12.4.131~12.4.1-2 cd5fe85aee38d108b315f408a688641478f2402622a10c677478eb7a6c4e5319"
  "nvidia-cuda-dev 12.4.127~12.4.1-2 d846838f914a0176948d48a8bcade5d6dbcccb5c9374343f6475f5503f173ee0"
)
DEBIAN_MIRROR="http://deb.debian.org/debian"
DEBIAN_SNAPSHOT="http://snapshot.debian.org/archive/debian/20250901T000000Z"
# PyPI wheels (pip download --require-hashes): headers and shared libraries of CUDA 12.4.
WHEELS=(
  "nvidia-cuda-nvcc-cu12==12.4.131 --hash=sha256:e4c9a35435c3b0e36c6397c5696334c9ea6650e524736cbd1c5d345ea099bb04"
  "nvidia-cuda-runtime-cu12==12.4.127 --hash=sha256:64403288fa2136ee8e467cdc9c9427e0434110899d07c779f25b5c068934faa5"
  "nvidia-cublas-cu12==12.4.5.8 --hash=sha256:2fc8da60df463fdefa81e323eef2e36489e1c94335b5358bcb38360adf75ac9b"
  "nvidia-cuda-cupti-cu12==12.4.127 --hash=sha256:9dec60f5ac126f7bb551c055072b69d85392b13311fcc1bcda2202d172df30fb"
  "nvidia-nvtx-cu12==12.4.127 --hash=sha256:781e950d9b9f60d8241ccea575b32f5105a5baf4c2351cab5256a24869f12a1a"
  "nvidia-cuda-cccl-cu12==12.4.127.post1 --hash=sha256:2027fa5fc75fbee703bf24e8275a40a605cf94a3e8fef8a7187897d49b34facb"
  "nvidia-nvml-dev-cu12==12.4.127 --hash=sha256:f3d070140734992f018d46b5fc1663495898637534b94a87cec64bf12bdc584c"
  "nvidia-nccl-cu12==2.21.5 --hash=sha256:8579076d30a8c24988834445f8d633c697d42397e92ffc3f63fa26766d25e0a0"
  # nvrtc.h: the cuDNN frontend's headers include it (they load libnvrtc at run time, as NVIDIA's
  # toolkit has it); the attention suite's cuDNN provider does not compile without it.
  "nvidia-cuda-nvrtc-cu12==12.4.127 --hash=sha256:a178759ebb095827bd30ef56598ec182b85547f1508941a3d560eb7ea1fbf338"
)
manifest=$(printf '%s\n' "${DEBS[@]}" "${WHEELS[@]}" | sha256sum | cut -c1-16)

if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$manifest" ] && [ -x "$dir/bin/nvcc" ]; then
  echo "$dir/bin/nvcc"
  exit 0
fi
for tool in apt-get dpkg-deb python3 sha256sum; do
  command -v "$tool" >/dev/null || die "$tool is needed to assemble the toolkit"
done
downloads="$cache/downloads/cuda-12.4"
mkdir -p "$downloads/wheels" "$downloads/debs"
cudadev="$downloads/debs/nvidia-cuda-dev_12.4.127~12.4.1-2.deb"
static="$downloads/cuda-dev-static"
# The extracted static runtime stands for the dropped package; without it, fetch it again.
[ -f "$static/libcudart_static.a" ] || rm -f "$cudadev.extracted"

# --- Debian packages, through a private APT configuration -----------------------------------
apt_root="$cache/apt-trixie"
apt_config() {  # $1: the archive's URL
  mkdir -p "$apt_root/etc/apt.conf.d" "$apt_root/etc/preferences.d" "$apt_root/state/lists/partial" \
    "$apt_root/cache/archives/partial"
  local check=""
  [ "$1" = "$DEBIAN_MIRROR" ] || check=" check-valid-until=no"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg$check] $1 trixie non-free" \
    >"$apt_root/etc/sources.list"
  cat >"$apt_root/apt.conf" <<EOF
Dir::Etc "$apt_root/etc";
Dir::Etc::sourcelist "$apt_root/etc/sources.list";
Dir::Etc::sourceparts "-";
Dir::Etc::parts "$apt_root/etc/apt.conf.d";
Dir::Etc::preferencesparts "$apt_root/etc/preferences.d";
Dir::State "$apt_root/state";
Dir::State::status "/dev/null";
Dir::Cache "$apt_root/cache";
APT::Architecture "amd64";
APT::Architectures "amd64";
APT::Sandbox::User "$(id -un)";
Acquire::Languages "none";
Acquire::Retries "3";
EOF
}
[ -f /usr/share/keyrings/debian-archive-keyring.gpg ] ||
  die "/usr/share/keyrings/debian-archive-keyring.gpg is missing (apt-get install debian-archive-keyring)"

fetch_debs() {  # downloads every pinned .deb missing from the cache, from $1's archive
  local missing=()
  for entry in "${DEBS[@]}"; do
    read -r name version sum <<<"$entry"
    local f="$downloads/debs/${name}_${version}.deb"
    [ -f "$f" ] || [ -f "$f.extracted" ] || missing+=("$name=$version")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  apt_config "$1"
  log "fetching ${missing[*]} from $1 (private APT configuration in $apt_root)"
  APT_CONFIG="$apt_root/apt.conf" apt-get -q -o Debug::NoLocking=1 update >&2 || return 1
  (cd "$downloads/debs" && APT_CONFIG="$apt_root/apt.conf" apt-get -q -o Debug::NoLocking=1 download "${missing[@]}" >&2) ||
    return 1
  for entry in "${DEBS[@]}"; do  # apt's file names escape ':' and '~'; ours are plain
    read -r name version sum <<<"$entry"
    for f in "$downloads/debs/${name}_"*.deb; do
      [ -f "$f" ] && [ "$f" != "$downloads/debs/${name}_${version}.deb" ] && mv "$f" "$downloads/debs/${name}_${version}.deb"
    done
  done
}
fetch_debs "$DEBIAN_MIRROR" || fetch_debs "$DEBIAN_SNAPSHOT" || die "the Debian packages could not be fetched"

for entry in "${DEBS[@]}"; do
  read -r name version sum <<<"$entry"
  f="$downloads/debs/${name}_${version}.deb"
  [ -f "$f.extracted" ] && continue
  echo "$sum  $f" | sha256sum -c --quiet - >&2 || { rm -f "$f"; die "$f: SHA-256 mismatch (removed; run again)"; }
done

# nvidia-cuda-dev (934 MB) is needed only for the static CUDA runtime, which no wheel of 12.4 has:
# extract those few files once and drop the package (the .extracted stamp keeps its checksum).
if [ ! -f "$cudadev.extracted" ]; then
  log "extracting the static CUDA runtime from $(basename "$cudadev") (about a minute)"
  rm -rf "$static" && mkdir -p "$static"
  dpkg-deb --fsys-tarfile "$cudadev" | tar -x -C "$static" --strip-components=4 \
    ./usr/lib/x86_64-linux-gnu/libcudart_static.a ./usr/lib/x86_64-linux-gnu/libculibos.a \
    ./usr/lib/x86_64-linux-gnu/libcudadevrt.a
  sha256sum "$cudadev" >"$cudadev.extracted"
  rm -f "$cudadev"
fi

# --- PyPI wheels ---------------------------------------------------------------------------
printf '%s\n' "${WHEELS[@]}" >"$downloads/wheels/requirements.txt"
python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
  --require-hashes -r "$downloads/wheels/requirements.txt" -d "$downloads/wheels" >&2 ||
  die "pip could not download the CUDA 12.4 wheels (network? see $downloads/wheels/requirements.txt)"

# --- Assemble in the usual toolkit layout ----------------------------------------------------
log "assembling CUDA 12.4 in $dir"
rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
t="$dir.tmp"
mkdir -p "$t/bin/crt" "$t/nvvm/bin" "$t/nvvm/libdevice" "$t/include" "$t/lib64" "$t/wheels" "$t/deb"
dpkg-deb -x "$downloads/debs/nvidia-cuda-toolkit_12.4.131~12.4.1-2.deb" "$t/deb"
tk="$t/deb/usr/lib/nvidia-cuda-toolkit"
cp "$tk/bin/nvcc" "$tk/bin/cicc" "$t/bin/" 2>/dev/null || die "nvcc/cicc missing from nvidia-cuda-toolkit"
mv "$t/bin/cicc" "$t/nvvm/bin/"
cp "$tk/bin/crt/"*.stub "$t/bin/crt/"
for b in ptxas cudafe++ fatbinary nvlink bin2c cuobjdump nvdisasm nvprune cu++filt; do
  cp "$t/deb/usr/bin/$b" "$t/bin/"
done
cp "$tk/libdevice/libdevice.10.bc" "$t/nvvm/libdevice/"
rm -rf "$t/deb"

for w in "$downloads/wheels/"*.whl; do
  python3 -m zipfile -e "$w" "$t/wheels" >&2
done
for inc in "$t/wheels/nvidia/"*/include; do cp -r "$inc/." "$t/include/"; done
find "$t/include" -name '__init__.py' -delete
for lib in "$t/wheels/nvidia/"*/lib; do
  find "$lib" -maxdepth 1 -name '*.so*' -exec cp {} "$t/lib64/" \;
done
cp "$static/"*.a "$t/lib64/"
rm -rf "$t/wheels"
# Link-time names (libcublas.so -> libcublas.so.12), as the toolkit's installer makes them.
for so in "$t/lib64/"*.so.*; do
  base="${so##*/}"
  ln -sf "$base" "$t/lib64/${base%%.so.*}.so"
done
ln -s lib64 "$t/lib"
mkdir -p "$t/targets/x86_64-linux"
ln -s ../../include "$t/targets/x86_64-linux/include"
ln -s ../../lib64 "$t/targets/x86_64-linux/lib"
# nvcc reads nvcc.profile beside itself: every path relative to the toolkit, none to /usr/local.
cat >"$t/bin/nvcc.profile" <<'EOF'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF
printf '{ "cuda": { "name": "CUDA SDK", "version": "12.4.1" } }\n' >"$t/version.json"

# The assembled compiler must say 12.4 and its headers must be 12.4's.
grep -q 'release 12.4' <<<"$("$t/bin/nvcc" --version)" || die "the assembled nvcc is not 12.4: $("$t/bin/nvcc" --version | tail -n2)"
grep -Eq '#define CUDART_VERSION +12040' "$t/include/cuda_runtime_api.h" || die "cuda_runtime_api.h is not 12.4's"
rm -rf "$dir"
mv "$t" "$dir"
echo "$manifest" >"$dir/.complete"
log "done: $(du -sh "$dir" | cut -f1) in $dir"
echo "$dir/bin/nvcc"

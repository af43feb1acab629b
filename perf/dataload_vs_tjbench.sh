#!/usr/bin/env bash
# Decode speed of gpubench's dataload suite against libjpeg-turbo's own tjbench, on the same
# files, one core each, side by side. Goals (issue 6): gpubench decode per core >= 95% of
# tjbench's decode rate; decode + augment per core >= 80% of it.
#
#   perf/dataload_vs_tjbench.sh [GPUBENCH_BINARY]     (default build/ci/apps/gpubench/gpubench)
#
# tjbench (Debian: libjpeg-turbo-progs) decodes one file over and over and prints Mpixels/s;
# gpubench's decode stage cycles over the dataset's files. Both decode to RGB with libjpeg's
# default (accurate integer) IDCT and fancy upsampling. The dataset here is every image at the
# same size (--fixed-size), so tjbench's one file stands for all of them; tjbench is run on
# several files and averaged.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build/ci/apps/gpubench/gpubench}"
command -v tjbench >/dev/null || { echo "tjbench not found: apt-get install libjpeg-turbo-progs" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$bin" datagen --out "$work/data" --count 32 --size 500x375 --fixed-size --tokens 0 >/dev/null

# tjbench: decompression only of a JPEG input; -benchtime seconds per test, -warmup seconds.
files=("$work"/data/images/0000000{0,1,2,3}.jpg)
tj_mpix=()
for f in "${files[@]}"; do
  cp "$f" "$work/tj.jpg"
  out="$(taskset -c 0 tjbench "$work/tj.jpg" -rgb -benchtime 2 -warmup 1 2>&1)"
  # The data row: "Decomp to RGB ... MPixels/sec"; tjbench prints a table whose last column is
  # the decompression throughput in Mpixels/s.
  mp="$(printf '%s\n' "$out" | awk '/^RGB|^[0-9]/{v=$NF} END{print v}')"
  tj_mpix+=("$mp")
done
tj=$(printf '%s\n' "${tj_mpix[@]}" | awk '{s+=$1} END{printf "%.2f", s/NR}')

run_stage() {  # prints the stage's Mpixels/s (500x375 images)
  local stage="$1"
  GPUBENCH_DATASET="$work/data" taskset -c 0 "$bin" run --suite dataload --device cpu --quiet \
    --axis stage="$stage" --axis workers=1 --axis batch=32 --axis io=memory --axis order=seq --axis format=files \
    --axis prefetch=0 --axis step_us=0 --axis scale=1 --axis dtype=fp32 --min-time 2 \
    --out "$work/$stage.json" --benchmark_format=json >/dev/null
  python3 - "$work/$stage.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = [b for b in d["benchmarks"] if b.get("run_type") == "iteration"][0]
print("%.2f" % (e["gpubench"]["metrics"]["items_per_s"] * 500 * 375 / 1e6))
PY
}
dec=$(run_stage decode)
aug=$(run_stage decode_augment)
echo "tjbench decode (1 core, per file: ${tj_mpix[*]}):  $tj Mpixels/s"
echo "gpubench decode (1 worker):                    $dec Mpixels/s  ($(awk -v a="$dec" -v b="$tj" 'BEGIN{printf "%.1f", 100*a/b}')% of tjbench; goal >= 95%)"
echo "gpubench decode_augment (1 worker):            $aug Mpixels/s  ($(awk -v a="$aug" -v b="$tj" 'BEGIN{printf "%.1f", 100*a/b}')% of tjbench; goal >= 80%)"

#!/usr/bin/env bash
# Decode speed of gpubench's dataload suite against libjpeg-turbo's own tjbench, on the same
# files, one core each, side by side. Goals (issue 6): gpubench decode per core >= 95% of
# tjbench's decode rate; decode + augment per core >= 80% of it.
#
#   perf/dataload_vs_tjbench.sh [GPUBENCH_BINARY]     (default build/ci/apps/gpubench/gpubench)
#   ROUNDS=3 SECONDS_PER_RUN=2 (environment)
#
# tjbench (Debian: libjpeg-turbo-progs) decodes one file over and over and prints Mpixels/s;
# gpubench's decode stage cycles over the same 4 files (a 4-image dataset, every image
# 500x375). Both decode to RGB with libjpeg's default (accurate integer) IDCT and fancy
# upsampling, pinned to CPU 0. On a shared machine the load changes from one run to the next:
# the script alternates the two programs for ROUNDS rounds, prints each round's ratios, and
# compares the best round of each side (load only slows a run down), as perf/README.md does.
source "$(dirname "$0")/dataload_lib.sh"
secs="${SECONDS_PER_RUN:-2}"
"$bin" datagen --out "$work/data" --count 4 --size 500x375 --fixed-size --tokens 0 >/dev/null
rm -f "$work/data/images.shard" "$work/data/images.idx"

tjbench_mpix() {  # mean over the 4 files of tjbench's decompression Mpixels/s
  local sum=0 f mp
  for f in "$work"/data/images/*.jpg; do
    # -quiet prints one row per test: "RGB (TD) YCbCr 4:2:0 500 375 N/A N/A <Mpixels/s>".
    mp="$(taskset -c 0 tjbench "$f" -rgb -benchtime "$secs" -warmup 0.5 -nowrite -quiet 2>&1 | awk '/^RGB/{v=$NF} END{print v}')"
    sum=$(awk -v a="$sum" -v b="$mp" 'BEGIN{print a + b}')
  done
  awk -v s="$sum" 'BEGIN{printf "%.2f", s / 4}'
}

gpubench_mpix() {  # the stage's samples/s x 500 x 375 pixels, one worker on CPU 0
  GPUBENCH_DATASET="$work/data" taskset -c 0 "$bin" run --suite dataload --device cpu --quiet \
    --axis stage="$1" --axis workers=1 --axis batch=32 --axis io=memory --axis order=random --axis format=files \
    --axis prefetch=0 --axis step_us=0 --axis scale=1 --axis dtype=fp32 --min-time "$secs" \
    --out "$work/$1.json" >/dev/null 2>&1
  awk -v r="$(samples_per_s "$work/$1.json")" 'BEGIN{printf "%.2f\n", r * 500 * 375 / 1e6}'
}

pct() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", 100 * a / b}'; }
printf '%-6s %14s %14s %8s %16s %8s\n' round "tjbench Mpx/s" "decode Mpx/s" "%" "dec+aug Mpx/s" "%"
dec_pcts=() aug_pcts=()
best_tj=0 best_dec=0 best_aug=0
for r in $(seq 1 "$rounds"); do
  tj=$(tjbench_mpix)
  dec=$(gpubench_mpix decode)
  aug=$(gpubench_mpix decode_augment)
  best_tj=$(max "$best_tj" "$tj") best_dec=$(max "$best_dec" "$dec") best_aug=$(max "$best_aug" "$aug")
  dec_pcts+=("$(pct "$dec" "$tj")")
  aug_pcts+=("$(pct "$aug" "$tj")")
  printf '%-6s %14s %14s %8s %16s %8s\n' "$r" "$tj" "$dec" "${dec_pcts[-1]}" "$aug" "${aug_pcts[-1]}"
done
echo "best rounds: tjbench $best_tj, decode $best_dec ($(pct "$best_dec" "$best_tj")% of tjbench; goal >= 95%)," \
  "decode + augment $best_aug Mpixels/s ($(pct "$best_aug" "$best_tj")%; goal >= 80%)"
echo "median of the per-round ratios: decode $(median "${dec_pcts[@]}")% of tjbench (goal >= 95%), decode + augment $(median "${aug_pcts[@]}")% (goal >= 80%)"

#!/usr/bin/env bash
# Worker scaling of the dataload suite (issue 6's goal: at least 90% of linear up to the number
# of physical cores), beside the machine's own ceiling for the same work.
#
#   perf/dataload_scaling.sh [GPUBENCH_BINARY]     (default build/ci/apps/gpubench/gpubench)
#   ROUNDS=3 SECONDS_PER_RUN=3 (environment)
#
# Efficiency at N workers = rate(N) / (N x rate(1)). Measured three ways on the same
# ImageNet-like dataset (`gpubench datagen`, 64 images of varied size):
#   tjbench   N independent tjbench processes, one per core, decoding one file: what the cores
#             deliver with nothing shared (a VM whose vCPUs are hyperthread siblings, or a CPU
#             that lowers its clock with more cores busy, shows up here, not in gpubench);
#   stage     the decode_augment stage (workers decode + augment one batch together);
#   pipeline  the end-to-end pipeline fed from the page cache (io=cached) with a consumer that
#             takes batches as fast as they come (step_us=0): workers, queue and hand-off.
# N runs over 1, 2, 4, ... up to the physical cores (unique core/socket pairs of the CPUs this
# process may run on). Each round measures every N; a round's efficiency compares its N-worker
# rate with the same round's 1-worker rate (measured seconds apart, so slow drifts of a shared
# machine cancel). Printed: each N's best rate, best against best, and the median of the
# per-round efficiencies, which the goal is judged on. Exit status 1 when gpubench misses 90%
# at any N.
source "$(dirname "$0")/dataload_lib.sh"
secs="${SECONDS_PER_RUN:-3}"
mapfile -t cpus < <(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' | awk -F- '{e = NF > 1 ? $2 : $1; for (i = $1; i <= e; i++) print i}')
physical=$(for c in "${cpus[@]}"; do
  t=/sys/devices/system/cpu/cpu$c/topology
  echo "$(cat "$t/physical_package_id" 2>/dev/null || echo 0):$(cat "$t/core_id" 2>/dev/null || echo "$c")"
done | sort -u | wc -l)
# One CPU per physical core, the first of each core, for the tjbench processes.
mapfile -t per_core < <(for c in "${cpus[@]}"; do
  t=/sys/devices/system/cpu/cpu$c/topology
  echo "$(cat "$t/physical_package_id" 2>/dev/null || echo 0):$(cat "$t/core_id" 2>/dev/null || echo "$c") $c"
done | sort -u -k1,1 | awk '{print $2}')
counts=()
for ((n = 1; n < physical; n *= 2)); do counts+=("$n"); done
counts+=("$physical")
echo "CPUs usable: ${#cpus[@]}, physical cores: $physical; workers: ${counts[*]}"

"$bin" datagen --out "$work/data" --count 64 --tokens 0 >/dev/null
file="$(ls "$work"/data/images/*.jpg | sed -n 1p)"

tjbench_rate() {  # sum over N concurrent tjbench processes of their Mpixels/s
  local n=$1 i pids=()
  for ((i = 0; i < n; i++)); do
    taskset -c "${per_core[$i]}" tjbench "$file" -rgb -benchtime "$secs" -warmup 0.5 -nowrite -quiet \
      >"$work/tj.$i" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  for ((i = 0; i < n; i++)); do awk '/^RGB/{v=$NF} END{print v}' "$work/tj.$i"; done | awk '{s += $1} END{printf "%.2f", s}'
}

gpubench_rate() {  # samples/s of one case
  local stage=$1 n=$2 extra=()
  if [[ $stage == pipeline ]]; then extra=(--axis io=cached --axis prefetch=4 --axis step_us=0); fi
  GPUBENCH_DATASET="$work/data" "$bin" run --suite dataload --device cpu --quiet --axis stage="$stage" \
    --axis workers="$n" --axis batch=32 --axis scale=1 --axis dtype=fp32 "${extra[@]}" --min-time "$secs" \
    --out "$work/r.json" >/dev/null 2>&1
  samples_per_s "$work/r.json"
}

declare -A best
declare -A ratios  # what.n -> per-round efficiencies (%), each against the same round's 1-worker rate
for r in $(seq 1 "$rounds"); do
  line="round $r:"
  declare -A one=()
  for n in "${counts[@]}"; do
    for what in tjbench stage pipeline; do
      case $what in
        tjbench) v=$(tjbench_rate "$n") ;;
        stage) v=$(gpubench_rate decode_augment "$n") ;;
        pipeline) v=$(gpubench_rate pipeline "$n") ;;
      esac
      best[$what.$n]=$(max "${best[$what.$n]:-0}" "$v")
      [[ $n == 1 ]] && one[$what]=$v
      ratios[$what.$n]+=" $(awk -v a="$v" -v o="${one[$what]}" -v n="$n" 'BEGIN{printf "%.1f", 100 * a / (o * n)}')"
      line+=" $what@$n=$v"
    done
  done
  echo "$line"
done

status=0
printf '%-10s %8s %18s %14s %16s\n' what workers "best rate" "best/best" "median of rounds"
for what in tjbench stage pipeline; do
  for n in "${counts[@]}"; do
    eff=$(awk -v a="${best[$what.$n]}" -v o="${best[$what.1]}" -v n="$n" 'BEGIN{printf "%.1f", 100 * a / (o * n)}')
    # shellcheck disable=SC2086 # the space-separated list splits into median's arguments
    med=$(median ${ratios[$what.$n]})
    unit=$([[ $what == tjbench ]] && echo "Mpx/s" || echo "samples/s")
    printf '%-10s %8s %18s %13s%% %15s%%\n' "$what" "$n" "${best[$what.$n]} $unit" "$eff" "$med"
    if [[ $what != tjbench ]] && awk -v e="$med" 'BEGIN{exit !(e < 90)}'; then status=1; fi
  done
done
echo "goal: gpubench (stage, pipeline) >= 90% of linear at every worker count up to the physical cores," \
  "judged on the median of the per-round efficiencies: $([[ $status == 0 ]] && echo met || echo MISSED)"
exit "$status"

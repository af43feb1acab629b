#!/usr/bin/env bash
# MPI CPU collective latency of gpubench beside the OSU micro-benchmarks (7.4): OP=all_reduce
# (default; osu_allreduce, fp32 sum) or OP=alltoallv (osu_alltoallv, fp32); same rank count,
# every size from MIN to MAX (x2), in interleaved rounds (OSU then gpubench, the order swapped
# every round, so drift in the machine's load hits both). Per size it prints the best and the
# median over rounds of each tool's figure and gpubench / OSU for both; it fails (exit 1) when
# a ratio is above TOL (default 1.1; issue 17 item 8 for all_reduce, issue 31 for alltoallv).
#   OP=all_reduce RANKS=2 MIN=4 MAX=1M ROUNDS=5 TOL=1.1 scripts/perf-collectives-osu.sh
# Sizes are OSU's: osu_alltoallv's size is the block each rank sends every rank (equal
# blocks), gpubench's alltoallv size is what a rank sends in all, split unevenly
# (docs/suite-collectives.md), so gpubench runs at RANKS x the OSU size: the same bytes leave
# every rank, in blocks that differ.
# The figures compared: OSU's "Avg Latency(us)" (each call timed alone between barriers, the
# mean over 1,000 calls, 100 above 8 KiB, averaged over ranks) and gpubench's metrics.time_us
# (the median over barrier-separated ~200 us windows of back-to-back calls, per rank, averaged
# over ranks; docs/suite-collectives.md). A busy machine moves both: run it on a quiet one
# (the load average is printed before and after).
# Needs osu_allreduce (osu_alltoallv) on PATH or in $OSU_DIR (https://mvapich.cse.ohio-state.edu/benchmarks/;
# not packaged in Debian 12); without it it says so and exits 2. OSU 7.4 reduces MPI_CHAR
# unless told: it is run with -T mpi_float.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
gpubench="${GPUBENCH:-$here/../build/release/apps/gpubench/gpubench}"
[ -x "$gpubench" ] || gpubench="$here/gpubench"
[ -x "$gpubench" ] || { echo "gpubench not found: build it (scripts/run.sh) or set GPUBENCH" >&2; exit 2; }
op="${OP:-all_reduce}"
case "$op" in
  all_reduce) osu_name=osu_allreduce ;;
  alltoallv) osu_name=osu_alltoallv ;;
  *) echo "OP=$op: expected all_reduce or alltoallv" >&2; exit 2 ;;
esac
osu="${OSU_DIR:+$OSU_DIR/$osu_name}"
[ -n "$osu" ] && [ -x "$osu" ] || osu="$(command -v "$osu_name" || true)"
if [ -z "$osu" ]; then
  echo "OSU micro-benchmarks are not installed (no $osu_name on PATH or in \$OSU_DIR): nothing to compare" >&2
  exit 2
fi
command -v mpirun >/dev/null || { echo "mpirun not found (openmpi-bin)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 not found" >&2; exit 2; }
ranks="${RANKS:-2}" min="${MIN:-4}" max="${MAX:-1M}" rounds="${ROUNDS:-5}" tol="${TOL:-1.1}"
min_time="${MIN_TIME:-0.2}"
min_bytes=$(numfmt --from=iec "$min")
max_bytes=$(numfmt --from=iec "$max")
[ "$min_bytes" -ge 4 ] && [ $((min_bytes % 4)) -eq 0 ] || { echo "MIN=$min: expected a multiple of 4 bytes (fp32)" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS=$rounds: expected a whole number above 0" >&2; exit 2; }
# Measurement outputs go under build/ (never into the tree); OUT=DIR puts them elsewhere.
out="${OUT:-$(cd "$(dirname "$0")/.." && pwd)/build/perf-collectives}"
mkdir -p "$out"
# OpenMPI refuses root unless told; --oversubscribe for machines with fewer cores than ranks.
flags=(--oversubscribe -np "$ranks")
[ "$(id -u)" -eq 0 ] && flags=(--allow-run-as-root "${flags[@]}")
[[ "$ranks" =~ ^[1-9][0-9]*$ ]] || { echo "RANKS=$ranks: expected a whole number above 0" >&2; exit 2; }
scale=1
[ "$op" = alltoallv ] && scale="$ranks"  # gpubench's size is a rank's total
run_osu() {
  mpirun "${flags[@]}" "$osu" -T mpi_float -m "$min_bytes:$max_bytes" >"$out/$osu_name.$1.txt"
}
run_gpubench() {
  mpirun "${flags[@]}" "$gpubench" run --suite collectives --device cpu -a "op=$op" -a dtype=fp32 -a redop=sum \
    -a inplace=0 -a "size=$((min_bytes * scale)):$((max_bytes * scale)):x2" --min-time "$min_time" -q \
    --out "$out/$op.$1.json" >/dev/null
}
echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
echo "== $rounds rounds of: mpirun ${flags[*]} $osu -T mpi_float -m $min_bytes:$max_bytes, and gpubench run (sizes $min_bytes..$max_bytes)"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then run_osu "$r"; run_gpubench "$r"; else run_gpubench "$r"; run_osu "$r"; fi
done
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" "$rounds" "$tol" "$op" "$osu_name" "$scale" <<'PY'
import json, statistics, sys
out, rounds, tol, op, osu_name, scale = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6])
osu, ours = {}, {}
for r in range(1, rounds + 1):
    datatype = None
    for line in open(f"{out}/{osu_name}.{r}.txt"):
        if line.startswith("# Datatype:"):
            datatype = line.split(":", 1)[1].strip().rstrip(".")
        f = line.split()
        if len(f) >= 2 and f[0].isdigit():
            osu.setdefault(int(f[0]), []).append(float(f[1]))
    if datatype != "MPI_FLOAT":
        sys.exit(f"round {r}: {osu_name} used {datatype}, not MPI_FLOAT (an OSU older than 7.4 has no -T)")
    for b in json.load(open(f"{out}/{op}.{r}.json"))["benchmarks"]:
        g = b["gpubench"]
        if g.get("status") == "ok" and b.get("run_type") == "iteration":
            ours.setdefault(int(g["axes"]["size"]) // scale, []).append(g["metrics"]["time_us"])
sizes = sorted(set(osu) & set(ours))
missing = sorted(set(osu) ^ set(ours))
if not sizes:
    sys.exit("no size measured by both tools")
print(f"{op}: sizes are {osu_name}'s" + (f" (gpubench at {scale}x: a rank's total)" if scale > 1 else ""))
print(f"{'bytes':>8} | {'OSU best':>9} {'gpubench':>9} {'ratio':>6} | {'OSU med':>9} {'gpubench':>9} {'ratio':>6}   (us)")
worst, failed = 0.0, []
for s in sizes:
    ob, gb = min(osu[s]), min(ours[s])
    om, gm = statistics.median(osu[s]), statistics.median(ours[s])
    rb, rm = gb / ob, gm / om
    flag = "  > %.2f" % tol if max(rb, rm) > tol else ""
    if flag:
        failed.append(s)
    worst = max(worst, rb, rm)
    print(f"{s:>8} | {ob:>9.2f} {gb:>9.2f} {rb:>6.2f} | {om:>9.2f} {gm:>9.2f} {rm:>6.2f}{flag}")
if missing:
    print(f"sizes measured by one tool only: {missing}")
print(f"worst ratio {worst:.2f} over {len(sizes)} sizes and {rounds} rounds (target <= {tol})")
if failed:
    print(f"FAIL: gpubench above {tol}x OSU at {len(failed)} size(s): {failed}")
    sys.exit(1)
PY

#!/usr/bin/env bash
# MPI CPU all-reduce latency of gpubench beside the OSU micro-benchmarks' osu_allreduce, same
# rank count and sizes (the target: within 10%). Needs osu_allreduce on PATH or in $OSU_DIR
# (https://mvapich.cse.ohio-state.edu/benchmarks/; not packaged in Debian 12). Without it it
# says so and exits 2. Both time MPI_Allreduce on MPI_FLOAT with MPI_SUM and report the mean
# over ranks of the mean time per call.
#   RANKS=2 MAX=1M scripts/perf-collectives-osu.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
gpubench="${GPUBENCH:-$here/../build/release/apps/gpubench/gpubench}"
[ -x "$gpubench" ] || gpubench="$here/gpubench"
[ -x "$gpubench" ] || { echo "gpubench not found: build it (scripts/run.sh) or set GPUBENCH" >&2; exit 2; }
osu="${OSU_DIR:+$OSU_DIR/osu_allreduce}"
[ -n "$osu" ] && [ -x "$osu" ] || osu="$(command -v osu_allreduce || true)"
if [ -z "$osu" ]; then
  echo "OSU micro-benchmarks are not installed (no osu_allreduce on PATH or in \$OSU_DIR): nothing to compare" >&2
  exit 2
fi
command -v mpirun >/dev/null || { echo "mpirun not found (openmpi-bin)" >&2; exit 2; }
ranks="${RANKS:-2}" max="${MAX:-1M}"
max_bytes=$(numfmt --from=iec "$max")
out="${OUT:-perf-collectives}"
mkdir -p "$out"
# OpenMPI refuses root unless told; --oversubscribe for machines with fewer cores than ranks.
flags=(--oversubscribe -np "$ranks")
[ "$(id -u)" -eq 0 ] && flags=(--allow-run-as-root "${flags[@]}")
echo "== osu_allreduce: mpirun ${flags[*]} $osu -m 8:$max_bytes"
mpirun "${flags[@]}" "$osu" -m "8:$max_bytes" >"$out/osu_allreduce.txt"
echo "== gpubench"
mpirun "${flags[@]}" "$gpubench" run --suite collectives --device cpu -a op=all_reduce -a dtype=fp32 -a redop=sum \
  -a "size=8:$max:x2" -q --out "$out/allreduce.gpubench.json" >/dev/null
python3 - "$out/osu_allreduce.txt" "$out/allreduce.gpubench.json" <<'PY'
import json, sys
theirs = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 2 and f[0].isdigit():
        theirs[int(f[0])] = float(f[1])
ours = {}
for b in json.load(open(sys.argv[2]))["benchmarks"]:
    g = b["gpubench"]
    if g.get("status") == "ok" and b.get("run_type") == "iteration":
        ours[int(g["axes"]["size"])] = g["metrics"]["time_us"]
print(f"{'bytes':>10} {'osu_allreduce us':>17} {'gpubench us':>12} {'diff %':>8}")
for size in sorted(set(theirs) & set(ours)):
    t, o = theirs[size], ours[size]
    print(f"{size:>10} {t:>17.2f} {o:>12.2f} {(o - t) / t * 100:>8.1f}")
PY

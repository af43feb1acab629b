#!/usr/bin/env bash
# Bus bandwidth of gpubench's NCCL collectives beside NVIDIA's nccl-tests on the same GPUs and
# sizes (the target: within 2%). Needs nccl-tests built (https://github.com/NVIDIA/nccl-tests):
# its binaries on PATH or in $NCCL_TESTS_DIR (its build/ folder). Without them it says so and
# exits 2. One process drives every GPU in both (nccl-tests -g N; gpubench gpus=0).
#   OPS="all_reduce all_gather" MIN=8 MAX=256M GPUS=8 scripts/perf-collectives-nccl-tests.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
gpubench="${GPUBENCH:-$here/../build/release/apps/gpubench/gpubench}"
[ -x "$gpubench" ] || gpubench="$here/gpubench"
[ -x "$gpubench" ] || { echo "gpubench not found: build it (scripts/run.sh) or set GPUBENCH" >&2; exit 2; }
dir="${NCCL_TESTS_DIR:-}"
find_test() { if [ -n "$dir" ] && [ -x "$dir/$1" ]; then echo "$dir/$1"; else command -v "$1" || true; fi; }
if [ -z "$(find_test all_reduce_perf)" ]; then
  echo "nccl-tests is not installed (no all_reduce_perf on PATH or in \$NCCL_TESTS_DIR): nothing to compare" >&2
  exit 2
fi
ops="${OPS:-all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv}"
min="${MIN:-8}" max="${MAX:-256M}"
gpus="${GPUS:-$(nvidia-smi -L | wc -l)}"
# Measurement outputs go under build/ (never into the tree); OUT=DIR puts them elsewhere.
out="${OUT:-$(cd "$(dirname "$0")/.." && pwd)/build/perf-collectives}"
mkdir -p "$out"
for op in $ops; do
  bin="$(find_test "${op}_perf")"
  [ -n "$bin" ] || { echo "== $op: ${op}_perf not built, skipped"; continue; }
  echo "== $op: nccl-tests $bin -b $min -e $max -f 2 -g $gpus"
  "$bin" -b "$min" -e "$max" -f 2 -g "$gpus" -d float -o sum >"$out/$op.nccl-tests.txt"
  echo "== $op: gpubench"
  "$gpubench" run --suite collectives --device cuda -a op="$op" -a dtype=fp32 -a redop=sum -a "size=$min:$max:x2" \
    -a gpus="$gpus" -q --out "$out/$op.gpubench.json" >/dev/null
  python3 - "$out/$op.nccl-tests.txt" "$out/$op.gpubench.json" <<'PY'
import json, sys
# nccl-tests rows: size count type redop root | out-of-place time algbw busbw #wrong | in-place ...
theirs = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 9 and f[0].isdigit():
        theirs[int(f[0])] = float(f[7])
ours = {}
for b in json.load(open(sys.argv[2]))["benchmarks"]:
    g = b["gpubench"]
    if g.get("status") == "ok" and b.get("run_type") == "iteration":
        ours[g["collective"]["bytes"]] = g["metrics"]["busbw_gbps"]
print(f"{'bytes':>12} {'nccl-tests busbw':>17} {'gpubench busbw':>15} {'diff %':>8}")
for size in sorted(set(theirs) & set(int(k) for k in ours)):
    t, o = theirs[size], ours[size]
    diff = (o - t) / t * 100 if t > 0 else float("nan")
    print(f"{size:>12} {t:>17.2f} {o:>15.2f} {diff:>8.1f}")
PY
done

#!/usr/bin/env bash
# The CUDA performance goals of issues 28 and 29 on a GPU host (perf/gpu_goals_check.py says
# which): measures the memory ceiling, cuDNN attention (bf16 forward at hd 128 / s 8192, decode at
# b 16 / s_kv 4096, contiguous and paged) and the infer suite's CUDA quick preset (Llama 3 8B
# prefill, decode and two serving traces), projects the serving loop from the same file, and
# checks every goal. Exit status 1 when a goal is missed, 2 on bad usage.
#   perf/gpu_goals.sh [--gpubench PATH] [--out DIR] [--device cuda:N]
#   perf/gpu_goals.sh --dry-run [--assume h200]      # the plan, no GPU needed
# The binary: a bundle's launcher, else build/release (or $GPUBENCH); each step keeps its
# results file under --out (default results/gpu-goals), so a missed goal can be read back.
set -uo pipefail
here="$(cd "$(dirname "$(readlink -f "$0")")" && pwd)"
# The binary: $GPUBENCH, a bundle's launcher beside this script (scripts/bundle.sh), or a checkout's build.
if [ -n "${GPUBENCH:-}" ]; then gpubench="$GPUBENCH"
elif [ -x "$here/gpubench" ] && [ -f "$here/cuda-libs.txt" ]; then gpubench="$here/gpubench"
else gpubench="$here/../build/release/apps/gpubench/gpubench"; fi
out="results/gpu-goals" device="cuda:0" dry=0 assume=""
while [ $# -gt 0 ]; do
  case "$1" in
    --gpubench) gpubench="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --device) device="$2"; shift 2 ;;
    --dry-run) dry=1; shift ;;
    --assume) assume="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "gpu_goals.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$gpubench" ] || { echo "gpu_goals.sh: no gpubench binary at $gpubench (--gpubench PATH)" >&2; exit 2; }

# NAME ARGUMENTS: one gpubench run per step, its results in $out/NAME.json.
steps=(
  "memory --suite memory --axis test=d2d,triad --axis size=1024M"
  "attention-prefill --suite attention --axis provider=cudnn --axis dtype=bf16 --axis phase=prefill --axis direction=fwd --axis causal=0,1 --axis batch=2 --axis heads=16 --axis kv_heads=16 --axis seq_q=8192 --axis seq_kv=8192 --axis head_dim=128"
  "attention-decode --suite attention --axis provider=cudnn --axis dtype=bf16 --axis phase=decode --axis batch=16 --axis heads=32 --axis kv_heads=32 --axis seq_kv=4096 --axis head_dim=128 --axis page_size=0,16"
  "infer --suite infer --preset quick"
)

if [ "$dry" = 1 ]; then
  for s in "${steps[@]}"; do
    name="${s%% *}" args="${s#* }"
    echo "== $name"
    # shellcheck disable=SC2086
    "$gpubench" run --dry-run ${assume:+--assume "$assume"} --device "$device" $args | tail -n 1 || exit 2
  done
  echo "then: gpubench serving $out/infer.json --rate <the serve cases' rates> --format json, and gpu_goals_check.py"
  exit 0
fi

mkdir -p "$out"
for s in "${steps[@]}"; do
  name="${s%% *}" args="${s#* }"
  echo "== $name"
  # shellcheck disable=SC2086
  "$gpubench" run -q --device "$device" $args --out "$out/$name.json" || echo "gpu_goals.sh: $name exited $? (its goals read what it kept)"
done
rates=$(python3 - "$out/infer.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rates = sorted({b["gpubench"]["axes"]["rate"] for b in doc.get("benchmarks", [])
                if b.get("gpubench", {}).get("axes", {}).get("phase") == "serve" and b["gpubench"].get("status") == "ok"})
print(",".join(str(r) for r in rates))
PY
)
if [ -n "$rates" ]; then
  "$gpubench" serving "$out/infer.json" --rate "$rates" --format json > "$out/serving.json" || echo '{}' > "$out/serving.json"
else
  echo '{}' > "$out/serving.json"
fi
python3 "$here/gpu_goals_check.py" --memory "$out/memory.json" --attention "$out/attention-prefill.json" \
  --attention "$out/attention-decode.json" --infer "$out/infer.json" --serving "$out/serving.json"

#!/usr/bin/env bash
# The CUDA performance goals of issues 28 and 29 on a GPU host (perf/gpu_goals_check.py says
# which): measures the memory ceiling, cuDNN attention (bf16 forward at hd 128 / s 8192, decode at
# b 16 / s_kv 4096, contiguous and paged) and the infer suite's CUDA quick preset (Llama 3 8B
# prefill, decode and two serving traces), projects the serving loop from the same file, and
# checks every goal. Exit status 1 when a goal is missed, 2 on bad usage.
#   perf/gpu_goals.sh [--gpubench PATH] [--out DIR] [--device cuda:N] [--smoke DIR]
#   perf/gpu_goals.sh --dry-run [--assume h200]      # the plan, no GPU needed
# --smoke DIR: a gpu-smoke.sh --out folder of this host; a step whose every case ran ok there
# (the infer step: the smoke's quick step runs the same cases, at the smoke's short timing) is
# not run again: its results file is made from those entries, and says so.
# The binary: a bundle's launcher, else build/release (or $GPUBENCH); each step keeps its
# results file under --out (default results/gpu-goals), so a missed goal can be read back.
set -uo pipefail
here="$(cd "$(dirname "$(readlink -f "$0")")" && pwd)"
# The binary: $GPUBENCH, a bundle's launcher beside this script (scripts/bundle.sh), or a checkout's build.
if [ -n "${GPUBENCH:-}" ]; then gpubench="$GPUBENCH"
elif [ -x "$here/gpubench" ] && [ -f "$here/cuda-libs.txt" ]; then gpubench="$here/gpubench"
else gpubench="$here/../build/release/apps/gpubench/gpubench"; fi
# What a plan leaves out (host verification, serve arrivals, cuDNN graphs): gpu-smoke.sh's allowances.
allowances="$here/smoke_allowances.awk"
[ -f "$allowances" ] || allowances="$here/../scripts/smoke_allowances.awk"
out="results/gpu-goals" device="cuda:0" dry=0 assume="" smoke=""
while [ $# -gt 0 ]; do
  case "$1" in
    --gpubench) gpubench="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --device) device="$2"; shift 2 ;;
    --dry-run) dry=1; shift ;;
    --assume) assume="$2"; shift 2 ;;
    --smoke)
      [ $# -ge 2 ] || { echo "gpu_goals.sh: --smoke needs a gpu-smoke.sh --out folder" >&2; exit 2; }
      smoke="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "gpu_goals.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$gpubench" ] || { echo "gpu_goals.sh: no gpubench binary at $gpubench (--gpubench PATH)" >&2; exit 2; }
[ -f "$allowances" ] || { echo "gpu_goals.sh: smoke_allowances.awk not found beside it or in ../scripts" >&2; exit 2; }
if [ -n "$smoke" ] && [ "$dry" = 0 ] && [ ! -d "$smoke/results" ]; then
  echo "gpu_goals.sh: --smoke $smoke: no results/ folder there (a gpu-smoke.sh --out folder)" >&2; exit 2
fi

# NAME ARGUMENTS: one gpubench run per step, its results in $out/NAME.json.
steps=(
  "memory --suite memory --axis test=d2d,triad --axis size=1024M"
  "attention-prefill --suite attention --axis provider=cudnn --axis dtype=bf16 --axis phase=prefill --axis direction=fwd --axis causal=0,1 --axis batch=2 --axis heads=16 --axis kv_heads=16 --axis seq_q=8192 --axis seq_kv=8192 --axis head_dim=128"
  "attention-decode --suite attention --axis provider=cudnn --axis dtype=bf16 --axis phase=decode --axis batch=16 --axis heads=32 --axis kv_heads=32 --axis seq_kv=4096 --axis head_dim=128 --axis page_size=0,16"
  "infer --suite infer --preset quick"
)

# The cases a step runs on the device, one name a line (its dry run's case lines).
planned_names() {
  # shellcheck disable=SC2086
  "$gpubench" run --dry-run ${assume:+--assume "$assume"} --device "$device" $1 2>/dev/null |
    awk '/^[^ \/]+\/[^ ]*  \[/ && !/\] skipped: / { print $1 }'
}
# Writes OUT.json from the smoke's ok entries of the step's cases when every one ran ok there;
# prints where they came from. Fails (nothing written) when one is missing.
reuse_from_smoke() {  # NAMES-FILE OUT.json
  python3 - "$1" "$2" "$smoke/results" <<'PY'
import glob, json, os, sys
names_file, out, folder = sys.argv[1:4]
want = [n for n in open(names_file).read().split("\n") if n]
found, source = {}, {}
for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        continue
    for b in doc.get("benchmarks", []):
        g = b.get("gpubench", {})
        if b.get("run_type", "iteration") == "iteration" and g.get("status") == "ok" and b.get("name") in want \
                and b["name"] not in found:
            found[b["name"]] = b
            source[b["name"]] = (path, doc)
missing = [n for n in want if n not in found]
if not want or missing:
    print(f"{len(missing)} of {len(want)} cases not ok in {folder}" + (f" (first: {missing[0]})" if missing else ""))
    sys.exit(1)
files = sorted({source[n][0] for n in want})
doc = dict(source[want[0]][1])
doc["benchmarks"] = [found[n] for n in want]
ctx = dict(doc.get("context", {}))
ctx["gpubench_goals_reused_from"] = files
doc["context"] = ctx
json.dump(doc, open(out, "w"), indent=1)
print(f"all {len(want)} cases reused from {', '.join(os.path.basename(f) for f in files)} (gpu-smoke results; its timing)")
PY
}

if [ "$dry" = 1 ]; then
  total=0 reusable=0
  # The smoke's quick step (gpu-smoke.sh: --preset quick on the device) runs these cases too.
  quick_names=$(planned_names "--preset quick")
  for s in "${steps[@]}"; do
    name="${s%% *}" args="${s#* }"
    # shellcheck disable=SC2086
    listing=$("$gpubench" run --dry-run ${assume:+--assume "$assume"} --device "$device" $args) || exit 2
    line=$(tail -n 1 <<<"$listing")
    plan_s=$(sed -n 's/^dry-run: .* about \([0-9.]*\) s$/\1/p' <<<"$line")
    preset=0; [[ " $args " == *" --preset "* ]] && preset=1
    allowance=$(awk -v preset="$preset" -f "$allowances" <<<"$listing")
    allow_s=$(awk '{ print $2 }' <<<"$allowance")
    step_s=$(awk -v a="${plan_s:-0}" -v b="$allow_s" 'BEGIN { printf "%.1f", a + b }')
    names=$(awk '/^[^ \/]+\/[^ ]*  \[/ && !/\] skipped: / { print $1 }' <<<"$listing")
    note=""
    if [ -n "$names" ] && [ -z "$(comm -23 <(sort <<<"$names") <(sort <<<"$quick_names"))" ]; then
      note="; every case is one of the smoke's quick step: reused with --smoke"
      reusable=$(awk -v a="$reusable" -v b="$step_s" 'BEGIN { printf "%.1f", a + b }')
    fi
    allow_note=$(cut -d' ' -f3- <<<"$allowance")
    echo "== $name: $line; +$allow_s s${allow_note:+ ($allow_note)}: about $step_s s$note"
    total=$(awk -v a="$total" -v b="$step_s" 'BEGIN { printf "%.1f", a + b }')
  done
  echo "then: gpubench serving $out/infer.json --rate <the serve cases' rates> --format json, and gpu_goals_check.py"
  echo "planned: about $(printf '%.0f' "$total") s; with --smoke (the smoke's results reused), about $(awk -v a="$total" -v b="$reusable" 'BEGIN { printf "%.0f", a - b }') s"
  exit 0
fi

mkdir -p "$out"
for s in "${steps[@]}"; do
  name="${s%% *}" args="${s#* }"
  echo "== $name"
  if [ -n "$smoke" ]; then
    planned_names "$args" >"$out/$name.cases"
    if why=$(reuse_from_smoke "$out/$name.cases" "$out/$name.json"); then
      echo "gpu_goals.sh: $name: $why"
      continue
    fi
    echo "gpu_goals.sh: $name: runs ($why)"
  fi
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

#!/usr/bin/env python3
"""The CUDA performance goals of issues 28 (attention) and 29 (inference), read from the results
files perf/gpu_goals.sh writes on a GPU host. One line per goal, PASS or FAIL with the figures;
exit status 1 when a goal that applies is missed.

  28: bf16 attention forward, hd 128, s 8192: >= 600 TFLOP/s on an H100 or H200 (95% of the
      ~631 cuDNN/FA3 published); causal: >= 500 TFLOP/s (95% of cuDNN's published causal 529,
      CAUSAL_SOURCE); decode b 16, s_kv 4096, hd 128: >= 55% of the measured memory ceiling (the
      memory suite's best d2d/triad at 1 GiB in the same session).
  29: batch-1 llama3-8b bf16 decode: >= 70% of the measured memory ceiling (the infer case's own
      pct_of_memory_ceiling, against its 1 GiB device copy); the serving projection within 15% of
      the measured serve loop at p50 and 25% at p99 (`gpubench serving` validation rows).
"""
import argparse
import json
import sys

# The forward goals at hd 128, s 8192 (bf16, H100/H200), by causal. Non-causal: 95% of the ~631
# TFLOP/s cuDNN and FA3 publish. Causal (FLOPs halved, as FA3's benchmark and gpubench count
# them; at s_q = s_kv = 8192 the admitted pairs are s(s+1)/2, 0.01% more than s^2/2): 95% of the
# 529 TFLOP/s cuDNN reaches in CAUSAL_SOURCE's chart, the provider gpubench runs (FA3 itself
# reaches 602 there; the H200 smoke measured 536 at s 4096).
FORWARD_GOAL_TFLOPS = {0: 600, 1: 500}
CAUSAL_SOURCE = ("FlashAttention-3 paper (Shah et al., arXiv:2407.08608), Figure 5, 'Attention forward speed, with "
                 "causal mask, head dim 128 (H100 80GB SXM5)': seq 8k, cuDNN 529, FlashAttention-3 602 TFLOP/s")


def entries(path):
    with open(path) as f:
        doc = json.load(f)
    return [b["gpubench"] for b in doc.get("benchmarks", []) if "gpubench" in b]


def ok_entries(path, suite):
    return [g for g in entries(path) if g.get("suite") == suite and g.get("status") == "ok"]


def memory_ceiling(path):
    best = 0.0
    for g in ok_entries(path, "memory"):
        if g["axes"].get("test") in ("d2d", "triad") and g["axes"].get("size", 0) >= 1 << 30:
            best = max(best, g["metrics"].get("gbps", 0.0))
    return best


class Goals:
    def __init__(self):
        self.failed = 0
        self.checked = 0

    def check(self, name, value, limit, unit, detail=""):
        self.checked += 1
        ok = value is not None and value >= limit
        if not ok:
            self.failed += 1
        shown = "missing" if value is None else f"{value:.1f} {unit}"
        print(f"{'PASS' if ok else 'FAIL'}  {name}: {shown} (goal >= {limit:g} {unit}){detail}")

    def within(self, name, error_pct, limit):
        self.checked += 1
        ok = error_pct is not None and abs(error_pct) <= limit
        if not ok:
            self.failed += 1
        shown = "missing" if error_pct is None else f"{error_pct:+.1f}%"
        print(f"{'PASS' if ok else 'FAIL'}  {name}: projection error {shown} (goal within {limit:g}%)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory", required=True)
    ap.add_argument("--attention", action="append", required=True, help="attention results (repeatable)")
    ap.add_argument("--infer", required=True)
    ap.add_argument("--serving", required=True, help="gpubench serving ... --format json output")
    a = ap.parse_args()
    goals = Goals()

    ceiling = memory_ceiling(a.memory)
    print(f"measured memory ceiling: {ceiling:.1f} GB/s (best d2d/triad at >= 1 GiB)")
    for g in [g for path in a.attention for g in ok_entries(path, "attention")]:
        ax, m = g.get("axes", {}), g.get("metrics", {})
        name = g.get("device_name", "")
        if ax.get("phase") == "prefill" and ax.get("head_dim") == 128 and ax.get("seq_q") == 8192:
            causal = 1 if ax.get("causal") else 0
            goal = FORWARD_GOAL_TFLOPS[causal]
            if "H100" in name or "H200" in name:
                goals.check(f"attention fwd bf16 hd128 s8192 causal={causal} on {name}", m.get("tflops"), goal,
                            "TFLOP/s", f" [{CAUSAL_SOURCE}]" if causal else "")
            else:
                print(f"n/a   attention fwd hd128 s8192 causal={causal} on {name}: the {goal} TFLOP/s goal is for "
                      "H100/H200")
        if ax.get("phase") == "decode" and ax.get("batch") == 16 and ax.get("head_dim") == 128:
            pct = 100 * m["gb_per_s"] / ceiling if ceiling > 0 and m.get("gb_per_s") else None
            goals.check(f"attention decode b16 s_kv {ax.get('seq_kv')} page_size {ax.get('page_size')} on {name}",
                        pct, 55, "% of the ceiling", f" ({m.get('gb_per_s', 0):.0f} GB/s)")
    for g in ok_entries(a.infer, "infer"):
        ax, m = g.get("axes", {}), g.get("metrics", {})
        if ax.get("model") == "llama3-8b" and ax.get("phase") == "decode" and ax.get("batch") == 1 \
                and ax.get("dtype") == "bf16":
            goals.check(f"llama3-8b bf16 decode batch 1 context {ax.get('context_len')}",
                        m.get("pct_of_memory_ceiling"), 70, "% of the ceiling")
    with open(a.serving) as f:
        serving = json.load(f)
    rows = serving.get("validation", [])
    for r in rows:
        pct = r.get("percentile", r.get("stat", ""))
        metric = r.get("metric", "")
        limit = 15 if str(pct) in ("p50", "50") else 25 if str(pct) in ("p99", "99") else None
        if limit is None:
            continue
        goals.within(f"serving {metric} {pct} at rate {r.get('rate')}", r.get("error_pct"), limit)
    if not rows:
        goals.within("serving validation", None, 15)
    print(f"{goals.checked} goal(s) checked, {goals.failed} missed")
    return 1 if goals.failed or goals.checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

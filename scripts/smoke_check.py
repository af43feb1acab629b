#!/usr/bin/env python3
"""The assertions gpu-smoke.sh makes, read from the files gpubench wrote (not from exit codes).

  smoke_check.py results FILE [--expect-off INSTRUMENT=REGEX ...] [--require-on NAME,...] [--min-cases N]
                              [--planned N --planned-skipped K [--allow-skip REGEX ...]]
      One results file: counts its entries (ok/skipped/failed; aggregates ignored) and fails on
      - a failed entry (its reason is printed);
      - an entry whose gpubench.suspect is non-empty (issue 15, common.md's contract);
      - on a device of compute capability 9.x, a custom:wgmma gemm entry or an mma_* memory peak
        that is not ok (skipped counts as a failure there: Hopper must run them);
      - an instrument of context.gpubench.profile that is neither "on" nor "off: <reason>" with a
        reason matching an --expect-off REGEX for it; one named in --require-on that is not "on";
      - fewer than --min-cases entries ran (ok), when given;
      - with --planned N (the dry run's "N to run") and --planned-skipped K: fewer than N entries
        ok while more than K entries were skipped for a reason outside the allow-list (a skip the
        plan did not expect: a path that silently did not run, e.g. cuBLASLt "unsupported" turned
        into a skip). Each such skip is printed. The allow-list is SKIP_ALLOWED below (reasons that
        depend on the host's software or filesystem, not on the GPU path under test) plus
        --allow-skip REGEX.
      Last line: "counts: ok=N skipped=N failed=N" (gpu-smoke.sh reads it), exit status 1 on a problem.
  smoke_check.py doctor FILE
      `gpubench doctor --json` output: fails on any finding of severity "error".
  smoke_check.py profile RESULTS TRACE
      The traced case lists kernels, its telemetry has non-zero power, the trace file has kernel events.
  smoke_check.py peer-memcpy BARE_OUTPUT RESULTS
      The bare cudaMemcpy loop's lines (perf/memcpy_bare.cpp) beside the memory suite's d2d and
      h2d_pinned entries of the same size: prints gpubench / bare for each; fails when the suite is
      more than 10% off the bare loop either way (or a side is missing).
  smoke_check.py peer-chase BARE_OUTPUT RESULTS
      The bare pointer chase's line (perf/chase_bare.cu) beside the memory suite's
      host_device_latency entry: prints gpubench / bare; fails outside 0.85-1.15 (the suite walks
      from every SM in turn, the bare loop from one) or when a side is missing.
  smoke_check.py peer-cublaslt OUTPUT
      gpubench_perf_cublaslt's output: prints its comparison line; fails on FAIL or no line.
  smoke_check.py ratio A B LO HI [--where AXIS=V1,V2 ...]
      Two results files of the same cases measured two ways (e.g. the CUPTI timer against CUDA
      events, a non-blocking NCCL communicator against a blocking one): for every case ok in both
      (same suite, device and axes) prints A's mean time / B's; fails when a ratio is outside
      [LO, HI] or no case is in both. With --where, only cases whose every named axis has one of
      the listed values are compared (the others are counted as left out).
  smoke_check.py soak FILE [--sweep N] [--min-samples K]
      A `gpubench soak` results file: a verdict that passed, every soaked device with at least K
      samples with a rate (default 10), power and SM clock on GPUs; with --sweep N, N sweep points
      all "on", or one point "current" (changing limits was refused: printed, not a failure).
  smoke_check.py tuning FILE --target train|dataload
      A `gpubench tune` results file: gpubench.tuning has a recommendation with a positive rate
      (train: tokens_per_s or samples_per_s; dataload: workers >= 1), a default and a speed-up.
Exit status 2 on bad usage or an unreadable file.
"""
import argparse
import json
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"smoke_check: {path}: {e}", file=sys.stderr)
        sys.exit(2)


def entries(doc):
    for b in doc.get("benchmarks", []):
        if b.get("run_type", "iteration") == "aggregate":
            continue
        g = b.get("gpubench")
        if isinstance(g, dict):
            yield b, g


# Skips the smoke run accepts although its plan did not expect them: what the host's software or
# filesystem decides, not the GPU code under test (docs/gpu-hosts.md lists them too).
SKIP_ALLOWED = [
    r"has no such type",                            # an NCCL older than 2.24 has no fp8 collectives
    r"no stream-ordered allocator",                 # a driver without memory pools (malloc_async)
    r"O_DIRECT is not supported by the filesystem",  # dataload io=direct on tmpfs/overlayfs
]


# Per-device refusals of the range profiler that the smoke run accepts (gpu-smoke.sh EXPECT_OFF).
METRICS_OFF_ALLOWED = [r"^insufficient privileges for GPU performance counters", r"^virtual GPU \(vGPU\) without profiling",
                       r"^not supported on a MIG instance"]


def compute_capabilities(doc):
    devices = doc.get("context", {}).get("gpubench", {}).get("devices", [])
    return {d.get("id"): str(d.get("compute_capability", "")) for d in devices if d.get("kind") == "cuda"}


def hopper_must_run(g, cc):
    """Why this entry must be ok on this device (compute capability 9.x), or None."""
    if not cc.startswith("9."):
        return None
    axes = g.get("axes", {})
    # custom:wgmma computes fp16 and bf16 only: other precisions are skipped by design.
    if g.get("suite") == "gemm" and axes.get("provider") == "custom:wgmma" and axes.get("dtype") in ("fp16", "bf16"):
        return f"custom:wgmma on compute capability {cc}"
    if g.get("suite") == "memory" and str(axes.get("test", "")).startswith("mma_"):
        return f"{axes['test']} peak on compute capability {cc}"
    return None


def block_scaled_problem(g, status):
    """What an ok block-scaled GEMM entry (dtype mxfp8/nvfp4) lacks: its verification, or one of its
    two figures (the GEMM alone is the headline; metrics hold the GEMM with quantisation). None when whole."""
    axes = g.get("axes", {})
    if g.get("suite") != "gemm" or axes.get("dtype") not in ("mxfp8", "nvfp4") or status != "ok":
        return None
    if not (g.get("verification") or {}).get("passed"):
        return "block-scaled GEMM ok without a passed verification"
    metrics = g.get("metrics") or {}
    missing = [k for k in ("tflops", "tflops_with_quantize", "quantize_overhead_pct") if not isinstance(metrics.get(k), (int, float))]
    if missing:
        return f"block-scaled GEMM without {', '.join(missing)} in its metrics"
    return None


def check_results(args):
    doc = load(args.file)
    problems = []
    counts = {"ok": 0, "skipped": 0, "failed": 0}
    ccs = compute_capabilities(doc)
    allowed = SKIP_ALLOWED + args.allow_skip
    unexpected = []  # (name, reason) of skips outside the allow-list
    for b, g in entries(doc):
        status = g.get("status", "failed" if b.get("error_occurred") else "ok")
        counts[status if status in counts else "failed"] += 1
        name = b.get("name", "?")
        if status == "skipped" and not any(re.search(r, str(g.get("reason", ""))) for r in allowed):
            unexpected.append((name, g.get("reason", "no reason given")))
        if status == "failed" or status not in counts:
            problems.append(f"{name}: failed: {g.get('reason', b.get('error_message', 'no reason given'))}")
        suspect = g.get("suspect")
        if suspect:
            reasons = suspect if isinstance(suspect, list) else [suspect]
            problems.append(f"{name}: suspect: {'; '.join(map(str, reasons))}")
        lacks = block_scaled_problem(g, status)
        if lacks:
            problems.append(f"{name}: {lacks}")
        why = hopper_must_run(g, ccs.get(g.get("device"), ""))
        if why and status != "ok":
            problems.append(f"{name}: {why} must be ok, is {status}: {g.get('reason', '')}")
    expect_off = {}
    for item in args.expect_off:
        inst, sep, regex = item.partition("=")
        if not sep:
            print(f"smoke_check: --expect-off {item}: expected INSTRUMENT=REGEX", file=sys.stderr)
            sys.exit(2)
        expect_off.setdefault(inst, []).append(regex)
    required = [r for r in ",".join(args.require_on).split(",") if r]
    profile = doc.get("context", {}).get("gpubench", {}).get("profile", {}) or {}
    for inst, state in profile.items():
        if inst in ("sample_interval_ms", "timer"):
            continue
        state = str(state)
        if state == "on":
            continue
        if inst in required:
            problems.append(f"instrument {inst} must be on, is '{state}'")
        elif not (state.startswith("off: ") and any(re.search(r, state[5:]) for r in expect_off.get(inst, []))):
            problems.append(f"instrument {inst}: '{state}' is not an expected state (on, or an expected off reason)")
    for inst in required:
        if inst not in profile:
            problems.append(f"instrument {inst} must be on, is absent from the results context")
    if args.min_cases is not None and counts["ok"] < args.min_cases:
        problems.append(f"only {counts['ok']} case(s) ran ok, expected at least {args.min_cases}")
    if args.planned is not None and counts["ok"] < args.planned:
        if len(unexpected) > args.planned_skipped:
            problems.append(f"{counts['ok']} case(s) ran ok of the {args.planned} planned to run, and "
                            f"{len(unexpected)} were skipped where the plan expected {args.planned_skipped} skip(s):")
            problems.extend(f"unexpected skip: {n}: {r}" for n, r in unexpected)
        elif counts["ok"] + counts["skipped"] + counts["failed"] < args.planned + args.planned_skipped:
            problems.append(f"{counts['ok']} case(s) ran ok of the {args.planned} planned to run, and the file holds "
                            f"{counts['ok'] + counts['skipped'] + counts['failed']} entries of the "
                            f"{args.planned + args.planned_skipped} planned")
    for p in problems:
        print(f"  problem: {p}")
    print(f"counts: ok={counts['ok']} skipped={counts['skipped']} failed={counts['failed']}")
    return 1 if problems else 0


def check_doctor(args):
    doc = load(args.file)
    findings = doc if isinstance(doc, list) else doc.get("findings", [])
    errors = [f for f in findings if isinstance(f, dict) and f.get("severity") == "error"]
    for f in errors:
        print(f"  problem: doctor error: {f.get('check', f.get('name', '?'))}: {f.get('message', f.get('detail', ''))}")
    print(f"doctor: {len(findings)} finding(s), {len(errors)} error(s)")
    return 1 if errors or not findings else 0


def check_profile(args):
    results, trace = load(args.results), load(args.trace)
    print("profile context:", json.dumps(results.get("context", {}).get("gpubench", {}).get("profile")))
    ok = [g for _, g in entries(results) if g.get("status") == "ok"]
    if not ok:
        print("  problem: no case ran ok")
        return 1
    p = ok[0].get("profile", {})
    problems = []
    kernels = p.get("trace", {}).get("kernels")
    if not kernels:
        problems.append(f"no kernels in the case's trace: {p.get('trace')}")
    power = p.get("telemetry", {}).get("power_w", {}).get("mean", 0) or 0
    if not power > 0:
        problems.append(f"no power in the case's telemetry: {p.get('telemetry')}")
    # The range profiler: "on" in the context must come with metric values in the case (a replay
    # that produced nothing is not a working instrument); a per-device refusal must be a known one.
    context_metrics = str(results.get("context", {}).get("gpubench", {}).get("profile", {}).get("metrics", ""))
    if context_metrics == "on":
        m = p.get("metrics") or {}
        values = m.get("values") if isinstance(m, dict) else None
        numbers = [v for v in (values or {}).values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        status = str(m.get("status", "")) if isinstance(m, dict) else ""
        if status.startswith("off: ") and any(re.search(r, status[5:]) for r in METRICS_OFF_ALLOWED):
            print(f"metrics: {status}")
        elif not numbers or not any(v > 0 for v in numbers):
            problems.append(f"metrics on but no metric values in the case's profile: {json.dumps(m)[:300]}")
    events = trace if isinstance(trace, list) else trace.get("traceEvents", [])
    kernel_events = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    if not kernel_events:
        problems.append("no kernel events in the trace file")
    for pr in problems:
        print(f"  problem: {pr}")
    print(f"profile: {len(kernels or [])} kernel names, {power:.0f} W mean, {len(kernel_events)} kernel events in the "
          f"trace; metrics: {json.dumps(p.get('metrics'))}")
    return 1 if problems else 0


def check_peer_memcpy(args):
    bare = {}
    with open(args.bare_output) as f:
        for line in f:
            m = re.match(r"memcpy-bare (\S+) size=(\d+) s_per_copy=(\S+) gbps=(\S+)", line)
            if m:
                bare[m.group(1)] = (int(m.group(2)), float(m.group(3)), float(m.group(4)))
    suite = {}
    for _, g in entries(load(args.results)):
        test = g.get("axes", {}).get("test")
        if g.get("status") == "ok" and test in ("d2d", "h2d_pinned"):
            suite[(test, int(g["axes"].get("size", 0)))] = g.get("measurement", {}).get("mean_s")
    problems = 0
    for test in ("d2d", "h2d_pinned"):
        if test not in bare:
            print(f"  problem: the bare loop printed no {test} line")
            problems += 1
            continue
        size, bare_s, gbps = bare[test]
        mine = suite.get((test, size))
        if not mine:
            print(f"  problem: no ok memory/{test} entry of size {size} in {args.results}")
            problems += 1
            continue
        ratio = bare_s / mine  # gpubench's rate / the bare loop's rate
        verdict = "ok" if 0.9 <= ratio <= 1.1 else "FAIL"
        print(f"peer memcpy {test} {size} B: bare {gbps:.1f} GB/s, gpubench {gbps * ratio:.1f} GB/s, "
              f"gpubench/bare {ratio:.3f} {verdict}")
        problems += verdict != "ok"
    return 1 if problems else 0


def check_peer_chase(args):
    bare = None
    with open(args.bare_output) as f:
        for line in f:
            m = re.match(r"chase-bare host_device_latency ns_per_access=(\S+)", line)
            if m:
                bare = float(m.group(1))
    if bare is None:
        print("  problem: the bare pointer chase printed no host_device_latency line")
        return 1
    mine = [g.get("metrics", {}).get("ns_per_access") for _, g in entries(load(args.results))
            if g.get("status") == "ok" and g.get("axes", {}).get("test") == "host_device_latency"]
    mine = [v for v in mine if v]
    if not mine:
        print(f"  problem: no ok memory/host_device_latency entry in {args.results}")
        return 1
    # The suite walks from every SM in turn, the bare loop from one: within 15%.
    ratio = min(mine) / bare
    verdict = "ok" if 0.85 <= ratio <= 1.15 else "FAIL"
    print(f"peer chase host_device_latency: bare {bare:.1f} ns, gpubench {min(mine):.1f} ns, gpubench/bare {ratio:.3f} {verdict}")
    return 0 if verdict == "ok" else 1


def check_peer_cublaslt(args):
    with open(args.output) as f:
        text = f.read()
    lines = [l for l in text.splitlines() if l.startswith("cuBLASLt bf16")]
    for l in lines:
        print(f"peer {l}")
    if not lines:
        print("  problem: gpubench_perf_cublaslt printed no comparison")
        return 1
    if "not checked" in lines[-1]:
        return 1  # no GPU: the peer proved nothing
    return 1 if lines[-1].rstrip().endswith("FAIL") else 0


def case_key(g):
    return json.dumps([g.get("suite"), g.get("device"), g.get("axes", {})], sort_keys=True)


def ok_times(path):
    times = {}
    for _, g in entries(load(path)):
        mean = g.get("measurement", {}).get("mean_s")
        if g.get("status") == "ok" and isinstance(mean, (int, float)) and mean > 0:
            times[case_key(g)] = (g, mean)
    return times


def parse_where(items):
    """--where AXIS=V1,V2 items as {axis: {values}}."""
    where = {}
    for item in items or []:
        axis, sep, values = item.partition("=")
        if not sep or not axis or not values:
            raise SystemExit(f"smoke_check.py ratio: --where '{item}': expected AXIS=V1,V2")
        where.setdefault(axis, set()).update(values.split(","))
    return where


def check_ratio(args):
    a, b = ok_times(args.a), ok_times(args.b)
    where = parse_where(args.where)
    pairs = [k for k in a if k in b]
    kept = [k for k in pairs if all(str(a[k][0].get("axes", {}).get(n)) in vs for n, vs in where.items())]
    if len(kept) < len(pairs):
        print(f"ratio: {len(pairs) - len(kept)} case(s) in both left out by --where "
              + " ".join(f"{n}={','.join(sorted(vs))}" for n, vs in where.items()))
    pairs = kept
    if not pairs:
        print(f"  problem: no case is ok in both {args.a} and {args.b}")
        return 1
    problems = 0
    for k in pairs:
        g, mean_a = a[k]
        ratio = mean_a / b[k][1]
        verdict = "ok" if args.lo <= ratio <= args.hi else "FAIL"
        axes = " ".join(f"{n}={v}" for n, v in g.get("axes", {}).items())
        print(f"ratio {g.get('suite')} {axes}: {mean_a * 1e6:.2f} us / {b[k][1] * 1e6:.2f} us = {ratio:.3f} "
              f"(expected {args.lo}..{args.hi}) {verdict}")
        problems += verdict != "ok"
    return 1 if problems else 0


def check_soak(args):
    soak = load(args.file).get("gpubench", {}).get("soak")
    if not isinstance(soak, dict):
        print(f"  problem: no gpubench.soak in {args.file}")
        return 1
    problems = []
    verdict = soak.get("verdict") or {}
    if verdict.get("passed") is not True:
        problems.append(f"verdict: {json.dumps(verdict)}")
    per_device = {}
    for s in soak.get("series", []):
        d = per_device.setdefault(s.get("device", "?"), {"rated": 0, "power": 0, "clock": 0})
        if isinstance(s.get("rate"), (int, float)) and s["rate"] > 0:
            d["rated"] += 1
        d["power"] += "power_w" in s
        d["clock"] += "sm_clock_mhz" in s
    if not per_device:
        problems.append("no samples")
    for dev, d in per_device.items():
        gpu = "cuda" in dev
        print(f"soak {dev}: {d['rated']} samples with a rate" + (f", {d['power']} with power, {d['clock']} with the SM clock" if gpu else ""))
        if d["rated"] < args.min_samples:
            problems.append(f"{dev}: {d['rated']} samples with a rate, expected at least {args.min_samples}")
        if gpu and (d["power"] == 0 or d["clock"] == 0):
            problems.append(f"{dev}: no power or SM clock in its samples")
    if args.sweep is not None:
        points = (soak.get("sweep") or {}).get("points", [])
        for p in points:
            print(f"sweep {p.get('setting')}: {p.get('status')}, throughput {p.get('throughput')} {p.get('unit', '')}, "
                  f"power {p.get('power_w')} W, perf/W {p.get('perf_per_watt')}")
        refused = len(points) == 1 and points[0].get("setting") == "current"
        if refused:
            print("sweep: changing the limit was refused; measured at the current limit")
        elif len(points) != args.sweep or any(p.get("status") != "on" for p in points):
            problems.append(f"sweep: expected {args.sweep} points all on, got {len(points)}")
    for p in problems:
        print(f"  problem: {p}")
    return 1 if problems else 0


def check_tuning(args):
    t = load(args.file).get("gpubench", {}).get("tuning")
    if not isinstance(t, dict):
        print(f"  problem: no gpubench.tuning in {args.file}")
        return 1
    rec, default = t.get("recommended") or {}, t.get("default") or {}
    problems = []
    if args.target == "train":
        rate = rec.get("tokens_per_s", rec.get("samples_per_s"))
        ok = isinstance(rate, (int, float)) and rate > 0
    else:
        rate = rec.get("workers")
        ok = isinstance(rate, int) and rate >= 1
    if not ok:
        problems.append(f"recommended: {json.dumps(rec)}")
    if not default:
        problems.append("no default measurement")
    if not isinstance(t.get("speedup_vs_default"), (int, float)):
        problems.append(f"speedup_vs_default: {t.get('speedup_vs_default')}")
    if args.target == "dataload":
        # On a GPU the tune measures nvJPEG's decode beside the loader (docs/tune.md).
        g = t.get("decode_gpu") or {}
        if not g.get("considered"):
            problems.append(f"decode_gpu not considered: {g.get('reason', 'missing')}")
        else:
            for m in g.get("measurements", []):
                print(f"decode_gpu hw_load={m.get('hw_load')}: " +
                      (f"{m['images_per_s']:.0f} images/s, {m['host_cores']:.2f} host cores, p99 batch "
                       f"{m['batch_latency_ms_p99']:.2f} ms" if "images_per_s" in m else m.get("reason", "?")))
            if "best" not in g:
                problems.append(f"decode_gpu: {g.get('reason', 'no measurement')}")
    knobs = {k: v for k, v in rec.items() if isinstance(v, (str, int)) and not isinstance(v, bool)}
    print(f"tuning {args.target}: recommended {json.dumps(knobs)}, speed-up {t.get('speedup_vs_default')}, "
          f"{len(t.get('search', []))} tried, {t.get('wall_s')} s (budget {t.get('budget_s')} s)")
    for p in problems:
        print(f"  problem: {p}")
    return 1 if problems else 0


def check_mamf(args):
    m = load(args.file).get("gpubench", {}).get("mamf")
    if not isinstance(m, dict):
        print(f"  problem: no gpubench.mamf in {args.file}")
        return 1
    problems = []
    tflops, shape, search = m.get("tflops"), m.get("shape") or {}, m.get("search") or {}
    if not (isinstance(tflops, (int, float)) and tflops > 0):
        problems.append(f"tflops: {tflops} ({m.get('reason', 'no reason given')})")
    if not all(isinstance(shape.get(k), int) and shape[k] > 0 for k in "mnk"):
        problems.append(f"shape: {json.dumps(shape)}")
    gpu = str(m.get("device", "")).startswith("cuda")
    clock = m.get("sm_clock_mhz")
    if gpu and not (isinstance(clock, (int, float)) and clock > 0):
        problems.append(f"no SM clock recorded for the best measurement: {m.get('clock', clock)}")
    if gpu and not isinstance(m.get("pct_of_datasheet"), (int, float)):
        problems.append(f"no % of datasheet: {m.get('pct_of_datasheet_reason')}")
    budget, spent = m.get("budget_s"), search.get("search_s")
    if isinstance(budget, (int, float)) and isinstance(spent, (int, float)) and spent > 1.1 * budget + 5:
        problems.append(f"the search took {spent:.1f} s of a {budget:g} s budget")
    shown = "x".join(str(shape.get(k)) for k in "mnk")
    print(f"mamf {m.get('dtype')} on {m.get('device')}: {tflops} TFLOP/s at {shown}, clock {clock} MHz, "
          f"{search.get('measured')} of {search.get('candidates')} shapes measured ({search.get('pruned')} pruned), "
          f"{spent} s of {budget} s")
    for p in problems:
        print(f"  problem: {p}")
    return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("results")
    r.add_argument("file")
    r.add_argument("--expect-off", action="append", default=[])
    r.add_argument("--require-on", action="append", default=[])
    r.add_argument("--min-cases", type=int)
    r.add_argument("--planned", type=int)
    r.add_argument("--planned-skipped", type=int, default=0)
    r.add_argument("--allow-skip", action="append", default=[])
    d = sub.add_parser("doctor")
    d.add_argument("file")
    p = sub.add_parser("profile")
    p.add_argument("results")
    p.add_argument("trace")
    m = sub.add_parser("peer-memcpy")
    m.add_argument("bare_output")
    m.add_argument("results")
    h = sub.add_parser("peer-chase")
    h.add_argument("bare_output")
    h.add_argument("results")
    f = sub.add_parser("mamf")
    f.add_argument("file")
    c = sub.add_parser("peer-cublaslt")
    c.add_argument("output")
    q = sub.add_parser("ratio")
    q.add_argument("a")
    q.add_argument("b")
    q.add_argument("lo", type=float)
    q.add_argument("hi", type=float)
    q.add_argument("--where", action="append", metavar="AXIS=V1,V2")
    k = sub.add_parser("soak")
    k.add_argument("file")
    k.add_argument("--sweep", type=int)
    k.add_argument("--min-samples", type=int, default=10)
    t = sub.add_parser("tuning")
    t.add_argument("file")
    t.add_argument("--target", choices=["train", "dataload"], required=True)
    args = parser.parse_args()
    handlers = {"results": check_results, "doctor": check_doctor, "profile": check_profile,
                "peer-memcpy": check_peer_memcpy, "peer-chase": check_peer_chase, "peer-cublaslt": check_peer_cublaslt, "ratio": check_ratio, "soak": check_soak,
                "tuning": check_tuning, "mamf": check_mamf}
    sys.exit(handlers[args.command](args))


if __name__ == "__main__":
    main()

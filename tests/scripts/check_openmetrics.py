#!/usr/bin/env python3
"""`gpubench report --format openmetrics` read back by real parsers (Debian's
python3-prometheus-client): the Prometheus text parser, which node_exporter's textfile
collector speaks, and the stricter OpenMetrics parser. Usage: check_openmetrics.py GPUBENCH RESULTS.json...
Each file alone and all together (where the same host appears twice, a `results` label keeps
the series apart), then generated files of cases whose suites, axis names and axis values differ
only in what sanitising or printing makes alike (issue 41 item 6): every case must keep its own
series, with its own value. Fails with a message naming what is wrong."""
import json
import os
import subprocess
import sys
import tempfile

try:
    from prometheus_client.parser import text_string_to_metric_families as prometheus_families
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
except ImportError:
    sys.exit("python3-prometheus-client is missing (apt-get install python3-prometheus-client; scripts/lib.sh lists it)")


def fail(msg):
    sys.exit(f"check_openmetrics: {msg}")


def report(gpubench, files):
    r = subprocess.run([gpubench, "report", "--format", "openmetrics", *files], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"gpubench report exited {r.returncode}: {r.stderr}")
    return r.stdout


def expected_cases(files):
    """(host, device, suite) of every ok iteration entry: each must have a gpubench_seconds_per_run sample."""
    out = set()
    for f in files:
        doc = json.load(open(f))
        host = doc["context"].get("host_name", "")
        for e in doc.get("benchmarks", []):
            g = e.get("gpubench", {})
            if e.get("run_type", "iteration") == "iteration" and g.get("status", "ok") == "ok" and "real_time" in e:
                out.add((host, g.get("device", ""), g.get("suite", "")))
    return out


def check(gpubench, files):
    text = report(gpubench, files)
    if not text.endswith("# EOF\n"):
        fail(f"{files}: the output does not end with '# EOF'")
    families = {}
    for parse in (prometheus_families, openmetrics_families):
        try:
            families = {f.name: f for f in parse(text)}
        except Exception as e:  # the parsers raise ValueError (and others) on malformed input
            fail(f"{files}: {parse.__module__} refused the output: {e!r}\n{text[:2000]}")
    for f in families.values():
        if f.type != "gauge":
            fail(f"{f.name}: type {f.type}, expected gauge")
        seen = set()
        for s in f.samples:
            for label in ("suite", "device", "host"):
                if label not in s.labels and f.name != "gpubench_results_timestamp_seconds":
                    fail(f"{f.name}: a sample has no {label} label: {s}")
            key = tuple(sorted(s.labels.items()))
            if key in seen:
                fail(f"{f.name}: duplicate series {s.labels}")
            seen.add(key)
    if "gpubench_seconds_per_run" not in families:
        fail(f"{files}: no gpubench_seconds_per_run family")
    got = {(s.labels["host"], s.labels["device"], s.labels["suite"]) for s in families["gpubench_seconds_per_run"].samples}
    missing = expected_cases(files) - got
    if missing:
        fail(f"{files}: no sample for {sorted(missing)}")
    return families


def series_key(labels):
    """The label set as Prometheus compares series: unordered, an empty value the same as no label."""
    return tuple(sorted((k, v) for k, v in labels.items() if v != ""))


def colliding_cases():
    """(suite, name, axes, metrics) of cases that differ only in what sanitising or printing makes alike."""
    cases = []
    # Axis names that sanitise alike: spaces, punctuation, non-ASCII bytes, doubled underscores.
    for axis in ["k x", "k_x", "k-x", "k.x", "k/x", "k:x", "k\u00e9x", "k__x", "k\u00e9\u00e9x", "k\"x", "k\\x", "k\nx"]:
        cases.append(("gemm", f"gemm/{axis}:1", {axis: 1}, {"tflops": 1}))
    # Axis names that meet a reserved label, its axis_ form, the case label, a leading digit or "__".
    for axis in ["host", "axis_host", "axis_host_2", "case", "axis_case", "suite", "device_model", "uuid",
                 "results", "1k", "_1k", "__k", "axis___k"]:
        cases.append(("gemm", "gemm/reserved", {axis: "v", "m": 8}, {"tflops": 2}))
    # Two axes of one case that sanitise alike, in both orders, beside cases that hold one of them.
    cases.append(("gemm", "gemm/two", {"a.b": 1, "a_b": 2}, {"tflops": 3}))
    cases.append(("gemm", "gemm/two", {"a_b": 1, "axis_a_b": 2}, {"tflops": 3}))
    cases.append(("gemm", "gemm/two", {"a-b": 1, "axis_a_b": 2}, {"tflops": 3}))
    # Axis values that print alike: a number and its text, 1 and 1.0, true and "true", null and
    # "-", an empty value and no axis at all (Prometheus reads k="" as no label k).
    for value in [1, "1", 1.0, True, "true", None, "-", "", "1 ", "\u00e9", "e\u0301"]:
        cases.append(("memory", "memory/k:1", {"test": "triad", "k": value}, {"gbps": 4}))
    cases.append(("memory", "memory/k:1", {"test": "triad"}, {"gbps": 4}))
    # Suite names that differ in characters a metric name would lose, and with the same axes.
    for suite in ["my suite", "my_suite", "my-suite", "my.suite", "My_suite", "my_suite "]:
        cases.append((suite, "x/m:1", {"m": 1}, {"tflops": 5}))
    # Headline metrics whose family names sanitise alike, or meet a fixed family, in cases whose
    # axis names sanitise alike too (cases of equal axes are one case: their repetitions).
    primaries = ["tokens/s", "tokens_s", "tokens s", "seconds_per_run", "noise_ratio", "pct_of_peak",
                 "metric_seconds_per_run", "soak_passed", "results_timestamp_seconds", "pct_of_published"]
    for i, primary in enumerate(primaries):
        cases.append(("infer", "infer/m:1", {"m" + "_" * (i + 1) + "x": 1, "m" + " " * (i + 1) + "x": 1} if i % 2 else
                      {"m" + "-" * (i + 1) + "x": 1}, {"primary": primary, primary: 6}))
    return cases


def collision_file(path, host, devices):
    """A results file of every colliding case on each device; each case's mean_s is its own."""
    entries, expected = [], {}
    n = 0
    for device in devices:
        for suite, name, axes, metrics in colliding_cases():
            n += 1
            mean_s = n * 1e-3
            entries.append({"name": name, "run_type": "iteration", "real_time": mean_s * 1e3, "time_unit": "ms",
                            "gpubench": {"suite": suite, "device": device, "device_name": "NVIDIA H200",
                                         "status": "ok", "axes": axes, "metrics": metrics,
                                         "measurement": {"mean_s": mean_s, "noise_pct": 1.0}}})
            expected[mean_s] = (device, suite, name, axes)
    doc = {"context": {"host_name": host, "date": "2026-12-04T10:00:00+00:00",
                       "gpubench": {"schema_version": 1, "devices": [{"id": d} for d in devices]}},
           "benchmarks": entries}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f)
    return expected


def check_collisions(gpubench):
    """No series lost: every case of the generated files has one gpubench_seconds_per_run sample,
    with its own value, and no two samples of a family share a series."""
    with tempfile.TemporaryDirectory() as tmp:
        runs = [(os.path.join(tmp, "a", "r.json"), "node-1", ["cuda:0", "cuda:1"]),
                (os.path.join(tmp, "b", "r.json"), "node-1", ["cuda:0"]),  # same host and file name
                (os.path.join(tmp, "c.json"), "node 1", ["cuda:0"])]       # a host that sanitises alike
        expected = {}
        for path, host, devices in runs:
            for mean_s, what in collision_file(path, host, devices).items():
                expected[(path, mean_s)] = what
        for files in [[runs[0][0]], [r[0] for r in runs]]:
            text = report(gpubench, files)
            for parse in (prometheus_families, openmetrics_families):
                try:
                    families = {f.name: f for f in parse(text)}
                except Exception as e:
                    fail(f"colliding cases: {parse.__module__} refused the output: {e!r}\n{text[:3000]}")
                for fam in families.values():
                    seen = {}
                    for s in fam.samples:
                        key = series_key(s.labels)
                        if key in seen:
                            fail(f"colliding cases: {fam.name}: two samples of one series: {seen[key]} and {s.labels}")
                        seen[key] = s.labels
                want = sorted(v for (p, v) in expected if p in files)
                got = sorted(s.value for s in families["gpubench_seconds_per_run"].samples)
                if len(got) != len(want) or any(abs(a - b) > 1e-12 * b for a, b in zip(got, want)):
                    lost = sorted(set(round(v, 9) for v in want) - set(round(v, 9) for v in got))
                    fail(f"colliding cases: {len(want)} cases, {len(got)} gpubench_seconds_per_run samples; lost: "
                         f"{[expected[next(k for k in expected if round(k[1], 9) == v)] for v in lost][:10]}")
                heads = sum(len(f.samples) for n, f in families.items()
                            if n not in ("gpubench_seconds_per_run", "gpubench_noise_ratio", "gpubench_pct_of_peak",
                                         "gpubench_pct_of_published", "gpubench_results_timestamp_seconds"))
                if heads != len(want):
                    fail(f"colliding cases: {len(want)} cases, {heads} headline samples")
        return len(expected)


def main():
    gpubench, files = sys.argv[1], sys.argv[2:]
    if not files:
        fail("no results file given")
    for f in files:
        check(gpubench, [f])
    fams = check(gpubench, files)
    print(f"ok: {len(fams)} families, {sum(len(f.samples) for f in fams.values())} samples from {len(files)} files")
    print(f"ok: {check_collisions(gpubench)} colliding cases in 3 generated files, each its own series")


if __name__ == "__main__":
    main()

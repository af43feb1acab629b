#!/usr/bin/env python3
"""`gpubench report --format openmetrics` read back by real parsers (Debian's
python3-prometheus-client): the Prometheus text parser, which node_exporter's textfile
collector speaks, and the stricter OpenMetrics parser. Usage: check_openmetrics.py GPUBENCH RESULTS.json...
Each file alone and all together (where the same host appears twice, a `results` label keeps
the series apart). Fails with a message naming what is wrong."""
import json
import subprocess
import sys

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


def main():
    gpubench, files = sys.argv[1], sys.argv[2:]
    if not files:
        fail("no results file given")
    for f in files:
        check(gpubench, [f])
    fams = check(gpubench, files)
    print(f"ok: {len(fams)} families, {sum(len(f.samples) for f in fams.values())} samples from {len(files)} files")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Where a CI run's time went: the slowest compile steps of each build folder (from ninja's own
log, .ninja_log) and the slowest tests (from CTest's Testing/Temporary/LastTest.log).

    scripts/ci-timings.py [--top N] BUILD_DIR...

Prints, per build folder, the N (default 10) slowest steps of its last build and the N slowest
tests of its last ctest run; a folder without one of the logs says so. .ci/run calls it at the
end of a run (issue 50: the next compile step or test to speed up should be in CI's own output).
"""
import argparse
import os
import re
import sys


def ninja_steps(build_dir):
    """[(seconds, target)] of the last build recorded in BUILD_DIR/.ninja_log (format v5 or v6:
    start_ms end_ms mtime target hash, one line per output; a rebuild appends, so a later line
    for the same target replaces an earlier one)."""
    path = os.path.join(build_dir, ".ninja_log")
    if not os.path.exists(path):
        return None
    last = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 4:
                continue
            try:
                start, end = int(parts[0]), int(parts[1])
            except ValueError:
                continue
            last[parts[3]] = (end - start) / 1000.0
    return sorted(((s, t) for t, s in last.items()), reverse=True)


TEST_NAME = re.compile(r'^\d+/\d+ Testing: (.+)$')
TEST_TIME_SECONDS = re.compile(r'^Test time = +([0-9.]+) sec$')


def ctest_times(build_dir):
    """[(seconds, test)] of BUILD_DIR's last ctest run, from LastTest.log: each test's block starts
    with "N/M Testing: NAME" and holds "Test time = S sec"."""
    path = os.path.join(build_dir, "Testing", "Temporary", "LastTest.log")
    if not os.path.exists(path):
        return None
    out, name = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = TEST_NAME.match(line)
            if m:
                name = m.group(1)
                continue
            m = TEST_TIME_SECONDS.match(line)
            if m and name is not None:
                out.append((float(m.group(1)), name))
                name = None
    return sorted(out, reverse=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--top", type=int, default=10)
    p.add_argument("build_dirs", nargs="+")
    a = p.parse_args()
    if a.top < 1:
        print("ci-timings.py: --top must be at least 1", file=sys.stderr)
        return 2
    for d in a.build_dirs:
        name = os.path.relpath(d)
        show(name, ninja_steps(d), a.top, "no .ninja_log (not built here)", "build steps", "of compile and link")
        show(name, ctest_times(d), a.top, "no ctest log", "tests", "in all")
    return 0


def show(name, rows, top, missing, what, total_is):
    """Prints one build folder's [(seconds, name)] rows: their count and total, then the slowest."""
    if rows is None:
        print(f"[ci] {name}: {missing}")
        return
    total = sum(s for s, _ in rows)
    print(f"[ci] {name}: {len(rows)} {what}, {total:.0f} s {total_is}; slowest {top}:")
    for s, t in rows[:top]:
        print(f"[ci]   {s:7.1f} s  {t}")


if __name__ == "__main__":
    sys.exit(main())

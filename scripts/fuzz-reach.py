#!/usr/bin/env python3
"""Which sources the fuzzers reach, from a FUZZ_REACH=1 scripts/fuzz.sh run (every source
sanitized and instrumented, libFuzzer's -print_coverage=1 in each target's log).

    scripts/fuzz-reach.py BUILD_DIR TARGET...

A source is reached when a function defined in it ran at least once (a COVERED_FUNC line with
hits > 0 naming that file). Prints the count, the reached sources that the normal fuzz build leaves
plain (BUILD_DIR/fuzz_never_reached.txt, from tests/fuzz/CMakeLists.txt) and the unreached ones
that it still instruments; exits 1 when a plain one was reached (it should be instrumented).
"""
import os
import re
import sys

COVERED = re.compile(r'^COVERED_FUNC: hits: (\d+) edges: \d+/\d+ .* (\S+):\d+$')


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    build, targets = sys.argv[1], sys.argv[2:]
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

    def rel(path):
        path = os.path.normpath(path if os.path.isabs(path) else os.path.join(build, path))
        return os.path.relpath(path, root)

    with open(os.path.join(build, 'fuzz_sources.txt')) as f:
        sources = {rel(line.strip()) for line in f if line.strip()}
    with open(os.path.join(build, 'fuzz_never_reached.txt')) as f:
        plain = {line.strip() for line in f if line.strip()}
    reached = set()
    for t in targets:
        with open(os.path.join(build, f'fuzz_{t}.log'), errors='replace') as f:
            for line in f:
                m = COVERED.match(line.strip())
                if m and int(m.group(1)) > 0:
                    reached.add(rel(m.group(2)))
    reached &= sources
    print(f'fuzz reach: {len(reached)} of {len(sources)} sources reached by {" ".join(targets)}')
    wrong = sorted(reached & plain)
    for s in wrong:
        print(f'  reached but built plain (move it out of GPUBENCH_FUZZ_NEVER_REACHED): {s}')
    for s in sorted(sources - reached - plain):
        print(f'  never reached but instrumented (may join GPUBENCH_FUZZ_NEVER_REACHED): {s}')
    return 1 if wrong else 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""The storage suite against fio on the same file, at fio's four reference points: sequential
1 MiB and random 4 KiB reads, queue depth 1 and 32, one job, O_DIRECT, io_uring (issue 44: the
goal is gpubench within 5% of fio's bandwidth at each).

    perf/storage_vs_fio.py [--bin GPUBENCH] [--dir DIR] [--size 1G] [--seconds 5] [--rounds 3]

The file is written once by fio (--rw=write, random content, fsync) in DIR (default: the
temporary folder; put it on the device to measure) and read by both: gpubench through
GPUBENCH_STORAGE_FILE (each read checked against a plain pread first), fio with
`--ioengine=io_uring --direct=1 --iodepth=Q --numjobs=1 --time_based --output-format=json`.
The two alternate for ROUNDS rounds and the best round of each side is compared (load only
slows a run down), as perf/README.md does. Prints GB/s, IOPS and p99 latency side by side and
exits 1 when a point's bandwidth ratio is outside [0.95, 1.05]. fio is Debian's `fio` package.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

POINTS = [("read", "1M", 1), ("read", "1M", 32), ("randread", "4k", 1), ("randread", "4k", 32)]


def fio(path, rw, bs, qd, seconds, size):
    out = subprocess.run(["fio", "--name=p", f"--filename={path}", f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}",
                          "--numjobs=1", "--ioengine=io_uring", "--direct=1", f"--size={size}", "--time_based",
                          f"--runtime={seconds}", "--ramp_time=1", "--lat_percentiles=1", "--output-format=json"],
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out)["jobs"][0]["read"]
    p99 = r["lat_ns"]["percentile"].get("99.000000", 0) / 1e3
    return r["bw_bytes"] / 1e9, r["iops"], p99


def gpubench(binary, path, rw, bs, qd, seconds, size, work):
    out = os.path.join(work, "g.json")
    env = dict(os.environ, GPUBENCH_STORAGE_FILE=path)
    subprocess.run([binary, "run", "--device", "cpu", "--suite", "storage", "-q", "--out", out, "--min-time", str(seconds),
                    "-a", f"rw={rw}", "-a", f"bs={bs}", "-a", f"iodepth={qd}", "-a", "numjobs=1", "-a", "direct=1",
                    "-a", "ioengine=io_uring", "-a", f"filesize={size}"], check=True, env=env, capture_output=True)
    doc = json.load(open(out))
    g = [b["gpubench"] for b in doc["benchmarks"] if b.get("run_type") == "iteration"][0]
    if g["status"] != "ok":
        sys.exit(f"gpubench rw={rw} bs={bs} iodepth={qd}: {g['status']}: {g.get('reason', '')}")
    m = g["metrics"]
    return m["gbps"], m["iops"], m["latency_us_p99"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="build/ci/apps/gpubench/gpubench")
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--size", default="1G")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio not found (Debian: apt install fio)")
    work = tempfile.mkdtemp(prefix="gpubench-fio-", dir=a.dir)
    path = os.path.join(work, "file")
    try:
        subprocess.run(["fio", "--name=prep", f"--filename={path}", "--rw=write", "--bs=1M", f"--size={a.size}",
                        "--ioengine=psync", "--direct=1", "--end_fsync=1", "--output-format=terse"], check=True,
                       capture_output=True)
        size_bytes = os.path.getsize(path)
        bad = 0
        print(f"{'point':<22} {'fio GB/s':>9} {'gpubench':>9} {'ratio':>6}   {'fio IOPS':>10} {'gpubench':>10}   "
              f"{'fio p99 us':>10} {'gpubench':>9}")
        for rw, bs, qd in POINTS:
            best_f, best_g = (0, 0, 0), (0, 0, 0)
            for _ in range(a.rounds):
                f = fio(path, rw, bs, qd, a.seconds, size_bytes)
                g = gpubench(a.bin, path, rw, bs, qd, a.seconds, size_bytes, work)
                best_f = max(best_f, f)
                best_g = max(best_g, g)
            ratio = best_g[0] / best_f[0] if best_f[0] > 0 else 0
            ok = 0.95 <= ratio <= 1.05
            bad += not ok
            print(f"{rw + ' ' + bs + ' iodepth=' + str(qd):<22} {best_f[0]:9.3f} {best_g[0]:9.3f} {ratio:6.3f}   "
                  f"{best_f[1]:10.0f} {best_g[1]:10.0f}   {best_f[2]:10.1f} {best_g[2]:9.1f}  {'ok' if ok else 'OUTSIDE 5%'}")
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

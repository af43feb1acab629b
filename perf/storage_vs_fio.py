#!/usr/bin/env python3
"""The storage suite against fio on the same file, at fio's four reference points: sequential
1 MiB and random 4 KiB reads, queue depth 1 and 32, one job, O_DIRECT, io_uring (issue 44: the
goal is gpubench within 5% of fio's bandwidth at each).

    perf/storage_vs_fio.py [--bin GPUBENCH] [--dir DIR] [--size 1G] [--seconds 5] [--rounds 3]

Both sides read into huge-page memory: gpubench's buffers of 1 MiB and more are transparent
huge pages (MADV_HUGEPAGE), and fio gets `--mem=shmhuge` (2 MiB pages; as root the script
reserves them through vm.nr_hugepages and gives them back). Without huge pages fio's 1 MiB reads
land in 256 scattered 4 KiB pages, which a virtual disk reads at about 0.6 of the rate of a
contiguous buffer (the build VM), so the sequential points would compare memory layouts, not
readers. The file is written once by fio (--rw=write, random content, fsync) in DIR (default: the
temporary folder; put it on the device to measure) and read by both: gpubench through
GPUBENCH_STORAGE_FILE (each read checked against a plain pread first), fio with
`--ioengine=io_uring --direct=1 --iodepth=Q --numjobs=1 --time_based --output-format=json`.
The two run back to back for ROUNDS rounds, the first of each pair alternating, and each
round gives a ratio (gpubench / fio bandwidth); the point's ratio is the median of its rounds'.
A virtual disk's rate drifts by tens of percent over minutes (the build VM's sequential reads:
1.4 to 2.6 GB/s within ten minutes, for fio and gpubench alike), so only runs seconds apart are
compared with each other, never the best of one side against the best of the other. Prints
the median bandwidths, IOPS and p99 latencies, every round's ratio, and exits 1 when a point's
median ratio is outside [0.95, 1.05]. fio is Debian's `fio` package.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

POINTS = [("read", "1M", 1), ("read", "1M", 32), ("randread", "4k", 1), ("randread", "4k", 32)]


HUGE_PAGES = 64  # 2 MiB pages fio's buffers need at the deepest point: 32 x 1 MiB, with room


def reserve_huge_pages():
    """Makes HUGE_PAGES 2 MiB huge pages free for fio's `--mem=shmhuge` (root may raise
    vm.nr_hugepages); returns (the setting to restore or None, why not or None)."""
    try:
        free = int(next(l.split()[1] for l in open("/proc/meminfo") if l.startswith("HugePages_Free:")))
        if free >= HUGE_PAGES:
            return None, None
        old = int(open("/proc/sys/vm/nr_hugepages").read())
        with open("/proc/sys/vm/nr_hugepages", "w") as f:
            f.write(str(old + HUGE_PAGES - free))
        free = int(next(l.split()[1] for l in open("/proc/meminfo") if l.startswith("HugePages_Free:")))
        return old, None if free >= HUGE_PAGES else f"only {free} huge pages could be reserved"
    except (OSError, StopIteration, ValueError) as e:
        return None, f"no huge pages for fio ({e})"


def fio(path, rw, bs, qd, seconds, size, huge):
    out = subprocess.run(["fio", "--name=p", f"--filename={path}", f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}",
                          "--numjobs=1", "--ioengine=io_uring", "--direct=1", f"--size={size}", "--time_based",
                          f"--runtime={seconds}", "--ramp_time=1", "--lat_percentiles=1", "--output-format=json"] +
                         (["--mem=shmhuge", "--hugepage-size=2m"] if huge else []),
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out[out.find("{"):])["jobs"][0]["read"]
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
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio not found (Debian: apt install fio)")
    work = tempfile.mkdtemp(prefix="gpubench-fio-", dir=a.dir)
    path = os.path.join(work, "file")
    restore, why_not = reserve_huge_pages()
    huge = why_not is None
    print("buffers: huge pages on both sides (fio --mem=shmhuge; gpubench's 1 MiB+ buffers are MADV_HUGEPAGE)" if huge else
          f"buffers: fio's in small pages ({why_not}): its 1 MiB reads land in up to 256 segments and a virtual "
          "disk reads them slower than gpubench's huge-page buffers")
    try:
        subprocess.run(["fio", "--name=prep", f"--filename={path}", "--rw=write", "--bs=1M", f"--size={a.size}",
                        "--ioengine=psync", "--direct=1", "--end_fsync=1", "--output-format=terse"], check=True,
                       capture_output=True)
        size_bytes = os.path.getsize(path)
        bad = 0
        print(f"{'point':<22} {'fio GB/s':>9} {'gpubench':>9} {'ratio':>6}   {'fio IOPS':>10} {'gpubench':>10}   "
              f"{'fio p99 us':>10} {'gpubench':>9}")
        for rw, bs, qd in POINTS:
            fs, gs, ratios = [], [], []
            for i in range(a.rounds):
                pair = [lambda: fio(path, rw, bs, qd, a.seconds, size_bytes, huge),
                        lambda: gpubench(a.bin, path, rw, bs, qd, a.seconds, size_bytes, work)]
                if i % 2:
                    g, f = pair[1](), pair[0]()
                else:
                    f, g = pair[0](), pair[1]()
                fs.append(f)
                gs.append(g)
                ratios.append(g[0] / f[0] if f[0] > 0 else 0)
            med_f = [statistics.median(x[k] for x in fs) for k in range(3)]
            med_g = [statistics.median(x[k] for x in gs) for k in range(3)]
            ratio = statistics.median(ratios)
            ok = 0.95 <= ratio <= 1.05
            bad += not ok
            print(f"{rw + ' ' + bs + ' iodepth=' + str(qd):<22} {med_f[0]:9.3f} {med_g[0]:9.3f} {ratio:6.3f}   "
                  f"{med_f[1]:10.0f} {med_g[1]:10.0f}   {med_f[2]:10.1f} {med_g[2]:9.1f}  {'ok' if ok else 'OUTSIDE 5%'}"
                  f"   rounds: {' '.join(f'{r:.3f}' for r in ratios)}")
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if restore is not None:
            with open("/proc/sys/vm/nr_hugepages", "w") as f:
                f.write(str(restore))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The video suite's CPU encode against `ffmpeg -benchmark` on the same frames and settings
(issue 48: gpubench's fps within 10% of ffmpeg's).

    perf/video_vs_ffmpeg.py [--bin GPUBENCH] [--frames 60] [--loops 4] [--rounds 5]

The frames are the suite's synthetic clip, written raw by `gpubench datagen --video`; ffmpeg reads
them (`-f rawvideo -pix_fmt yuv420p`, `-stream_loop` LOOPS times, so it encodes LOOPS x FRAMES
frames in one process, as the suite's encoder stays open across runs) and encodes with the same
encoder, preset and constant QP (`-c:v libx264 -preset P -qp Q`, `-f null -`); its fps is the
frames over `-benchmark`'s rtime, which counts the encode (reading raw frames and the null
muxer cost next to nothing). gpubench runs `--suite video -a op=encode` with the same settings
and reports `metrics.fps`. The two run back to back for ROUNDS rounds, the first of each pair
alternating, and a point's ratio is the median of its rounds' ratios (gpubench fps / ffmpeg fps).
Prints both and exits 1 when a median ratio is outside [0.90, 1.10]. ffmpeg is Debian's `ffmpeg`
package (the same libavcodec as the suite's).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

POINTS = [("h264", "veryfast", 23, "1280x720"), ("h264", "medium", 23, "1280x720"), ("hevc", "ultrafast", 23, "1280x720")]
ENCODER = {"h264": "libx264", "hevc": "libx265"}


def ffmpeg_fps(path, codec, preset, qp, size, frames, loops):
    cmd = ["ffmpeg", "-hide_banner", "-nostdin", "-benchmark", "-stream_loop", str(loops - 1), "-f", "rawvideo",
           "-pix_fmt", "yuv420p", "-s", size, "-r", "30", "-i", path, "-c:v", ENCODER[codec], "-preset", preset,
           "-qp", str(qp)]
    if codec == "hevc":
        cmd += ["-x265-params", "log-level=error"]
    cmd += ["-f", "null", "-"]
    err = subprocess.run(cmd, check=True, capture_output=True, text=True).stderr
    m = re.search(r"bench: utime=([0-9.]+)s stime=([0-9.]+)s rtime=([0-9.]+)s", err)
    if not m:
        sys.exit(f"no -benchmark line in ffmpeg's output:\n{err[-2000:]}")
    return frames * loops / float(m.group(3))


def gpubench_fps(binary, codec, preset, qp, size, frames, seconds, work):
    out = os.path.join(work, "v.json")
    res = {"1280x720": "720p", "1920x1080": "1080p", "3840x2160": "2160p"}[size]
    subprocess.run([binary, "run", "--device", "cpu", "--suite", "video", "-q", "--out", out, "--min-time", str(seconds),
                    "-a", "op=encode", "-a", f"codec={codec}", "-a", f"preset={preset}", "-a", f"qp={qp}", "-a", f"res={res}",
                    "-a", f"frames={frames}"], check=True, capture_output=True)
    g = [b["gpubench"] for b in json.load(open(out))["benchmarks"] if b.get("run_type") == "iteration"][0]
    if g["status"] != "ok":
        sys.exit(f"gpubench {codec} {preset}: {g['status']}: {g.get('reason', '')}")
    return g["metrics"]["fps"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="build/ci/apps/gpubench/gpubench")
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--loops", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3)
    a = ap.parse_args()
    if not shutil.which("ffmpeg"):
        sys.exit("ffmpeg not found (Debian: apt install ffmpeg)")
    work = tempfile.mkdtemp(prefix="gpubench-video-")
    bad = 0
    try:
        print(f"{'point':<30} {'ffmpeg fps':>10} {'gpubench':>9} {'ratio':>6}")
        for codec, preset, qp, size in POINTS:
            clip = json.loads(subprocess.run([a.bin, "datagen", "--out", work, "--video", size, "--frames", str(a.frames)],
                                             check=True, capture_output=True, text=True).stdout)["file"]
            fs, gs, ratios = [], [], []
            for i in range(a.rounds):
                run_f = lambda: ffmpeg_fps(clip, codec, preset, qp, size, a.frames, a.loops)
                run_g = lambda: gpubench_fps(a.bin, codec, preset, qp, size, a.frames, a.seconds, work)
                if i % 2:
                    g, f = run_g(), run_f()
                else:
                    f, g = run_f(), run_g()
                fs.append(f)
                gs.append(g)
                ratios.append(g / f)
            ratio = statistics.median(ratios)
            ok = 0.90 <= ratio <= 1.10
            bad += not ok
            label = f"{ENCODER[codec]} {preset} qp={qp} {size}"
            print(f"{label:<30} {statistics.median(fs):10.1f} {statistics.median(gs):9.1f} {ratio:6.3f}  "
                  f"{'ok' if ok else 'OUTSIDE 10%'}   rounds: {' '.join(f'{r:.3f}' for r in ratios)}")
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

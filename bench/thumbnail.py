#!/usr/bin/env python3
"""swift-record thumbnail against the ffmpeg command line: 10 pictures of a 10-minute recording.

The recording (bench/rounds.py): 1280x720 H.264 at 30 fps, a key frame every 250 frames
(8.3 s), with AAC, in MKV, generated once into the work directory. Ten times spread over it,
each moved onto the first picture at or after it (ffprobe), so that both programs must
give the same picture: swift-record's is the picture shown at the time, ffmpeg's the first
at or after it; on a picture's own time the two agree.

ours:   one `swift-record thumbnail REC --at t1,...,t10 -o ours-%d.png` (one process: the
        file opened once, a seek per picture, only the chosen picture converted and encoded).
ffmpeg: ten `ffmpeg -ss T -i REC -frames:v 1 ff-N.png`, -ss before -i: the fast accurate way
        (seek by the index to the key frame before T, decode forward, drop what precedes T);
        their times summed. Both decode with automatic threads and write PNG.

One warm-up of each, then ROUNDS rounds alternating ours and ffmpeg, so load from elsewhere
hits both alike. Reported: ratio of wall times ours / ffmpeg, median (min-max), CPU times,
peak RSS; the pictures compared (ffmpeg's psnr filter, smallest over the ten). Target
(issue 30): <= 1.0 in every round.

Writes bench/results/thumbnail.md.

usage: bench/thumbnail.py [--rounds N] [--no-build] [--workdir DIR]
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rounds as R  # noqa: E402

TARGET = 1.0
TIMES = [17.0, 73.5, 131.2, 188.8, 245.1, 302.6, 359.9, 417.3, 474.4, 531.7]


def frame_time(rec, t):
    """The first picture's time at or after t (ffprobe decodes from the key frame before)."""
    out = subprocess.run(["ffprobe", "-v", "error", "-read_intervals", f"{t}%{t + 0.5}", "-select_streams", "v",
                          "-show_entries", "frame=pts_time", "-of", "csv=p=0", rec], capture_output=True, text=True, check=True).stdout
    return min(float(x) for x in out.split() if float(x) >= t - 1e-9)


def psnr(a, b):
    out = subprocess.run(["ffmpeg", "-nostdin", "-i", a, "-i", b, "-lavfi", "psnr", "-f", "null", "-"],
                         capture_output=True, text=True).stderr
    m = re.search(r"average:(\S+)", out)
    return float("inf") if m and m.group(1) == "inf" else float(m.group(1)) if m else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-build", action="store_true", help="use the existing release build")
    ap.add_argument("--workdir", default=os.path.join("/tmp", "swift-record-bench-media"))
    ap.add_argument("--output", default=os.path.join(R.ROOT, "bench", "results", "thumbnail.md"))
    args = ap.parse_args()
    if not args.no_build:
        subprocess.run(["swift", "build", "-c", "release", "--product", "swift-record"], cwd=R.ROOT, check=True)
    os.makedirs(args.workdir, exist_ok=True)
    rec = R.recording(args.workdir)
    times = [frame_time(rec, t) for t in TIMES]
    w = args.workdir
    ours = [[R.BINARY, "thumbnail", rec, "--at", ",".join(f"{t:.3f}" for t in times), "-o", os.path.join(w, "ours-%d.png"), "-y", "-q"]]
    ffmpeg = [["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", f"{t:.3f}", "-i", rec, "-frames:v", "1", os.path.join(w, f"ff-{i + 1}.png")]
              for i, t in enumerate(times)]
    load_before = os.getloadavg()
    res = R.alternate(args.rounds, {"ours": ours, "ffmpeg": ffmpeg}, "thumbnail")
    load_after = os.getloadavg()
    quality = [psnr(os.path.join(w, f"ours-{i + 1}.png"), os.path.join(w, f"ff-{i + 1}.png")) for i in range(len(times))]
    ok, row = R.ratio_row("10 pictures", res["ours"], res["ffmpeg"], TARGET)
    lines = ["# swift-record thumbnail vs ffmpeg CLI", "",
             f"Run {R.stamp()} by `bench/thumbnail.py --rounds {args.rounds}`: 10 PNG pictures of a {R.RECORDING_SECONDS // 60}-minute "
             f"1280x720 H.264 recording (30 fps, key frame every {R.KEYINT} frames, 2 B-frames, AAC, MKV; made by "
             f"`{R.recording_command()}`).",
             "ours: one `swift-record thumbnail REC --at t1,…,t10 -o ours-%d.png`; other: ten `ffmpeg -ss T -i REC -frames:v 1 ff-N.png` "
             "(-ss before -i: seek to the key frame before, decode forward), times summed. One warm-up each, then alternating rounds; "
             "ratio = ours / ffmpeg wall time per round, met only when every round meets the target.", "",
             R.machine(load_before, load_after), "", *R.TABLE_HEAD, row, "",
             "Times (s): " + ", ".join(f"{t:.3f}" for t in times) + ".",
             f"Same pictures: PSNR ours vs ffmpeg (ffmpeg's psnr filter), smallest of the ten: {min(quality):.1f} dB"
             + (" (identical)" if min(quality) == float("inf") else "") + ".", "",
             f"Verdict: {'pass' if ok else 'FAIL'} (target ≤ {TARGET:.2f} in every round)."]
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""swift-record trim (an exact cut: re-encode to the next key frame, copy the rest) against
what it is made of: `ffmpeg -ss -to -c copy` of the same range plus the encoder alone for
the re-encoded pictures; and against re-encoding the whole range.

The source: SECONDS of testsrc2 at 1920x1080, 30 fps, libx264 veryfast (its default key
frame interval, 250 frames: 8.3 s) + AAC, made once in the work directory. The cut:
FROM to TO, FROM inside a group of pictures.

ours:      `swift-record trim SRC --from FROM --to TO -o ours.mp4 -y -q`
parts:     `ffmpeg -ss FROM -to TO -i SRC -c copy ff.mp4` + `ffmpeg -ss FROM -to NEXTKEY -i SRC
           -an -c:v libx264 -crf 12 -bf 0 -f null -` (the encoder alone, on every core, as ours)
full:      `ffmpeg -ss FROM -to TO -i SRC -c:v libx264 -crf 12 -c:a aac full.mp4` (once)

One warm-up each, then ROUNDS rounds of ours and parts in turn. Reported: ours / parts per
round, median (min-max), target <= 1.1 (issue 41); ours / full, target <= 0.1.

Writes bench/results/trim-quick.md (the issue's acceptance, with its checks and 10-minute
sources, is bench/trim-acceptance.py, writing bench/results/trim.md).

usage: bench/trim.py [--rounds N] [--binary PATH] [--seconds S] [--workdir DIR]
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rounds as R  # noqa: E402


def key_frames(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time,flags",
                          "-of", "csv=p=0", path], check=True, capture_output=True, text=True).stdout
    return [float(line.split(",")[0]) for line in out.splitlines() if ",K" in line]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--binary", default=R.BINARY)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--workdir", default="/tmp/swift-record-bench")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    source = os.path.join(args.workdir, f"trim-source-{args.seconds}s.mp4")
    if not os.path.exists(source):
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30",
                        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", str(args.seconds),
                        "-c:v", "libx264", "-preset", "veryfast", "-c:a", "aac", source + ".part.mp4"], check=True)
        os.rename(source + ".part.mp4", source)
    cut_from, cut_to = args.seconds / 3 + 0.3, args.seconds * 0.85
    next_key = next(k for k in key_frames(source) if k > cut_from)
    out = lambda name: os.path.join(args.workdir, name)  # noqa: E731
    ours = [args.binary, "trim", source, "--from", f"{cut_from}", "--to", f"{cut_to}", "-o", out("ours.mp4"), "-y", "-q"]
    parts = [["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", f"{cut_from}", "-to", f"{cut_to}", "-i", source, "-c", "copy", out("ff.mp4")],
             ["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", f"{cut_from}", "-to", f"{next_key}", "-i", source,
              "-an", "-c:v", "libx264", "-crf", "12", "-bf", "0", "-f", "null", "-"]]
    full = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", f"{cut_from}", "-to", f"{cut_to}", "-i", source,
            "-c:v", "libx264", "-crf", "12", "-c:a", "aac", out("full.mp4")]
    load_before = os.getloadavg()
    times = R.alternate(args.rounds, {"ours": [ours], "parts": parts}, "trim")
    full_time = R.run(full)
    load_after = os.getloadavg()
    ok, row = R.ratio_row("exact trim vs copy + encoder alone", times["ours"], times["parts"], 1.1)
    versus_full = statistics.median(t[0] for t in times["ours"]) / full_time[0]
    lines = [f"# swift-record trim (exact) ({R.stamp()})", "",
             f"Source: {args.seconds} s of 1920x1080 H.264 (libx264 veryfast, key frames every 250 frames) + AAC; "
             f"the cut {cut_from:.1f}–{cut_to:.1f} s, {next_key - cut_from:.2f} s re-encoded (to the key frame at {next_key:.2f} s). "
             f"Binary: {args.binary}.", "", *R.TABLE_HEAD, row, "",
             f"Against re-encoding the whole range ({full_time[0]:.1f} s, once): ours / full = **{versus_full:.3f}** "
             f"(target ≤ 0.10; it depends on the share of the range re-encoded, here {(next_key - cut_from) / (cut_to - cut_from):.0%}).",
             "", R.machine(load_before, load_after), ""]
    path = os.path.join(R.ROOT, "bench", "results", "trim-quick.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

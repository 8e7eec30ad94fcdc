#!/usr/bin/env python3
"""swift-record convert --copy against ffmpeg -c copy: remux a 10-minute MKV (H.264 + AAC) to MP4.

The recording (bench/rounds.py): 1280x720 H.264 at 30 fps (key frame every 250 frames) and
AAC stereo, in MKV, about 520 MB, generated once into the work directory.

ours:   `swift-record convert REC --copy -o ours.mp4 -y -q`
ffmpeg: `ffmpeg -i REC -c copy ff.mp4` (its default for MP4: moov at the end, as ours
        writes a normal finish).
floor:  `cp REC floor.mkv`: reading and writing the same bytes once, with nothing parsed,
        the least any remux of this file can take here.

One warm-up of each, then ROUNDS rounds running the three in turn, each after a `sync`
that is not timed (each writes 517 MB; without it one run's writeback lands in the next
one's time, which made rounds vary by 3x). Reported: ratio of wall
times ours / ffmpeg per round, median (min-max), and each against the floor; CPU times and
peak RSS. The packets of both outputs are compared (ffmpeg framemd5 -c copy). Target
(issue 30): <= 1.1 in every round.

Writes bench/results/copy.md.

usage: bench/copy.py [--rounds N] [--no-build] [--workdir DIR]
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rounds as R  # noqa: E402

TARGET = 1.1


def packet_hashes(path):
    """Each stream's packet hashes in order (the two muxers may interleave streams differently)."""
    out = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"],
                         check=True, capture_output=True, text=True).stdout
    streams = {}
    for line in out.splitlines():
        if line and not line.startswith("#"):
            fields = [f.strip() for f in line.split(",")]
            streams.setdefault(fields[0], []).append(fields[-1])
    return streams


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-build", action="store_true", help="use the existing release build")
    ap.add_argument("--workdir", default=os.path.join("/tmp", "swift-record-bench-media"))
    ap.add_argument("--output", default=os.path.join(R.ROOT, "bench", "results", "copy.md"))
    args = ap.parse_args()
    if not args.no_build:
        subprocess.run(["swift", "build", "-c", "release", "--product", "swift-record"], cwd=R.ROOT, check=True)
    os.makedirs(args.workdir, exist_ok=True)
    rec = R.recording(args.workdir)
    w = args.workdir
    commands = {
        "ours": [[R.BINARY, "convert", rec, "--copy", "-o", os.path.join(w, "ours.mp4"), "-y", "-q"]],
        "ffmpeg": [["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", rec, "-c", "copy", os.path.join(w, "ff.mp4")]],
        "floor": [["cp", rec, os.path.join(w, "floor.mkv")]],
    }
    load_before = os.getloadavg()
    res = R.alternate(args.rounds, commands, "copy", settle=True)
    load_after = os.getloadavg()
    same = packet_hashes(os.path.join(w, "ours.mp4")) == packet_hashes(os.path.join(w, "ff.mp4"))
    ok, row = R.ratio_row("ours / ffmpeg", res["ours"], res["ffmpeg"], TARGET)
    floor = [f[0] for f in res["floor"]]
    ours_floor = [a[0] / f for a, f in zip(res["ours"], floor)]
    ff_floor = [b[0] / f for b, f in zip(res["ffmpeg"], floor)]
    size = os.path.getsize(rec) / 1e6
    lines = ["# swift-record convert --copy vs ffmpeg -c copy", "",
             f"Run {R.stamp()} by `bench/copy.py --rounds {args.rounds}`: remux of a {R.RECORDING_SECONDS // 60}-minute MKV "
             f"({size:.0f} MB; 1280x720 H.264 30 fps, key frame every {R.KEYINT} frames, AAC; made by `{R.recording_command()}`) to MP4.",
             "ours: `swift-record convert REC --copy -o ours.mp4`; other: `ffmpeg -i REC -c copy ff.mp4`; floor: `cp REC floor.mkv`. "
             "One warm-up each, then rounds running the three in turn, each after a `sync` (not timed: the previous run's dirty pages written back first); ratio = ours / ffmpeg wall time per round, met only when every round meets the target.", "",
             R.machine(load_before, load_after), "", *R.TABLE_HEAD, row, "",
             f"Floor (`cp`, the same bytes read and written once): median {statistics.median(floor):.3f} s; "
             f"ours / floor {statistics.median(ours_floor):.2f} ({min(ours_floor):.2f}–{max(ours_floor):.2f}), "
             f"ffmpeg / floor {statistics.median(ff_floor):.2f} ({min(ff_floor):.2f}–{max(ff_floor):.2f}).",
             f"Same packets in both outputs (framemd5 of each stream, -c copy; the interleaving of the streams may differ): {'yes' if same else 'NO'}.", "",
             f"Verdict: {'pass' if ok else 'FAIL'} (target ≤ {TARGET:.2f} in every round)."]
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Instruction counts (callgrind) of start-up, one converted frame and a short encode.

Counts instructions, not time, so a busy shared machine does not move them. Three cases,
each beside its counterpart run with the same input and settings (issue 38's targets):

- `help`: `swift-record --help` (≤ 125 M instructions); beside it `ffmpeg -hide_banner -h`.
- `frame`: one 1280x720 yuv420p frame converted to MP4, libx264 ultrafast 2 Mbit/s, one
  encoder thread (≤ 0.75 × the same with the ffmpeg CLI).
- `encode`: 60 such frames, the same settings (≤ 1.06 × the x264 CLI alone on the same file,
  same preset, bit rate, key-frame interval and thread count, raw H.264 out).

And the floors, what no program doing the same can go below: an empty C program linked
against the libraries swift-record links now, as it linked them before (with libpulse,
libpipewire, libsystemd, libXdamage and libXrandr, and with libavdevice too), and FFmpeg's alone; and the x264 CLI
alone. valgrind 3.19 cannot read the Swift binary's debug information, so the
release build is stripped into a temporary directory first; the build itself is
`swift build -c release --static-swift-stdlib --product swift-record` (the Makefile's flags)
unless `--no-build`. ffmpeg links libavfilter, which links librubberband, which links the
BLAS and LAPACK that Debian's alternatives choose: once OpenBLAS is installed (python3-numpy
brings it), its start-up (a thread pool, about 120 M instructions) is in every ffmpeg run and
was in every swift-record run that linked libavdevice. By default every command here runs
with Debian's reference BLAS and LAPACK first in LD_LIBRARY_PATH (as on a machine without
OpenBLAS, where issue 38's figures were taken); `--installed-blas` measures what is installed.
Every command runs `--rounds` times (callgrind's counts vary by a few
thousand instructions between runs: addresses, the environment), and the table shows the
median with min–max. The x264 CLI comes from scripts/install-bench-deps.sh.

Writes bench/results/instructions.md (and .json beside it) unless `--output -`.

usage: bench/instructions.py [--no-build] [--binary PATH] [--rounds N] [--cases help,frame,encode,floors]
                             [--annotate DIR] [--output FILE]
"""
import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, ".build", "release", "swift-record")
SIZE, FPS, BITRATE, KEYINT = "1280x720", 30, "2M", 60
TARGETS = {"help": ("absolute", 125e6), "frame": ("ratio", 0.75), "encode": ("ratio", 1.06)}
# What swift-record links (Package.swift's system libraries), for the empty-program floors; and
# what it opens with dlopen when a source needs them (linked until issue 38: Package.swift).
LINKED = ["avformat", "avcodec", "swscale", "swresample", "avutil", "X11", "Xext", "Xfixes", "stdc++", "m"]
OPENED = ["pulse", "pipewire-0.3", "systemd", "Xdamage", "Xrandr"]
FFMPEG_ONLY = ["avformat", "avcodec", "swscale", "swresample", "avutil", "stdc++", "m"]


ENV = dict(os.environ)


def reference_blas():
    """Debian's reference BLAS and LAPACK folders, when installed (libblas3, liblapack3)."""
    for arch in ("x86_64-linux-gnu", "aarch64-linux-gnu"):
        dirs = ["/usr/lib/%s/blas" % arch, "/usr/lib/%s/lapack" % arch]
        if all(os.path.isdir(d) for d in dirs):
            return dirs
    return None


def callgrind(cmd, annotate=None, cwd=None):
    """Instructions executed by cmd and every thread it starts (callgrind's "Collected")."""
    out = annotate or os.devnull
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + cmd, env=ENV,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=cwd)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or not m:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-3000:]))
    return int(m.group(1))


def libraries(path):
    out = subprocess.run(["ldd", path], capture_output=True, text=True, env=ENV).stdout
    return len([line for line in out.splitlines() if line.strip()])


def empty_program(work, name, libs):
    src = os.path.join(work, "empty.c")
    with open(src, "w") as f:
        f.write("int main(void) { return 0; }\n")
    exe = os.path.join(work, name)
    subprocess.run(["cc", "-O2", src, "-o", exe, "-Wl,--no-as-needed"] + ["-l" + lib for lib in libs], check=True)
    return exe


def fmt(n):
    return "%.1f M" % (n / 1e6)


def spread(values):
    return "%s (%s–%s)" % (fmt(statistics.median(values)), fmt(min(values)), fmt(max(values))) if len(values) > 1 else fmt(values[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-build", action="store_true", help="use the existing release build")
    ap.add_argument("--binary", default=BINARY, help="the swift-record to measure (stripped into a copy first)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cases", default="help,frame,encode,floors")
    ap.add_argument("--annotate", help="keep callgrind's output files of swift-record's runs in this folder")
    ap.add_argument("--label", default="", help="a line naming what was measured, put above the table")
    ap.add_argument("--installed-blas", action="store_true", help="run with the BLAS/LAPACK Debian's alternatives choose (OpenBLAS once installed)")
    ap.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "instructions.md"))
    args = ap.parse_args()
    cases = set(args.cases.split(","))
    blas = "as installed (%s)" % os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    if not args.installed_blas and reference_blas():
        ENV["LD_LIBRARY_PATH"] = ":".join(reference_blas() + [p for p in [os.environ.get("LD_LIBRARY_PATH")] if p])
        blas = "Debian's reference BLAS/LAPACK (LD_LIBRARY_PATH=%s)" % ":".join(reference_blas())

    if not args.no_build:
        subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "swift-record"], cwd=ROOT, check=True)
    for tool in ("valgrind", "ffmpeg", "x264", "strip", "cc"):
        if not shutil.which(tool):
            sys.exit("%s not found on PATH (scripts/install-bench-deps.sh installs the benchmarks' tools)" % tool)
    if not os.access(args.binary, os.X_OK):
        sys.exit("%s not found; run swift build -c release --static-swift-stdlib --product swift-record" % args.binary)

    work = tempfile.mkdtemp(prefix="swift-record-instructions-")
    try:
        binary = os.path.join(work, "swift-record")
        subprocess.run(["strip", "-o", binary, args.binary], check=True)
        one, sixty = os.path.join(work, "one.yuv"), os.path.join(work, "sixty.yuv")
        for path, frames in ((one, 1), (sixty, 60)):
            subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=%s:rate=%d" % (SIZE, FPS),
                            "-frames:v", str(frames), "-pix_fmt", "yuv420p", "-f", "rawvideo", path], check=True)

        def ours_convert(path, out):
            return [binary, "convert", path, "--size", SIZE, "--fps", str(FPS), "--preset", "ultrafast", "--bitrate", BITRATE,
                    "--keyint", str(KEYINT), "--threads", "1", "--quiet", "--overwrite", "-o", os.path.join(work, out)]

        def ffmpeg_convert(path, out):
            return ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", SIZE, "-r", str(FPS),
                    "-i", path, "-c:v", "libx264", "-preset", "ultrafast", "-b:v", BITRATE, "-g", str(KEYINT), "-threads", "1",
                    "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv",
                    os.path.join(work, out)]

        x264 = ["x264", "--quiet", "--preset", "ultrafast", "--threads", "1", "--bitrate", "2000", "--keyint", str(KEYINT),
                "--fps", str(FPS), "--demuxer", "raw", "--input-csp", "i420", "--input-res", SIZE, "-o", os.path.join(work, "x264.264")]
        rows = []  # (case, command label, [counts], counterpart label, [counts], target)

        def measure(cmd, name):
            counts = []
            for i in range(args.rounds):
                keep = os.path.join(args.annotate, "callgrind.%s" % name) if args.annotate and i == 0 else None
                counts.append(callgrind(cmd, annotate=keep, cwd=work))
            print("%-40s %s" % (name, spread(counts)), file=sys.stderr)
            return counts

        if args.annotate:
            os.makedirs(args.annotate, exist_ok=True)
        if "help" in cases:
            rows.append(("help", "`swift-record --help`", measure([binary, "--help"], "help"),
                         "`ffmpeg -hide_banner -h`", measure(["ffmpeg", "-hide_banner", "-h"], "ffmpeg-help")))
        if "frame" in cases:
            rows.append(("frame", "`swift-record convert` 1 frame", measure(ours_convert(one, "ours-1.mp4"), "frame"),
                         "`ffmpeg` 1 frame", measure(ffmpeg_convert(one, "ffmpeg-1.mp4"), "ffmpeg-frame")))
        if "encode" in cases:
            rows.append(("encode", "`swift-record convert` 60 frames", measure(ours_convert(sixty, "ours-60.mp4"), "encode"),
                         "`x264` 60 frames", measure(x264 + [sixty], "x264-encode")))
        floors = []
        if "floors" in cases:
            for name, libs in (("empty C program linked as swift-record was (with libavdevice, libpulse, libpipewire, libsystemd, libXdamage, libXrandr)", ["avdevice"] + LINKED + OPENED),
                               ("empty C program linked as swift-record was (with libpulse, libpipewire, libsystemd, libXdamage, libXrandr)", LINKED + OPENED),
                               ("empty C program linked as swift-record is (FFmpeg's five libraries, libX11, libXext, libXfixes)", LINKED),
                               ("empty C program linked against FFmpeg's five libraries alone", FFMPEG_ONLY),
                               ("empty C program, no libraries", [])):
                exe = empty_program(work, "empty%d" % len(floors), libs)
                floors.append((name, libraries(exe), measure([exe], "floor%d" % len(floors))))
            floors.append(("`ffmpeg -version`", libraries(shutil.which("ffmpeg")), measure(["ffmpeg", "-version"], "ffmpeg-version")))
            floors.append(("`x264` 1 frame (the encoder alone, one frame)", libraries(shutil.which("x264")), measure(x264 + [one], "x264-frame")))

        lines = ["| case | swift-record | counterpart | counterpart's count | ratio | target | met |", "|---|---|---|---|---|---|---|"]
        data = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "libraries": libraries(args.binary), "cases": {}, "floors": {}}
        for case, ours_label, ours, theirs_label, theirs, in rows:
            kind, target = TARGETS[case]
            ratio = statistics.median(ours) / statistics.median(theirs)
            worst = max(ours) / min(theirs)
            if kind == "absolute":
                met, target_text = max(ours) <= target, "≤ %s" % fmt(target)
            else:
                met, target_text = worst <= target, "≤ %.2f ×" % target
            lines.append("| %s | %s: %s | %s | %s | %.3f (worst %.3f) | %s | %s |"
                         % (case, ours_label, spread(ours), theirs_label, spread(theirs), ratio, worst, target_text, "yes" if met else "**no**"))
            data["cases"][case] = {"ours": ours, "theirs": theirs, "ratio": ratio, "met": met}
        if floors:
            lines += ["", "| floor | shared libraries | instructions |", "|---|---|---|"]
            for name, libs, counts in floors:
                lines.append("| %s | %d | %s |" % (name, libs, spread(counts)))
                data["floors"][name] = {"libraries": libs, "counts": counts}
        text = ("Measured %s by `bench/instructions.py` (callgrind, a stripped copy of the release build, %d rounds; "
                "medians with min–max; BLAS: %s). swift-record loads %d shared libraries (`ldd | wc -l`).\n\n"
                % (data["date"], args.rounds, blas, data["libraries"])) + (args.label + "\n\n" if args.label else "") + "\n".join(lines) + "\n"
        print(text)
        if args.output != "-":
            os.makedirs(os.path.dirname(args.output), exist_ok=True)
            with open(args.output, "w") as f:
                f.write(text)
            with open(os.path.splitext(args.output)[0] + ".json", "w") as f:
                json.dump(data, f, indent=1)
        return 0 if all(c["met"] for c in data["cases"].values()) else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

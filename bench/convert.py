#!/usr/bin/env python3
"""swift-record convert against the ffmpeg command line, run in one go.

For each preset: 1280x720 yuv420p raw input, 300 frames, libx264 at 2 Mbit/s with a
60-frame key-frame interval and automatic threads, MP4 output. After a warm-up run of
each, the two commands alternate (A B A B ...) so load from elsewhere hits both alike.
Reported: wall time per run, the median of the per-pair ratios ours / ffmpeg, each
command's peak RSS (getrusage ru_maxrss of the child), and CPU time (user + system),
which other load on a shared machine disturbs less than wall time. The H.264 packets of the last
pair are compared (ffmpeg framemd5), to show both did the same work.

The encoder's own limit runs in the same rounds when the x264 command line is installed (the
project's install script installs it): `x264` on the same raw file with the same preset,
bit rate and key-frame interval, writing a raw H.264 stream (no container) — what libx264
alone takes for those frames. Its wall time is reported against ffmpeg's like ours, so the
report shows whether a target on the ratio to ffmpeg is within reach of any program that
runs libx264. A target counts as met only when every pair meets it (the whole min–max
range), as in bench/run.

Writes a Markdown table to bench/results/convert.md.

usage: bench/convert.py [--pairs N] [--frames N] [--no-build] [--workdir DIR]
"""
import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, ".build", "release", "swift-record")
WIDTH, HEIGHT, FPS, BITRATE, KEYINT = 1280, 720, 30, "2M", 60
BITRATE_KBIT = 2000
# Targets from issue 4 (ultrafast: issue 10): ratio of wall times, ours / ffmpeg, in every pair.
TARGETS = {"veryfast": 1.00, "ultrafast": 0.95}


def run(cmd):
    """Runs cmd; returns (wall s, peak RSS KiB, CPU s). Fails loudly on a non-zero exit."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"failed ({code}): {' '.join(cmd)}\n{err}")
    return wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def packet_hashes(path):
    out = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-c", "copy", "-f", "framemd5", "-"],
                         check=True, capture_output=True, text=True).stdout
    return [line.split(",")[-1].strip() for line in out.splitlines() if line and not line.startswith("#")]


def first_line(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0]
    except Exception:
        return "?"


def x264_build():
    """The libx264 soname version (its build number), as installed."""
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"):
        try:
            for name in sorted(os.listdir(d)):
                if name.startswith("libx264.so."):
                    return "build " + name.split(".so.")[1]
        except OSError:
            pass
    return "?"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=7, help="timed A/B pairs per preset after the warm-up (default 7)")
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--no-build", action="store_true", help="use the existing release build")
    ap.add_argument("--workdir", help="where to put the input and outputs (default: a temporary directory)")
    ap.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "convert.md"))
    args = ap.parse_args()

    if not args.no_build:
        subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "swift-record"], cwd=ROOT, check=True)
    if not os.access(BINARY, os.X_OK):
        sys.exit(f"{BINARY} not found; run swift build -c release --static-swift-stdlib")
    for tool in ("ffmpeg", "ffprobe"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found on PATH")

    work = args.workdir or tempfile.mkdtemp(prefix="swift-record-bench-")
    os.makedirs(work, exist_ok=True)
    raw = os.path.join(work, "in.yuv")
    size = f"{WIDTH}x{HEIGHT}"
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={size}:rate={FPS}",
                    "-frames:v", str(args.frames), "-pix_fmt", "yuv420p", "-f", "rawvideo", raw], check=True)

    load_before = os.getloadavg()
    results = []
    for preset in ("veryfast", "ultrafast"):
        ours_out, ffmpeg_out = os.path.join(work, f"ours-{preset}.mp4"), os.path.join(work, f"ffmpeg-{preset}.mp4")
        ours = [BINARY, "convert", raw, "--size", size, "--fps", str(FPS), "--preset", preset,
                "--bitrate", BITRATE, "--keyint", str(KEYINT), "-q", "--overwrite", "-o", ours_out]
        ffmpeg = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", size,
                  "-r", str(FPS), "-i", raw, "-c:v", "libx264", "-preset", preset, "-b:v", BITRATE, "-g", str(KEYINT),
                  "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv",
                  ffmpeg_out]
        x264 = (["x264", "--quiet", "--preset", preset, "--bitrate", str(BITRATE_KBIT), "--keyint", str(KEYINT),
                 "--fps", str(FPS), "--demuxer", "raw", "--input-csp", "i420", "--input-res", size,
                 "-o", os.path.join(work, f"x264-{preset}.264"), raw] if shutil.which("x264") else None)
        run(ours)    # warm-up: page cache, libraries
        run(ffmpeg)
        if x264:
            run(x264)
        pairs, alone = [], []
        for i in range(args.pairs):
            a = run(ours)
            b = run(ffmpeg)
            pairs.append((a, b))
            c = run(x264) if x264 else None
            if c:
                alone.append(c)
            print(f"{preset} pair {i + 1}: ours {a[0]:.3f} s (CPU {a[2]:.3f}) {a[1]} KiB, "
                  f"ffmpeg {b[0]:.3f} s (CPU {b[2]:.3f}) {b[1]} KiB, ratio {a[0] / b[0]:.3f}"
                  + (f"; x264 alone {c[0]:.3f} s (CPU {c[2]:.3f}), {c[0] / b[0]:.3f} x ffmpeg" if c else ""),
                  file=sys.stderr)
        same = packet_hashes(ours_out) == packet_hashes(ffmpeg_out)
        results.append((preset, ours, ffmpeg, x264, pairs, alone, same))

    load_after = os.getloadavg()
    lines = []
    lines.append("# swift-record convert vs ffmpeg CLI")
    lines.append("")
    lines.append(f"Run {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} by `bench/convert.py --pairs {args.pairs}`: "
                 f"{size} yuv420p, {args.frames} frames, libx264 {BITRATE}bit/s, keyint {KEYINT}, automatic threads, MP4.")
    lines.append(f"One warm-up run each, then {args.pairs} alternating pairs (ours, ffmpeg; then the x264 CLI alone on the same file, "
                 "when installed). Ratio = ours / ffmpeg wall time per pair, met only when every pair meets the target; "
                 "peak RSS = ru_maxrss of the process.")
    lines.append("")
    lines.append(f"Machine: {cpu_model()}, {os.cpu_count()} CPUs, load average {load_before[0]:.2f} before / "
                 f"{load_after[0]:.2f} after (shared machine). {' '.join(first_line(['ffmpeg', '-version']).split()[:3])}, libx264 {x264_build()}; "
                 f"{first_line(['swift', '--version'])}.")
    lines.append("")
    lines.append("| preset | ours median (s) | ffmpeg median (s) | median ratio | ratio range | target | CPU ours / ffmpeg (s) | CPU ratio | peak RSS ours (MiB) | peak RSS ffmpeg (MiB) | RSS ok | same packets | verdict |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    all_ok = True
    for preset, ours, ffmpeg, _, pairs, _, same in results:
        ratios = [a[0] / b[0] for a, b in pairs]
        med = statistics.median(ratios)
        ours_rss = max(a[1] for a, _ in pairs)
        ffmpeg_rss = max(b[1] for _, b in pairs)
        rss_ok = ours_rss <= ffmpeg_rss
        ok = max(ratios) <= TARGETS[preset] and rss_ok
        all_ok = all_ok and ok
        lines.append(f"| {preset} | {statistics.median(a[0] for a, _ in pairs):.3f} | {statistics.median(b[0] for _, b in pairs):.3f} "
                     f"| **{med:.3f}** | {min(ratios):.3f}–{max(ratios):.3f} | ≤ {TARGETS[preset]:.2f} "
                     f"| {statistics.median(a[2] for a, _ in pairs):.3f} / {statistics.median(b[2] for _, b in pairs):.3f} "
                     f"| {statistics.median(a[2] / b[2] for a, b in pairs):.3f} "
                     f"| {ours_rss / 1024:.1f} | {ffmpeg_rss / 1024:.1f} | {'yes' if rss_ok else 'no'} "
                     f"| {'yes' if same else 'no'} | {'pass' if ok else 'FAIL'} |")
    if any(alone for *_, alone, _ in results):
        lines.append("")
        lines.append("The encoder alone (the x264 CLI on the same file, same preset, bit rate and key-frame interval, raw H.264 out), "
                     "wall time per round against the same round's ffmpeg and ours:")
        lines.append("")
        lines.append("| preset | x264 alone median (s) | x264 alone / ffmpeg (median, min–max) | ours / x264 alone (median, min–max) | target on ours / ffmpeg | x264 alone within it in every round |")
        lines.append("|---|---|---|---|---|---|")
        for preset, _, _, _, pairs, alone, _ in results:
            if not alone:
                continue
            to_ffmpeg = [c[0] / b[0] for (_, b), c in zip(pairs, alone)]
            ours_to = [a[0] / c[0] for (a, _), c in zip(pairs, alone)]
            lines.append(f"| {preset} | {statistics.median(c[0] for c in alone):.3f} "
                         f"| {statistics.median(to_ffmpeg):.3f} ({min(to_ffmpeg):.3f}–{max(to_ffmpeg):.3f}) "
                         f"| {statistics.median(ours_to):.3f} ({min(ours_to):.3f}–{max(ours_to):.3f}) "
                         f"| ≤ {TARGETS[preset]:.2f} | {'yes' if max(to_ffmpeg) <= TARGETS[preset] else 'no'} |")
    lines.append("")
    lines.append("Commands:")
    lines.append("")
    for preset, ours, ffmpeg, x264, *_ in results:
        for cmd in (ours, ffmpeg) + ((x264,) if x264 else ()):
            lines.append(f"- `{' '.join(os.path.basename(c) if c.startswith('/') else c for c in cmd)}`")
    lines.append("")
    lines.append("Per pair (wall s / CPU s / peak RSS MiB):")
    lines.append("")
    lines.append("| preset | pair | ours | ffmpeg | ratio | x264 alone |")
    lines.append("|---|---|---|---|---|---|")
    for preset, _, _, _, pairs, alone, _ in results:
        for i, (a, b) in enumerate(pairs):
            c = alone[i] if i < len(alone) else None
            lines.append(f"| {preset} | {i + 1} | {a[0]:.3f} / {a[2]:.3f} / {a[1] / 1024:.1f} | {b[0]:.3f} / {b[2]:.3f} / {b[1] / 1024:.1f} "
                         f"| {a[0] / b[0]:.3f} | {f'{c[0]:.3f} / {c[2]:.3f} / {c[1] / 1024:.1f}' if c else '–'} |")
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        f.write(text)
    print(text)
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())

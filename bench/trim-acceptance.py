#!/usr/bin/env python3
"""Issue 41's acceptance of `swift-record trim` (exact by default), checked with independent
tools, then its speed. Sources, made once and cached in bench/work/ (generating is slow):
  ffmpeg        SECONDS of 1920x1080 testsrc2 at 30 fps, libx264 with its defaults (medium,
                crf 23, High, 3 B-frames, B-pyramid, key frames every 250) + AAC
  swift-record  as long, recorded by swift-record (--source synthetic --audio synthetic)
  lossless      LOSSLESS seconds, libx264 -preset veryfast -qp 0 + AAC (x264 makes no
                B-frames when lossless): every picture compared by framemd5
Each is trimmed at FROM and TO (not key frames; S/6+0.35 and 2S/3+0.45) and checked: the
first and last pictures are the source's shown at FROM and just before TO (framemd5, every
picture, on the lossless source; >= 45 dB PSNR on the lossy ones over the head and the last
8 pictures, the last < 35 dB against the next source picture: not a neighbour); every video
packet outside the re-encoded edges and every sound packet byte-identical to the source's
(ffprobe MD5 of each, decode order); the pictures' duration exact to a frame; the sound
within one AAC frame of the cut at both ends; `ffmpeg -v warning` silent; GStreamer
(uridecodebin, GST_DEBUG=*:2) without a decoding warning; headless Chromium plays its start
and its end in a <video> (a page on loopback posting its result back).
Speed (ffmpeg source, the RELEASE binary), ROUNDS rounds alternating ours (`trim -q`) and
parts (`ffmpeg -ss FROM -to TO -c copy` + the encoder alone for the re-encoded pictures, the
head and the tail, libx264 crf 12 -bf 0 on every core as ours): target ours <= 1.1 x parts;
and re-encoding the range (libx264 crf 12 + AAC), timed on its first FULL seconds and scaled
(said): target ours <= 0.1 x that. Writes bench/results/trim.md; exit 0 only if all passed.

usage: bench/trim-acceptance.py [--binary PATH] [--seconds S] [--lossless-seconds L]
        [--rounds N] [--full-seconds F] [--sources ffmpeg,swift-record,lossless] [--no-speed]
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rounds as R  # noqa: E402
from browser_play import chromium_plays  # noqa: E402

WORK = os.path.join(R.ROOT, "bench", "work")
FPS = 30
AAC_FRAME = 1024 / 48000


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def make(path, cmd):
    if not os.path.exists(path):
        print(f"making {path} (once) ...", file=sys.stderr)
        part = path + ".part" + os.path.splitext(path)[1]
        subprocess.run(cmd + [part], check=True)
        os.rename(part, path)
    return path


def sources(args):
    lavfi = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size=1920x1080:rate={FPS}",
             "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"]
    out = {}
    if "ffmpeg" in args.sources:
        out["ffmpeg"] = (make(os.path.join(WORK, f"trim-ffmpeg-{args.seconds}s.mp4"),
                              lavfi + ["-t", str(args.seconds), "-pix_fmt", "yuv420p", "-c:v", "libx264", "-c:a", "aac"]), False)
    if "swift-record" in args.sources:
        path = os.path.join(WORK, f"trim-swift-record-{args.seconds}s.mp4")
        if not os.path.exists(path):
            subprocess.run([args.binary, "--source", "synthetic", "--audio", "synthetic", "--size", "1920x1080", "--fps", str(FPS),
                            "--frames", str(args.seconds * FPS), "-q", "-y", "-o", path + ".part.mp4"], check=True)
            os.rename(path + ".part.mp4", path)
        out["swift-record"] = (path, False)
    if "lossless" in args.sources:
        out["lossless"] = (make(os.path.join(WORK, f"trim-ffmpeg-lossless-{args.lossless_seconds}s.mp4"),
                                lavfi + ["-t", str(args.lossless_seconds), "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "veryfast",
                                         "-qp", "0", "-c:a", "aac"]), True)
    return out


def packets(path, which, interval=None):
    """(pts, dts, key, md5) of every packet of stream `which` (v or a), decode order."""
    cmd = ["ffprobe", "-v", "error", "-select_streams", which, "-show_entries", "packet=pts,dts,flags,data_hash",
           "-show_data_hash", "MD5", "-of", "json"]
    if interval:
        cmd += ["-read_intervals", interval]
    rows = json.loads(sh(cmd + [path], check=True).stdout).get("packets", [])
    return [(p.get("pts"), p.get("dts"), p.get("flags", "").startswith("K"), p.get("data_hash")) for p in rows]


def time_base(path, which):
    num, den = sh(["ffprobe", "-v", "error", "-select_streams", which, "-show_entries", "stream=time_base", "-of", "csv=p=0", path],
                  check=True).stdout.strip().split("/")
    return int(num) / int(den)


def stream_span(path, which):
    f = sh(["ffprobe", "-v", "error", "-select_streams", which, "-show_entries", "stream=start_time,duration", "-of", "csv=p=0", path],
           check=True).stdout.strip().split(",")
    return float(f[0]), float(f[0]) + float(f[1])


def psnr(a, a_seek, b, b_seek, frames):
    """Per-picture PSNR of `frames` pictures of a (from a_seek s) against b (from b_seek s)."""
    with tempfile.NamedTemporaryFile(suffix=".txt", delete=False) as t:
        stats = t.name
    cmd = ["ffmpeg", "-nostdin", "-v", "error", "-ss", f"{a_seek:.6f}", "-i", a, "-ss", f"{b_seek:.6f}", "-i", b, "-filter_complex",
           f"[0:v]setpts=N/({FPS}*TB)[x];[1:v]setpts=N/({FPS}*TB)[y];[x][y]psnr=stats_file={stats}", "-frames:v", str(frames), "-f", "null", "-"]
    sh(cmd, check=True)
    with open(stats) as f:
        values = [m.group(1) for m in re.finditer(r"psnr_avg:(\S+)", f.read())]
    os.unlink(stats)
    return [float("inf") if v == "inf" else float(v) for v in values]


def framemd5(path, seek=None, frames=None):
    cmd = ["ffmpeg", "-nostdin", "-v", "error", "-threads", "1"] + (["-ss", f"{seek:.6f}"] if seek is not None else []) + ["-i", path, "-map", "0:v"]
    cmd += (["-frames:v", str(frames)] if frames else []) + ["-f", "framemd5", "-"]
    return [line.split(",")[-1].strip() for line in sh(cmd, check=True).stdout.splitlines() if line and not line.startswith("#")]


# GStreamer's warnings about any MP4 ffmpeg writes, not about decoding: the source's start,
# the sample groups of AAC's pre-roll (sgpd/sbgp) and fragment defaults of an unfragmented file.
GST_NOISE = ("pad not activated yet", "unknown QuickTime node type", "failed to find fragment defaults")


def gstreamer_decodes(clip):
    """uridecodebin with GST_DEBUG=*:2: every warning and error but GST_NOISE counts."""
    env = dict(os.environ, GST_DEBUG="*:2", GST_DEBUG_NO_COLOR="1")
    r = sh(["gst-launch-1.0", "-q", "uridecodebin", f"uri=file://{os.path.abspath(clip)}", "name=d",
            "d.", "!", "queue", "!", "fakesink", "d.", "!", "queue", "!", "fakesink"], env=env, timeout=1800)
    said = [line for line in (r.stdout + r.stderr).splitlines() if " WARN " in line or " ERROR " in line]
    noise = [line for line in said if not any(n in line for n in GST_NOISE)]
    return r.returncode == 0 and not noise, (f"exit {r.returncode}, {len(said) - len(noise)} container warnings ignored (GST_NOISE)"
                                             + (": " + " / ".join(noise[:3]) if noise else ", no decoding warning"))


def check(name, src, lossless, binary, cut_from, cut_to):
    """Trims `src` and checks it; returns ([(check, ok, detail)], facts for the speed run)."""
    results = []

    def note(what, ok, detail):
        results.append((what, ok, detail))
        print(f"{name}: {'pass' if ok else 'FAIL'} {what}: {detail}", file=sys.stderr)
    out = os.path.join(WORK, f"trim-{name}-clip.mp4")
    vtb = time_base(src, "v")
    interval = f"{max(0.0, cut_from - 20):.3f}%{cut_to + 20:.3f}"
    src_v = packets(src, "v", interval)
    # With B-frames, TO moved on a frame at a time until the pictures before it are not a
    # prefix in decode order (then the end must be re-encoded: the case to check).
    for _ in range(8):
        before = [i for i, p in enumerate(src_v) if p[0] * vtb < math.ceil(cut_to * FPS) / FPS - 1e-6]
        if before and before[-1] - before[0] + 1 != len(before):
            break
        cut_to = round(cut_to + 1 / FPS, 3)
    r = sh([binary, "trim", src, "--from", f"{cut_from}", "--to", f"{cut_to}", "-o", out, "-y"])
    if r.returncode != 0:
        note("trim", False, r.stderr.strip())
        return results, None
    m = re.search(r"re-encoded (\d+) picture", r.stderr)
    reencoded = int(m.group(1)) if m else 0
    first, last = int(cut_from * FPS), math.ceil(cut_to * FPS) - 1
    count = last - first + 1
    keys = sorted(p[0] for p in src_v if p[2])
    if any(abs(k * vtb - t) < 0.5 / FPS for k in keys for t in (cut_from, cut_to)):
        note("cut times", False, "a cut time is on a key frame; choose others")
    next_key = next(k for k in keys if k * vtb > cut_from)
    head = round(next_key * vtb * FPS) - first
    tail = reencoded - head
    note("trim", True, f"exit 0; re-encoded {reencoded} pictures: {head} from {cut_from} s to the key frame at {next_key * vtb:.3f} s, "
                       f"{tail} before {cut_to} s; said: {r.stderr.strip().splitlines()[-1]}")
    out_v = packets(out, "v")
    note("picture count", len(out_v) == count, f"{len(out_v)} pictures, expected {count} (the source's {first} to {last})")
    # Every packet between the re-encoded edges is the source's, from the key frame on, in decode order.
    copied = [p[3] for p in out_v[head:len(out_v) - tail]]
    i0 = next(i for i, p in enumerate(src_v) if p[0] == next_key)
    same = copied == [p[3] for p in src_v[i0:i0 + len(copied)]]
    note("copied pictures byte-identical", same and len(copied) > 0, f"{len(copied)} video packets compared (MD5 of each)")
    src_a, out_a = packets(src, "a", interval), packets(out, "a")
    hashes = [p[3] for p in src_a]
    a0 = hashes.index(out_a[0][3]) if out_a and out_a[0][3] in hashes else None
    same_a = a0 is not None and [p[3] for p in out_a] == hashes[a0:a0 + len(out_a)]
    note("sound packets byte-identical", same_a, f"{len(out_a)} sound packets compared")
    v0, v1 = stream_span(out, "v")
    a0s, a1s = stream_span(out, "a")
    length = cut_to - cut_from
    # Whole source frames: the first from its own start (< a frame before FROM), the last to
    # its end (< a frame after TO).
    note("duration exact to a frame", abs((v1 - v0) - count / FPS) <= 0.001 and abs((v1 - v0) - length) < 2 / FPS,
         f"pictures {v0:.4f}–{v1:.4f} s = {count} frames of the source's; asked {length:.4f} s (the first picture from "
         f"{first / FPS:.4f} s, {cut_from - first / FPS:.4f} s before FROM; the last to {(last + 1) / FPS:.4f} s, {(last + 1) / FPS - cut_to:.4f} s after TO)")
    note("sound within one AAC frame of the cut", abs(a0s - v0) <= AAC_FRAME and abs(a1s - v1) <= AAC_FRAME,
         f"sound {a0s:.4f}–{a1s:.4f} s, pictures {v0:.4f}–{v1:.4f} s (one AAC frame: {AAC_FRAME * 1000:.1f} ms)")
    if lossless:
        ours, theirs = framemd5(out), framemd5(src, seek=first / FPS - 0.005, frames=count)
        note("every picture framemd5-equal (lossless)", ours == theirs,
             f"{sum(a == b for a, b in zip(ours, theirs))} of {count} equal; first {ours[:1] == theirs[:1]}, last {ours[-1:] == theirs[-1:]}")
    else:
        # The clip's picture k shows at (k - first) / FPS: the first from its own start.
        start = psnr(out, 0, src, first / FPS - 0.005, head + 1)[:head + 1]
        end = psnr(out, (last - 7 - first) / FPS - 0.005, src, (last - 7) / FPS - 0.005, 8)[:8]
        neighbour = psnr(out, (last - first) / FPS - 0.005, src, (last + 1) / FPS - 0.005, 1)[:1]
        note("first pictures >= 45 dB", len(start) == head + 1 and min(start) >= 45,
             f"{len(start)} pictures (the re-encoded head and the key frame), min {min(start):.2f} dB, first {start[0]:.2f} dB")
        note("last pictures >= 45 dB", len(end) == 8 and min(end) >= 45 and neighbour[0] < 35,
             f"last 8 pictures min {min(end):.2f} dB, last {end[-1]:.2f} dB; against the source's next picture {neighbour[0]:.2f} dB")
    ff = sh(["ffmpeg", "-nostdin", "-v", "warning", "-i", out, "-map", "0", "-f", "null", "-"])
    note("ffmpeg -v warning silent", ff.returncode == 0 and not ff.stderr.strip(), ff.stderr.strip()[:300] or "nothing said")
    note("GStreamer decodes silently", *gstreamer_decodes(out))
    note("headless Chromium plays start and end", *chromium_plays(out))
    results.insert(0, ("cut", True, f"{cut_from}–{cut_to} s"))
    return results, {"cut_to": cut_to, "next_key": next_key * vtb, "tail_start": (last - tail + 1) / FPS if tail > 0 else None}


def speed(args, src, facts, cut_from, cut_to):
    out = lambda n: os.path.join(WORK, n)  # noqa: E731
    ours = [args.binary, "trim", src, "--from", f"{cut_from}", "--to", f"{cut_to}", "-o", out("speed-ours.mp4"), "-y", "-q"]
    enc = ["-an", "-c:v", "libx264", "-crf", "12", "-bf", "0", "-f", "null", "-"]
    parts = [["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", f"{cut_from}", "-to", f"{cut_to}", "-i", src, "-c", "copy", out("speed-ff.mp4")],
             ["ffmpeg", "-nostdin", "-v", "error", "-ss", f"{cut_from}", "-to", f"{facts['next_key']}", "-i", src] + enc]
    if facts["tail_start"] is not None:
        parts.append(["ffmpeg", "-nostdin", "-v", "error", "-ss", f"{facts['tail_start']}", "-to", f"{cut_to}", "-i", src] + enc)
    full_len = min(args.full_seconds, cut_to - cut_from)
    full = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", f"{cut_from}", "-t", f"{full_len}", "-i", src,
            "-c:v", "libx264", "-crf", "12", "-c:a", "aac", out("speed-full.mp4")]
    times = R.alternate(args.rounds, {"ours": [ours], "parts": parts}, "trim")
    full_time = R.run(full)
    scale = (cut_to - cut_from) / full_len
    ok, row = R.ratio_row("exact trim vs copy + encoder alone", times["ours"], times["parts"], 1.1)
    walls = [t[0] for t in times["ours"]]
    cpus = [t[2] for t in times["ours"]]
    full_wall, full_cpu = full_time[0] * scale, full_time[2] * scale
    vs_full = (min(walls) / full_wall, max(walls) / full_wall, statistics.median(cpus) / full_cpu)
    lines = [*R.TABLE_HEAD, row, "",
             f"Against re-encoding the range ({cut_to - cut_from:.1f} s, libx264 crf 12 + AAC): timed on its first {full_len:.0f} s "
             f"({full_time[0]:.1f} s wall, {full_time[2]:.1f} s CPU) and scaled ×{scale:.2f} to {full_wall:.0f} s wall, {full_cpu:.0f} s CPU: "
             f"ours / full = **{vs_full[0]:.3f}–{vs_full[1]:.3f}** wall, **{vs_full[2]:.3f}** CPU (target ≤ 0.10): "
             f"{'pass' if max(vs_full[0], vs_full[2]) <= 0.1 else 'FAIL'}."]
    return ok and max(vs_full[0], vs_full[2]) <= 0.1, lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=R.BINARY)
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--lossless-seconds", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--full-seconds", type=float, default=60)
    parser.add_argument("--sources", default="ffmpeg,swift-record,lossless")
    parser.add_argument("--no-speed", action="store_true")
    args = parser.parse_args()
    args.sources = args.sources.split(",")
    os.makedirs(WORK, exist_ok=True)
    load_before = os.getloadavg()
    made = sources(args)
    sections, passed = [], True
    speed_lines = []
    for name, (src, lossless) in made.items():
        seconds = args.lossless_seconds if lossless else args.seconds
        cut_from, cut_to = round(seconds / 6 + 0.35, 2), round(seconds * 2 / 3 + 0.45, 2)
        results, facts = check(name, src, lossless, args.binary, cut_from, cut_to)
        cut_to = facts["cut_to"] if facts else cut_to
        passed &= all(ok for _, ok, _ in results)
        sections += [f"### {name}: {os.path.basename(src)}, cut {cut_from}–{cut_to} s", "", "| check | result | detail |", "|---|---|---|"]
        sections += [f"| {what} | {'pass' if ok else '**FAIL**'} | {detail.replace('|', '/')} |" for what, ok, detail in results]
        sections.append("")
        if name == "ffmpeg" and facts and not args.no_speed:
            ok, speed_lines = speed(args, src, facts, cut_from, cut_to)
            speed_lines = [f"### Speed (ffmpeg source, cut {cut_from}–{cut_to} s, {args.rounds} rounds)", ""] + speed_lines + [""]
            passed &= ok
    load_after = os.getloadavg()
    lines = [f"# swift-record trim: acceptance (issue 41) ({R.stamp()})", "",
             f"Made by bench/trim-acceptance.py; binary {os.path.relpath(args.binary, R.ROOT)}. The cuts are at times that are "
             "not key frames; the checks and how they are made are in the script's docstring.", "",
             f"Sources: {args.seconds} s of 1920x1080 at {FPS} fps ({args.lossless_seconds} s for the lossless one)"
             + (": shorter than the issue's 10 minutes." if args.seconds < 600 else "."), "", *sections, *speed_lines,
             R.machine(load_before, load_after), ""]
    with open(os.path.join(R.ROOT, "bench", "results", "trim.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())

"""Shared pieces of the real-time X11 benches (bench/x11, bench/x11-damage, bench/scale):
the three recorders' command lines at the same settings, the GStreamer peer's
start-then-SIGINT measurement, frame and drop counts from the files, the encoder-alone
limit (the same workload's frames dumped once, then encoded by the x264 CLI) and a
`perf` profile of swift-record summarised by stage.

Every child is started with private_pulse.spawn (a session of its own, a parent-death
signal) and stopped by PID; every child gets PULSE_SERVER pointing at a socket that does
not exist, so nothing here talks to a user's sound server.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from private_pulse import spawn, stop  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWIFT_RECORD = os.path.join(ROOT, ".build", "release", "swift-record")
NO_PULSE = "unix:/nonexistent/swift-record-bench/no-pulse-here"
# How long gst-launch may take to reach PLAYING, and to finalize the MP4 after SIGINT.
GST_START_TIMEOUT, GST_STOP_TIMEOUT = 30.0, 30.0


def child_env(display):
    return dict(os.environ, DISPLAY=display, PULSE_SERVER=NO_PULSE)


def have_gstreamer():
    """gst-launch-1.0 and the four elements the peer uses."""
    if not shutil.which("gst-launch-1.0") or not shutil.which("gst-inspect-1.0"):
        return False
    for element in ("ximagesrc", "videoconvert", "x264enc", "mp4mux"):
        r = subprocess.run(["gst-inspect-1.0", "--exists", element], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            return False
    return True


def swift_record_cmd(out, stats, fps, preset, bitrate_kbit, secs, capture=None):
    cmd = [SWIFT_RECORD]
    if capture:
        cmd += ["--capture", capture]
    return cmd + ["--fps", str(fps), "--bitrate", f"{bitrate_kbit}k", "--preset", preset, "--duration", str(secs),
                  "--audio", "none", "-q", "--stats-json", stats, "-o", out]


def ffmpeg_cmd(display, size, out, fps, preset, bitrate_kbit, secs):
    # -stats: the last progress line (dup=/drop=) reaches stderr even at -loglevel error.
    return ["ffmpeg", "-nostdin", "-loglevel", "error", "-stats", "-y", "-f", "x11grab", "-framerate", str(fps),
            "-video_size", f"{size[0]}x{size[1]}", "-draw_mouse", "1", "-i", display, "-t", str(secs),
            "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", preset, "-b:v", f"{bitrate_kbit}k", out]


def gst_cmd(display, out, fps, preset, bitrate_kbit):
    """The same work as ffmpeg's: whole screen with the pointer at `fps` (ximagesrc paces
    itself on the pipeline clock), converted to I420 (4:2:0, as -pix_fmt yuv420p; without
    the caps videoconvert would hand x264enc 4:4:4), x264 at the preset and bitrate with its
    automatic thread count and ffmpeg's key-frame interval (250; x264enc's own default is
    10 s), MP4. One streaming thread from grab to encoder, as in ffmpeg. x264 writes the same
    options into both streams (see x264_info) except rate control: x264enc's bitrate is
    x264's ABR with a VBV of the same rate (600 ms buffer), ffmpeg's -b:v ABR without one."""
    return ["gst-launch-1.0", "-e", "ximagesrc", f"display-name={display}", "use-damage=false", "show-pointer=true",
            "!", f"video/x-raw,framerate={fps}/1", "!", "videoconvert", "!", "video/x-raw,format=I420",
            "!", "x264enc", f"speed-preset={preset}", f"bitrate={bitrate_kbit}", "threads=0", "key-int-max=250",
            "!", "mp4mux", "!", "filesink", f"location={out}"]


def _reap(proc, deadline):
    """wait4 on one child until `deadline`; SIGKILL after it. Returns (status, rusage, killed)."""
    killed = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return status, usage, killed
        if time.monotonic() > deadline and not killed:
            proc.kill()
            killed = True
            deadline = time.monotonic() + 10
        time.sleep(0.02)


def measured(cmd, work, env, name="run", stop_after=None, ready=None):
    """Runs cmd; returns dict(wall, cpu (user+sys s), rss (MB), stdout, stderr, code).
    With stop_after: SIGINT `stop_after` seconds after the line matching `ready` appears
    on its stdout (gst-launch -e turns SIGINT into EOS, so the MP4 is finalized), then
    waits up to GST_STOP_TIMEOUT for it to exit (SIGKILL after that, reported)."""
    out_path, err_path = (os.path.join(work, f"{name}.{e}.txt") for e in ("stdout", "stderr"))
    with open(out_path, "w") as out, open(err_path, "w") as err:
        t0 = time.monotonic()
        p = spawn(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        try:
            if stop_after is not None:
                deadline = t0 + GST_START_TIMEOUT
                while ready and not re.search(ready, open(out_path, errors="replace").read()):
                    if p.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"{cmd[0]} did not start: {open(err_path).read()[-2000:]}")
                    time.sleep(0.01)
                t_ready = time.monotonic()
                while time.monotonic() < t_ready + stop_after and p.poll() is None:
                    time.sleep(0.02)
                if p.returncode is None:
                    p.send_signal(signal.SIGINT)
                status, usage, killed = _reap(p, time.monotonic() + GST_STOP_TIMEOUT)
            else:
                status, usage, killed = _reap(p, float("inf"))
        except BaseException:
            stop(p)  # interrupted or failed: the child is not left running
            raise
        wall = time.monotonic() - t0
    stdout, stderr = open(out_path, errors="replace").read(), open(err_path, errors="replace").read()
    if p.returncode != 0 or killed:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}{', killed' if killed else ''}): {stderr[-2000:]}")
    return dict(wall=wall, cpu=usage.ru_utime + usage.ru_stime, rss=usage.ru_maxrss / 1024, stdout=stdout, stderr=stderr)


def video_in(path, fps):
    """Frames in the file and the frames missing from its timeline: the packets' time
    stamps span (last - first) * fps + 1 frame slots; slots without a frame are drops
    (GStreamer's ximagesrc skips a tick it is late for; ffmpeg's CFR output fills such a
    gap with a duplicate instead, counted from its dup= figure)."""
    r = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                        "packet=pts_time:stream=width,height,pix_fmt,r_frame_rate", "-of", "json", path],
                       check=True, capture_output=True, text=True)
    j = json.loads(r.stdout)
    pts = sorted(float(p["pts_time"]) for p in j.get("packets", []) if p.get("pts_time") not in (None, "N/A"))
    frames = len(j.get("packets", []))
    slots = round((pts[-1] - pts[0]) * fps) + 1 if pts else 0
    s = j["streams"][0] if j.get("streams") else {}
    return dict(frames=frames, gaps=max(0, slots - len(pts)), width=s.get("width"), height=s.get("height"),
                pix_fmt=s.get("pix_fmt"), rate=s.get("r_frame_rate"))


def ffmpeg_dups(stderr):
    """dup= and drop= of ffmpeg's last progress line (absent when both are 0). A dup is a
    tick of the constant-rate output without a fresh grab (a repeat fills it): what the
    benches count as ffmpeg's dropped frames. drop= (two grabs for one tick) is reported apart."""
    dup = drop = 0
    for m in re.finditer(r"dup=\s*(\d+)\s+drop=\s*(\d+)", stderr):
        dup, drop = int(m.group(1)), int(m.group(2))
    return dup, drop


def x264_info(path):
    """The options x264 wrote into the stream (its SEI), to check that peers did the same work."""
    with open(path, "rb") as f:
        data = f.read(4 << 20)
    m = re.search(rb"x264 - core (\d+)[^\x00]*? - H\.264/MPEG-4 AVC codec[^\x00]*?options: ([^\x00]+)", data)
    if not m:
        return None
    return "core " + m.group(1).decode() + ": " + m.group(2).decode(errors="replace")


def x264_options_diff(a_path, b_path):
    """The x264 options that differ between two files' streams: [(option, a's, b's)], or
    None when either file has no x264 SEI."""
    a, b = x264_info(a_path), x264_info(b_path)
    if not a or not b:
        return None
    parse = lambda info: dict(kv.split("=", 1) for kv in info.split(": ", 1)[1].split() if "=" in kv)  # noqa: E731
    pa, pb = parse(a), parse(b)
    return [(k, pa.get(k, "–"), pb.get(k, "–")) for k in sorted(set(pa) | set(pb)) if pa.get(k) != pb.get(k)]


def record(program, display, size, fps, preset, bitrate_kbit, secs, work, tag, capture=None):
    """One real-time recording by `program` (swift-record, ffmpeg or gstreamer), measured.
    Returns dict(cpu, rss, wall, frames, dropped, cpu_per_frame, file)."""
    env = child_env(display)
    out = os.path.join(work, f"{tag}.mp4")
    if os.path.exists(out):
        os.unlink(out)
    if program == "swift-record":
        stats = os.path.join(work, f"{tag}.json")
        if os.path.exists(stats):
            os.unlink(stats)
        m = measured(swift_record_cmd(out, stats, fps, preset, bitrate_kbit, secs, capture), work, env, tag)
        s = json.load(open(stats))
        v = video_in(out, fps)
        m.update(dropped=s["framesDropped"], repeated=s.get("framesRepeated"), grabs=s.get("grabs"))
    elif program == "ffmpeg":
        m = measured(ffmpeg_cmd(display, size, out, fps, preset, bitrate_kbit, secs), work, env, tag)
        v = video_in(out, fps)
        dup, drop = ffmpeg_dups(m["stderr"])
        m.update(dropped=dup + v["gaps"], repeated=dup, discarded=drop, grabs=None)
    elif program == "gstreamer":
        m = measured(gst_cmd(display, out, fps, preset, bitrate_kbit), work, env, tag,
                     stop_after=secs, ready=r"Setting pipeline to PLAYING")
        v = video_in(out, fps)
        m.update(dropped=v["gaps"], repeated=None, grabs=None)
    else:
        raise ValueError(program)
    m.update(frames=v["frames"], fmt=v, file=out, cpu_per_frame=m["cpu"] / max(1, v["frames"]))
    m.pop("stdout", None)
    m.pop("stderr", None)
    return m


def encoder_limit(display, size, fps, preset, bitrate_kbit, frames, work, tag, paced=False):
    """The encoder's own limit: `frames` frames of the screen (the workload running) dumped
    once as raw yuv420p by ffmpeg x11grab (not measured), then encoded by the x264 CLI with
    the same settings (its automatic thread count), output discarded. Returns
    dict(cpu, wall, frames, cpu_per_frame); the dump is deleted afterwards.

    With `paced`, the same frames are also encoded at the frame rate, as a real-time
    recorder receives them: `ffmpeg -re` reading the raw dump (no grab, no conversion: the
    dump is already yuv420p) into libx264 with the same settings, output discarded; its CPU
    per frame is `paced_cpu_per_frame`. x264 fed at 30 fps costs more CPU than x264 fed as
    fast as it can go, for byte-identical output (its threads sleep and wake every frame),
    so this is the limit a real-time recorder can reach; the batch figure is the lower bound."""
    raw = os.path.join(work, f"{tag}.yuv")
    env = child_env(display)
    try:
        measured(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "x11grab", "-framerate", str(fps),
                  "-video_size", f"{size[0]}x{size[1]}", "-draw_mouse", "1", "-i", display, "-frames:v", str(frames),
                  "-pix_fmt", "yuv420p", "-f", "rawvideo", raw], work, env, tag + "-dump")
        got = os.path.getsize(raw) // (size[0] * size[1] * 3 // 2)
        m = measured(["x264", "--quiet", "--preset", preset, "--bitrate", str(bitrate_kbit), "--demuxer", "raw",
                      "--input-csp", "i420", "--input-res", f"{size[0]}x{size[1]}", "--fps", str(fps),
                      "-o", os.path.join(work, f"{tag}.264"), raw], work, env, tag + "-x264")
        at_rate = None
        if paced:
            at_rate = measured(["ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-f", "rawvideo", "-pix_fmt", "yuv420p",
                          "-video_size", f"{size[0]}x{size[1]}", "-framerate", str(fps), "-i", raw,
                          "-c:v", "libx264", "-preset", preset, "-b:v", f"{bitrate_kbit}k", "-f", "null", "-"],
                         work, env, tag + "-paced")
    finally:
        for p in (raw, os.path.join(work, f"{tag}.264")):
            if os.path.exists(p):
                os.unlink(p)
    result = dict(cpu=m["cpu"], wall=m["wall"], frames=got, cpu_per_frame=m["cpu"] / max(1, got))
    if at_rate is not None:
        result.update(paced_cpu=at_rate["cpu"], paced_wall=at_rate["wall"],
                      paced_cpu_per_frame=at_rate["cpu"] / max(1, got))
    return result


# perf profile of swift-record, attributed to stages by library and symbol. Heuristic: the
# first rule that matches a (dso, symbol) pair wins; the X server's own copy into shared
# memory is in Xvfb, not in swift-record, and so not in the profile.
STAGES = [
    ("encode (x264)", lambda dso, sym: "libx264" in dso),
    ("mux (libavformat)", lambda dso, sym: "libavformat" in dso or re.search(r"Mux|Writer", sym)),
    ("encode (libavcodec glue)", lambda dso, sym: "libavcodec" in dso or "Encoder" in sym),
    ("cursor", lambda dso, sym: re.search(r"Cursor|XFixes", sym) or "libXfixes" in dso),
    ("colour conversion", lambda dso, sym: re.search(r"Conver|BGRA|YUV|I420|NV12|Chroma|Luma", sym) or "libswscale" in dso),
    ("grab (X11, shared memory)", lambda dso, sym: re.search(r"X11|Grab|Shm|Damage|xcb", sym)
        or any(k in dso for k in ("libX11", "libxcb", "libXext", "libXdamage"))),
    ("picture copies (PixelBuffer.copyContents)", lambda dso, sym: "copyContents" in sym),
    ("kernel: page faults, zeroing pages", lambda dso, sym: "kernel" in dso and re.search(r"page|fault|mm_|pte|folio|lru", sym)),
    ("kernel: scheduling, futexes, wake-ups", lambda dso, sym: "kernel" in dso
        and re.search(r"sched|switch|futex|wake|spin|irq|softirq|idle|timer|hrtimer", sym)),
    ("kernel: other", lambda dso, sym: "kernel" in dso),
    ("memory copy/set (libc)", lambda dso, sym: "libc" in dso and re.search(r"mem(cpy|move|set)", sym)),
    ("locks, waits (libc)", lambda dso, sym: "libc" in dso and re.search(r"pthread|futex|poll|epoll|sem_|cond", sym)),
    ("Swift runtime", lambda dso, sym: "libswift" in dso or "Foundation" in dso or "dispatch" in dso),
    ("dynamic loading (ld.so, start-up)", lambda dso, sym: dso.startswith("ld-linux")),
]


def perf_available():
    if not shutil.which("perf"):
        return False
    r = subprocess.run(["perf", "stat", "-e", "task-clock", "true"], capture_output=True, text=True)
    return r.returncode == 0


def profile_swift_record(display, fps, preset, bitrate_kbit, secs, work, tag, capture=None, top=15):
    """`perf record -g` of one swift-record recording; returns (top entries, stage sums)
    from `perf report --no-children --sort dso,sym` (self time, percent of samples)."""
    data = os.path.join(work, f"{tag}.perf.data")
    out, stats = os.path.join(work, f"{tag}.mp4"), os.path.join(work, f"{tag}.json")
    for p in (data, out, stats):
        if os.path.exists(p):
            os.unlink(p)
    env = child_env(display)
    measured(["perf", "record", "-q", "-g", "-F", "499", "-o", data, "--"]
             + swift_record_cmd(out, stats, fps, preset, bitrate_kbit, secs, capture), work, env, tag + "-perf")
    r = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "dso,sym", "-g", "none",
                        "--percent-limit", "0.01"], capture_output=True, text=True, env=env)
    entries = []
    for line in r.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[[.k]\]\s+(.*)$", line)
        if m:
            entries.append((float(m.group(1)), m.group(2), m.group(3).strip()))
    stages = {}
    for pct, dso, sym in entries:
        stage = next((name for name, rule in STAGES if rule(dso, sym)), "other")
        stages[stage] = stages.get(stage, 0.0) + pct
    os.unlink(data)
    return entries[:top], sorted(stages.items(), key=lambda kv: -kv[1])


def profile_markdown(entries, stages, title):
    lines = ["", f"### {title}", "", "| stage (heuristic, by library and symbol) | % of swift-record's samples |", "|---|---|"]
    lines += [f"| {name} | {pct:.1f} |" for name, pct in stages]
    lines += ["", "| % self | library | symbol |", "|---|---|---|"]
    lines += [f"| {pct:.1f} | {dso} | `{sym[:90]}` |" for pct, dso, sym in entries]
    return lines

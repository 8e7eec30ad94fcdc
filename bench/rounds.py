"""Shared by bench/thumbnail.py and bench/copy.py: timing a command (wall, CPU, peak RSS),
the generated 10-minute recording, the machine line and the ratio table."""
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, ".build", "release", "swift-record")
# The recording both benches read: 10 minutes of testsrc2 at 1280x720, 30 fps, H.264
# (libx264 ultrafast, crf 23, 2 B-frames, a key frame every 250 frames, 8.3 s) and AAC
# stereo 48 kHz in MKV; about 520 MB.
RECORDING_SECONDS = 600
KEYINT = 250
RECORDING_COMMAND = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30",
                     "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", str(RECORDING_SECONDS),
                     "-c:v", "libx264", "-preset", "ultrafast", "-bf", "2", "-g", str(KEYINT), "-crf", "23",
                     "-pix_fmt", "yuv420p", "-threads", "1", "-c:a", "aac", "-ac", "2", "-shortest"]


def recording(work):
    """The 10-minute MKV in `work`, made once (kept for the next run)."""
    path = os.path.join(work, f"recording-{RECORDING_SECONDS}s.mkv")
    if not os.path.exists(path):
        print(f"making {path} (once) ...", file=sys.stderr)
        subprocess.run(RECORDING_COMMAND + [path + ".part.mkv"], check=True)
        os.rename(path + ".part.mkv", path)
    return path


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


def run_all(cmds, settle=False):
    """Runs each of cmds in turn; the sums of wall and CPU time, the largest peak RSS. With
    settle, `sync` first (not timed): the dirty pages a previous run left are written back
    before the clock starts, so one command's writeback does not land in the next one's time."""
    results = []
    for c in cmds:
        if settle:
            subprocess.run(["sync"], check=True)
        results.append(run(c))
    return sum(r[0] for r in results), max(r[1] for r in results), sum(r[2] for r in results)


def first_line(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0]
    except Exception:
        return "?"


def machine(load_before, load_after):
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        model = platform.processor() or "?"
    return (f"Machine: {model}, {os.cpu_count()} CPUs, load average {load_before[0]:.2f} before / {load_after[0]:.2f} after "
            f"(shared machine). {' '.join(first_line(['ffmpeg', '-version']).split()[:3])}; {first_line(['swift', '--version'])}.")


def alternate(rounds, commands, label, settle=False):
    """One warm-up run of each command group, then `rounds` rounds running them in turn.
    commands: {name: [cmd, ...]} (a group's time is the sum of its commands'). Returns
    {name: [(wall, rss, cpu), ...]}."""
    for cmds in commands.values():
        run_all(cmds, settle)
    times = {name: [] for name in commands}
    for i in range(rounds):
        for name, cmds in commands.items():
            times[name].append(run_all(cmds, settle))
        line = ", ".join(f"{n} {t[-1][0]:.3f} s (CPU {t[-1][2]:.3f})" for n, t in times.items())
        print(f"{label} round {i + 1}: {line}", file=sys.stderr)
    return times


def ratio_row(name, ours, theirs, target):
    ratios = [a[0] / b[0] for a, b in zip(ours, theirs)]
    cpu = [a[2] / b[2] for a, b in zip(ours, theirs)]
    ok = max(ratios) <= target
    return ok, (f"| {name} | {statistics.median(a[0] for a in ours):.3f} | {statistics.median(b[0] for b in theirs):.3f} "
                f"| **{statistics.median(ratios):.3f}** | {min(ratios):.3f}–{max(ratios):.3f} | ≤ {target:.2f} "
                f"| {statistics.median(a[2] for a in ours):.3f} / {statistics.median(b[2] for b in theirs):.3f} "
                f"| {statistics.median(cpu):.3f} | {max(a[1] for a in ours) / 1024:.1f} / {max(b[1] for b in theirs) / 1024:.1f} "
                f"| {'pass' if ok else 'FAIL'} |")


TABLE_HEAD = ["| run | ours median (s) | other median (s) | median ratio | ratio range | target | CPU ours / other (s) | CPU ratio | peak RSS ours / other (MiB) | verdict |",
              "|---|---|---|---|---|---|---|---|---|---|"]


def stamp():
    return datetime.datetime.now().strftime('%Y-%m-%d %H:%M')


def recording_command():
    """The command that makes the recording, as text (its output name left out)."""
    return " ".join(RECORDING_COMMAND[:1] + RECORDING_COMMAND[5:])

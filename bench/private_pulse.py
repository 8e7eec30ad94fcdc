"""A private PulseAudio server and child-process hygiene for the benchmarks
(bench/av-sync, bench/x11), the way Tests/PulseTests/PrivatePulseServer.swift does it.

The server runs on a runtime directory of its own (XDG_RUNTIME_DIR, HOME,
XDG_CONFIG_HOME and XDG_STATE_HOME all point into it), listens on DIR/native with
anonymous access and has a null sink `test` (monitor: `test.monitor`). It is ready once
`pactl info` answers on that socket, and it is stopped by its PID (SIGTERM, then SIGKILL),
always waited for. Every child gets PULSE_SERVER=unix:DIR/native explicitly, so nothing
here ever talks to a user's session server.

Children are started in sessions of their own (a Ctrl-C in the terminal reaches only the
script, whose `finally` blocks stop them by PID) and with a parent-death signal, so even a
script killed with SIGKILL leaves no pulseaudio, Xvfb or pacat behind.
"""
import ctypes
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from array import array

_PR_SET_PDEATHSIG = 1


def _child_setup():
    """In the child, before exec: SIGTERM when the script dies (any way), default signal
    dispositions and mask (Python ignores SIGPIPE; children should not inherit that)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    for s in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def spawn(cmd, **kw):
    """subprocess.Popen in a session of its own, with a parent-death signal."""
    return subprocess.Popen(cmd, start_new_session=True, preexec_fn=_child_setup, **kw)


def stop(proc, grace=5.0, sig=signal.SIGTERM):
    """Signals one child we started, by PID (SIGTERM by default), SIGKILL after `grace`
    seconds; always waits for it. Safe on a child that has already exited."""
    if proc is None or proc.poll() is not None:
        return
    try:
        proc.send_signal(sig)
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    except ProcessLookupError:
        proc.wait()


class Interrupted(Exception):
    """SIGTERM or SIGHUP to the script: raised so that `finally` blocks clean up."""


def raise_on_termination():
    """Turns SIGTERM and SIGHUP into an exception (Ctrl-C already is KeyboardInterrupt)."""
    def handler(signum, _frame):
        # Once: a second signal must not interrupt the cleanup the first one started.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        raise Interrupted(signal.Signals(signum).name)
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)


class PrivatePulseServer:
    """Use as a context manager; `env` is the environment for children (pactl, pacat,
    swift-record, ffmpeg): this server and nothing else."""

    TOOLS = ("pulseaudio", "pactl", "pacat")

    def __init__(self, log_path=None, timeout=30.0):
        self.directory = tempfile.mkdtemp(prefix="swift-record-pulse-")
        os.chmod(self.directory, 0o700)
        self.socket = os.path.join(self.directory, "native")
        self.address = "unix:" + self.socket
        env = dict(os.environ)
        env["XDG_RUNTIME_DIR"] = self.directory
        # Its cookie and state go to our directory, not the user's home.
        env["HOME"] = self.directory
        env["XDG_CONFIG_HOME"] = os.path.join(self.directory, "config")
        env["XDG_STATE_HOME"] = os.path.join(self.directory, "state")
        env["PULSE_SERVER"] = self.address
        env.pop("DISPLAY", None)
        self.env = env
        self.log_path = log_path or os.path.join(self.directory, "pulseaudio.log")
        self._log = open(self.log_path, "w")
        self.process = None
        try:
            self.process = spawn([
                "pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "-n", "--use-pid-file=no", "--system=no",
                "--realtime=no", "--high-priority=no", "--log-target=stderr",
                "--load=module-native-protocol-unix auth-anonymous=1 socket=%s" % self.socket,
                "--load=module-null-sink sink_name=test rate=48000 channels=2 sink_properties=device.description=TestSink",
            ], env=env, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)
            deadline = time.monotonic() + timeout
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError("pulseaudio exited (%d) before it was ready: %s" % (self.process.returncode, self.log_tail()))
                try:
                    if subprocess.run(["pactl", "info"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      stdin=subprocess.DEVNULL, timeout=10).returncode == 0:
                        break
                except subprocess.TimeoutExpired:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("pulseaudio did not answer `pactl info` within %.0f s: %s" % (timeout, self.log_tail()))
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise

    @staticmethod
    def installed():
        return all(shutil.which(t) for t in PrivatePulseServer.TOOLS)

    @property
    def pid(self):
        return self.process.pid if self.process else None

    def log_tail(self, n=2000):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def pactl(self, *args):
        r = subprocess.run(["pactl"] + list(args), env=self.env, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=30)
        if r.returncode != 0:
            raise RuntimeError("pactl %s failed: %s" % (" ".join(args), r.stderr.strip()))
        return r.stdout

    def play(self, path, sink="test", log=None):
        """Plays raw s16le 48 kHz stereo from `path` into `sink`, asking for 20 ms of latency
        (pacat's default, 2 s, lets a null sink render in blocks that long). With `log`,
        pacat runs verbose into that file, which then says when it underran
        (`underruns(log)`)."""
        verbose = ["-v"] if log else []
        err = open(log, "w") if log else subprocess.DEVNULL
        try:
            with open(path, "rb") as f:
                return spawn(["pacat", "--playback"] + verbose + ["--device=%s" % sink, "--format=s16le", "--rate=48000",
                              "--channels=2", "--latency-msec=20"], env=self.env, stdin=f, stdout=subprocess.DEVNULL, stderr=err)
        finally:
            if log:
                err.close()

    def cpu_seconds(self):
        """The server's CPU time so far (user + system), from /proc."""
        return proc_cpu_seconds(self.pid)

    def stop(self, grace=5.0):
        """SIGTERM, then SIGKILL after `grace` seconds; waits; removes the directory. Safe to call twice."""
        stop(self.process, grace)
        if not self._log.closed:
            self._log.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


def underruns(pacat_log):
    """How often a verbose pacat said its stream underran (the sink played silence)."""
    try:
        with open(pacat_log, errors="replace") as f:
            return f.read().lower().count("underrun")
    except OSError:
        return 0


def proc_cpu_seconds(pid):
    if not pid:
        return 0.0
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def write_tone(path, seconds, frequency=1000.0, rate=48000):
    """A tone, s16le stereo, amplitude one half (as writeTone in the tests)."""
    period = rate / math.gcd(int(frequency), rate)  # samples in one whole number of cycles
    one = array("h")
    for i in range(int(period)):
        v = int(16384 * math.sin(2 * math.pi * frequency * i / rate))
        one.extend((v, v))
    frames = int(seconds * rate)
    whole, rest = divmod(frames, int(period))
    data = one * whole + one[: 2 * rest]
    if sys.byteorder != "little":
        data.byteswap()
    with open(path, "wb") as f:
        data.tofile(f)

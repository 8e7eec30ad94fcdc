"""Headless Chromium plays a video file in a <video> element: its start, then its last
1.5 s to the end (a seek), served on loopback with byte ranges; the page posts its result
(ok with the duration, size and frames decoded, or the media error) back to the server.
Used by bench/trim-acceptance.py."""
import http.server
import os
import shutil
import subprocess
import tempfile
import threading


PAGE = """<html><body><video id=v muted preload=auto src="clip.mp4"></video><script>
const v = document.getElementById('v'); let stage = 'start';
const say = t => fetch('/result', { method: 'POST', body: t });
v.addEventListener('error', () => say('error ' + (v.error ? v.error.code + ' ' + v.error.message : '?')));
v.addEventListener('loadedmetadata', () => v.play().catch(e => say('error play ' + e)));
v.addEventListener('timeupdate', () => {
  if (stage === 'start' && v.currentTime > 0.5) { stage = 'end'; v.currentTime = v.duration - 1.5; v.play(); }
});
v.addEventListener('ended', () => { const q = v.getVideoPlaybackQuality();
  say('ok duration=' + v.duration.toFixed(3) + ' size=' + v.videoWidth + 'x' + v.videoHeight + ' frames=' + q.totalVideoFrames
      + ' dropped=' + q.droppedVideoFrames + ' at=' + v.currentTime.toFixed(3)); });
</script></body></html>"""


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the folder with byte ranges (a <video> seeks with them); a POST to /result is kept."""
    result = None
    done = threading.Event()

    def do_GET(self):
        path = self.translate_path(self.path)
        rng = self.headers.get("Range")
        if not rng or not os.path.isfile(path):
            return super().do_GET()
        size = os.path.getsize(path)
        start, _, end = rng.replace("bytes=", "").partition("-")
        start, end = int(start or 0), min(int(end) if end else size - 1, size - 1)
        self.send_response(206)
        self.send_header("Content-Type", "video/mp4")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        with open(path, "rb") as f:
            f.seek(start)
            left = end - start + 1
            try:
                while left > 0:
                    chunk = f.read(min(left, 1 << 20))
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    left -= len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass

    def do_POST(self):
        RangeHandler.result = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        RangeHandler.done.set()
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def chromium_plays(clip):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        return False, "chromium not installed"
    folder = tempfile.mkdtemp(prefix="trim-chromium-")
    os.symlink(os.path.abspath(clip), os.path.join(folder, "clip.mp4"))
    with open(os.path.join(folder, "play.html"), "w") as f:
        f.write(PAGE)
    RangeHandler.result, RangeHandler.done = None, threading.Event()
    handler = lambda *a, **k: RangeHandler(*a, directory=folder, **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    browser = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={folder}/profile",
                                "--autoplay-policy=no-user-gesture-required", "--no-first-run",
                                f"http://127.0.0.1:{server.server_address[1]}/play.html"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    RangeHandler.done.wait(180)
    browser.terminate()
    try:
        browser.wait(20)
    except subprocess.TimeoutExpired:
        browser.kill()
        browser.wait()
    server.shutdown()
    shutil.rmtree(folder, ignore_errors=True)
    result = RangeHandler.result or "no result in 180 s"
    return result.startswith("ok "), result

import Foundation
import TestSupport
import XCTest

/// HLS with fMP4 segments as a browser takes it: headless Chromium reads the playlist and
/// appends the init segment and every media segment to a Media Source Extensions buffer;
/// the check is what MSE accepted: one buffered range over the whole recording, the picture
/// size from the init segment. The page is served on loopback by a small server of the
/// test's, to which it posts its result: the test waits for that result, not for
/// Chromium's virtual time (which ran out before the file reads on a busy machine and left
/// the page "pending").
final class HLSBrowserTests: CLITestCase {
    private static let page = """
    <html><body><video id=v muted></video><div id=out>pending</div><script>
    const out = document.getElementById('out'), video = document.getElementById('v');
    const say = t => { out.textContent = t; fetch('/result', { method: 'POST', body: t }); };
    const get = (url, type) => new Promise((ok, fail) => {
      const x = new XMLHttpRequest(); x.open('GET', url); x.responseType = type;
      x.onload = () => ok(x.response); x.onerror = () => fail('cannot read ' + url); x.send();
    });
    (async () => {
      const playlist = await get('live.m3u8', 'text');
      const lines = playlist.split('\\n').map(l => l.trim());
      const map = lines.find(l => l.startsWith('#EXT-X-MAP:'));
      const init = map.match(/URI="([^"]+)"/)[1];
      const segments = lines.filter(l => l && !l.startsWith('#'));
      const ms = new MediaSource();
      video.src = URL.createObjectURL(ms);
      await new Promise(ok => ms.addEventListener('sourceopen', ok, { once: true }));
      const sb = ms.addSourceBuffer('video/mp4; codecs="avc1.640028, mp4a.40.2"');
      for (const url of [init].concat(segments)) {
        const data = await get(url, 'arraybuffer');
        await new Promise((ok, fail) => {
          sb.addEventListener('updateend', ok, { once: true });
          sb.addEventListener('error', () => fail('SourceBuffer error on ' + url), { once: true });
          sb.appendBuffer(data);
        });
      }
      ms.endOfStream();
      const b = sb.buffered;
      say('ok segments=' + segments.length + ' start=' + b.start(0).toFixed(3) + ' end=' + b.end(b.length - 1).toFixed(3)
          + ' ranges=' + b.length + ' ready=' + video.readyState + ' size=' + video.videoWidth + 'x' + video.videoHeight);
    })().catch(e => say('error ' + e + (video.error ? ' media error ' + video.error.code + ' ' + video.error.message : '')));
    </script></body></html>
    """

    /// Serves argv[1] on 127.0.0.1 (a free port, written to argv[3]); a POST to /result
    /// writes its body to argv[2].
    private static let server = PackagePaths.root.appendingPathComponent("Tests/CLITests/Helpers/page-server.py").path

    /// The contents of `file` once it exists and is not empty; nil after `timeout` seconds.
    private func waitFor(file: String, timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: file, encoding: .utf8), !text.isEmpty { return text }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return nil
    }

    func testChromiumPlaysTheFMP4SegmentsThroughMediaSourceExtensions() throws {
        guard let chromium = Proc.which("chromium") ?? Proc.which("chromium-browser") else {
            throw XCTSkip("chromium not installed; run scripts/install-deps.sh")
        }
        let folder = dir.appendingPathComponent("hls")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let r = try Proc.run(binary, ["--source", "synthetic", "--size", "320x240", "--frames", "120", "--audio", "synthetic",
                                      "--quiet", "-o", dir.appendingPathComponent("rec.mp4").path,
                                      "-o", folder.appendingPathComponent("live.m3u8").path, "--hls-fmp4"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        let page = folder.appendingPathComponent("play.html")
        try Self.page.write(to: page, atomically: true, encoding: .utf8)
        // The folder served on a free loopback port; the page's result posted back to a file.
        let portFile = dir.appendingPathComponent("port").path, resultFile = dir.appendingPathComponent("result").path
        _ = try spawnTracked([Self.server, folder.path, resultFile, portFile], executable: "/usr/bin/python3")
        let port = try XCTUnwrap(waitFor(file: portFile, timeout: 30), "the page server did not start")
        // A profile of its own (never the user's).
        let profile = dir.appendingPathComponent("chromium-profile").path
        let browser = try spawnTracked(["--headless=new", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile)",
                                        "--autoplay-policy=no-user-gesture-required", "--no-first-run",
                                        "http://127.0.0.1:\(port.trimmingCharacters(in: .whitespacesAndNewlines))/play.html"],
                                       executable: chromium)
        let result = waitFor(file: resultFile, timeout: 90) ?? "no result: \(browser.currentStderr().suffix(2000))"
        browser.terminate()
        XCTAssertTrue(result.hasPrefix("ok "), result)
        let fields = Dictionary(result.split(separator: " ").dropFirst().compactMap { field -> (String, String)? in
            let kv = field.split(separator: "=", maxSplits: 1)
            return kv.count == 2 ? (String(kv[0]), String(kv[1])) : nil
        }, uniquingKeysWith: { a, _ in a })
        // 120 frames at 30 fps in 2-s segments: 4 s, one range from 0, the metadata read.
        XCTAssertEqual(fields["segments"], "2", result)
        XCTAssertEqual(Double(fields["start"] ?? "") ?? -1, 0, accuracy: 0.05, result)
        XCTAssertEqual(Double(fields["end"] ?? "") ?? -1, 4.0, accuracy: 0.1, result)
        XCTAssertEqual(fields["ranges"], "1", result)
        XCTAssertGreaterThanOrEqual(Int(fields["ready"] ?? "") ?? 0, 1, result)
        XCTAssertEqual(fields["size"], "320x240", result)
    }
}

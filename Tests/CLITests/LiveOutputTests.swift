import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Recording and streaming at once, against real servers on 127.0.0.1 started by the tests:
/// nginx-rtmp (which records what it receives), an ffmpeg SRT listener, HLS on disk.
final class LiveOutputTests: CLITestCase {
    private var nginx: NginxRTMPServer?

    override func tearDownWithError() throws {
        nginx?.stop()
        nginx = nil
        try super.tearDownWithError()
    }

    private func startNginx() throws -> NginxRTMPServer {
        try XCTSkipUnless(NginxRTMPServer.available, "nginx-light + libnginx-mod-rtmp not installed; run scripts/install-deps.sh")
        let server = try NginxRTMPServer(directory: dir)
        nginx = server
        try server.start()
        return server
    }

    private func liveStats(_ statsPath: String) throws -> [String: Any] {
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statsPath))) as? [String: Any])
        let outputs = try XCTUnwrap(json["liveOutputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.count, 1)
        return try XCTUnwrap(outputs.first)
    }

    private func codecs(_ path: String) throws -> [String] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", path])
        XCTAssertTrue(r.succeeded, r.stderr)
        // MPEG-TS lists its streams twice (in the program and on their own): each once, in order.
        var seen: [String] = []
        for name in r.stdout.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty && !seen.contains(name) {
            seen.append(name)
        }
        return seen
    }

    private func videoHashes(_ path: String) throws -> [String] {
        FF.hashes(try FF.framemd5(path, outputArgs: ["-map", "0:v"]))
    }

    /// The band's report from `swift-record verify`.
    private func verify(_ path: String) throws -> String {
        try Proc.run(binary, ["verify", path]).stdout
    }

    private static let scene = ["--source", "synthetic", "--size", "640x360", "--fps", "30", "--quiet", "-y"]

    /// A 10-s live recording to nginx-rtmp: the server got H.264 + AAC, every frame of the
    /// band in order, the very pictures of the local file recorded at the same time.
    func testStreamToNginxRTMPMatchesTheLocalFile() throws {
        let server = try startNginx()
        let local = path("local.mp4"), stats = path("stats.json")
        let r = try Proc.run(binary, Self.scene + ["--realtime", "--duration", "10", "--audio", "synthetic", "-o", local,
                                                   "-o", "rtmp://127.0.0.1:\(server.port)/live/scene", "--stats-json", stats], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        server.stop()
        let received = server.recording("scene").path
        XCTAssertEqual(try codecs(received), ["h264", "aac"])
        let report = try verify(received)
        XCTAssertTrue(report.contains("gaps: none") && report.contains("reordered: none"), report)
        let streamed = try videoHashes(received)
        XCTAssertGreaterThanOrEqual(streamed.count, 290)
        XCTAssertEqual(streamed, try videoHashes(local), "the server received other pictures than the file holds")
        let live = try liveStats(stats)
        XCTAssertEqual(live["status"] as? String, "completed")
        XCTAssertEqual(int(live["videoFramesSent"]), streamed.count)
        XCTAssertEqual(int(live["videoFramesDropped"]), 0)
        XCTAssertEqual(live["url"] as? String, "rtmp://127.0.0.1:\(server.port)/live/<key>", "the stream key must not be shown")
    }

    /// Streaming does not change the file: the same frames (and sound), decoded, as a
    /// recording made without it (offline and single-threaded, so both are deterministic).
    func testStreamingLeavesTheFileAsWithout() throws {
        let server = try startNginx()
        let args = Self.scene + ["--frames", "60", "--threads", "1", "--audio", "synthetic"]
        let alone = path("alone.mp4"), streaming = path("streaming.mp4")
        XCTAssertEqual(try Proc.run(binary, args + ["-o", alone], timeout: 60).status, 0)
        let r = try Proc.run(binary, args + ["-o", streaming, "-o", "rtmp://127.0.0.1:\(server.port)/live/same"], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        for stream in ["0:v", "0:a"] {
            let a = FF.hashes(try FF.framemd5(alone, outputArgs: ["-map", stream]))
            XCTAssertFalse(a.isEmpty)
            XCTAssertEqual(a, FF.hashes(try FF.framemd5(streaming, outputArgs: ["-map", stream])), "stream \(stream) differs")
        }
    }

    /// nginx stopped while streaming and started again: the recorder reconnects, the stream
    /// resumes on a key frame, the stats show the outage, and the file has every frame.
    func testReconnectsAfterTheServerComesBack() throws {
        let server = try startNginx()
        let local = path("local.mp4"), stats = path("stats.json")
        let child = try spawnTracked(Self.scene + ["--realtime", "--duration", "16", "-o", local,
                                                   "-o", "rtmp://127.0.0.1:\(server.port)/live/again", "--stats-json", stats])
        // Streaming has begun once the server has recorded something.
        let flv = server.recording("again").path
        XCTAssertTrue(Loopback.poll(timeout: 10) { (try? FileManager.default.attributesOfItem(atPath: flv)[.size] as? Int) ?? 0 > 50_000 })
        server.stop()
        let outageStart = Date()
        // A 5-s outage (the issue's): longer than the first back-off (2 s), so at least one
        // attempt fails; the next comes 3 s later (x1.5, plus jitter).
        Thread.sleep(forTimeInterval: 5)
        try server.start()
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let live = try liveStats(stats)
        XCTAssertEqual(live["status"] as? String, "completed")
        XCTAssertEqual(int(live["outages"]), 1)
        XCTAssertEqual(int(live["reconnects"]), 1)
        let outage = try XCTUnwrap(double(live["outageSeconds"]))
        XCTAssertGreaterThan(outage, 4.5)
        XCTAssertLessThan(outage, Date().timeIntervalSince(outageStart))
        XCTAssertGreaterThan(int(live["videoFramesLost"]) ?? 0, 30)
        server.stop()
        // nginx records the new publish afresh: it must start on a key frame and run on.
        let frames = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=key_frame",
                                              "-of", "csv=p=0", flv]).stdout.split(separator: "\n")
        XCTAssertEqual(frames.first, "1", "the resumed stream must start on a key frame")
        XCTAssertGreaterThan(frames.count, 30)
        let resumed = try verify(flv)
        XCTAssertTrue(resumed.contains("gaps: none") && resumed.contains("reordered: none"), resumed)
        let file = try verify(local)
        XCTAssertTrue(file.contains("gaps: none") && file.contains("reordered: none"), file)
        XCTAssertEqual(try FF.probe(local).stream["nb_read_frames"] as? String, "480", "the file must have every frame")
    }

    /// Ctrl-C while the server has stopped reading (nginx frozen with SIGSTOP, the socket
    /// buffers full): the file is finished and the recorder exits within 2 s, the stream
    /// reported as not completed; meanwhile congestion dropped whole non-key frames only.
    func testStopWhileTheNetworkIsStalledFinishesTheFile() throws {
        let server = try startNginx()
        let local = path("local.mp4"), stats = path("stats.json"), log = path("timing.csv")
        // Nearly lossless 720p: about 1.5 MB/s, enough to fill loopback's socket buffers in seconds.
        let child = try spawnTracked(["--source", "synthetic", "--realtime", "--duration", "60", "--crf", "1", "--preset", "ultrafast",
                                      "--quiet", "-y", "-o", local, "-o", "rtmp://127.0.0.1:\(server.port)/live/stall",
                                      "--stats-json", stats, "--timing-log", log])
        XCTAssertNotNil(TimingLogFile.waitForFrame(60, in: log, timeout: 20))
        server.signal(SIGSTOP)
        defer { server.signal(SIGCONT) }
        // Six more seconds of recording, by the recording's own clock, with nobody reading.
        XCTAssertNotNil(TimingLogFile.waitForFrame(240, in: log, timeout: 30))
        child.signal(SIGINT)
        let interrupted = Date()
        let r = child.wait(timeout: 30)
        let took = Date().timeIntervalSince(interrupted)
        XCTAssertLessThan(took, 2.0, "the stop waited on the stalled network")
        XCTAssertEqual(r.status, 1, "a stream that did not complete must fail the run")
        XCTAssertTrue(r.stderr.contains("did not complete"), r.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any])
        XCTAssertEqual(try FF.probe(local).stream["nb_read_frames"] as? String, "\(int(json["framesWritten"]) ?? -1)", "the file must be whole")
        let live = try liveStats(stats)
        XCTAssertEqual(live["status"] as? String, "failed")
        XCTAssertGreaterThan(int(live["videoFramesDropped"]) ?? 0, 0, "congestion must have dropped frames")
        XCTAssertLessThanOrEqual(int(live["maxQueuedMilliseconds"]) ?? .max, 2100, "the queue must stay bounded (a GOP)")
    }

    /// Bandwidth below the stream's bit rate: loopback throttled to 1 Mbit/s by `tc tbf` in a
    /// network namespace of the test's own with small socket buffers, nginx and the recorder
    /// inside it (nginx dies
    /// with the script: `setpriv --pdeathsig`). The queue stays bounded, video is dropped a
    /// whole non-key frame at a time (what nginx received decodes without an error), and the
    /// sound it received has no hole.
    func testThrottledNetworkDropsWholeVideoFramesNeverAudio() throws {
        try XCTSkipUnless(getuid() == 0 && Proc.which("unshare") != nil && Proc.which("tc") != nil && Proc.which("setpriv") != nil,
                          "needs root, unshare, tc and setpriv for a throttled network namespace")
        try XCTSkipUnless(NginxRTMPServer.available, "nginx-light + libnginx-mod-rtmp not installed")
        let server = try NginxRTMPServer(directory: dir) // its configuration only: started inside the namespace
        let local = path("local.mp4"), stats = path("stats.json"), d = dir.path
        let script = """
        set -e
        ip link set lo mtu 1500 up  # segments under tbf's burst (loopback's 64-KB ones would be dropped)
        tc qdisc add dev lo root tbf rate 1mbit burst 16kb latency 500ms
        # Small socket buffers (this namespace's own), so the throttle reaches the sender at once.
        sysctl -q -w net.ipv4.tcp_wmem="4096 16384 65536" net.ipv4.tcp_rmem="4096 16384 65536"
        setpriv --pdeathsig KILL nginx -c \(d)/nginx.conf -p \(d) &
        server=$!
        trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
        for i in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/\(server.port)) 2>/dev/null && break; sleep 0.05; done
        set +e
        "$@"
        """
        let r = try Proc.run("unshare", ["-n", "bash", "-c", script, "throttled", binary] + Self.scene
                             + ["--realtime", "--duration", "8", "--bitrate", "2M", "--audio", "synthetic", "-o", local,
                                "-o", "rtmp://127.0.0.1:\(server.port)/live/slow", "--stats-json", stats], timeout: 60)
        XCTAssertFalse(r.timedOut)
        XCTAssertTrue(r.status == 0 || r.stderr.contains("did not complete"), r.stderr) // the end may not fit in the 1-s finish
        let live = try liveStats(stats)
        XCTAssertGreaterThan(int(live["videoFramesDropped"]) ?? 0, 0, "1 Mbit/s cannot carry 2 Mbit/s without drops")
        XCTAssertLessThanOrEqual(int(live["maxQueuedMilliseconds"]) ?? .max, 2100, "the queue must stay bounded (a GOP)")
        let received = server.recording("slow").path
        let decode = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", received, "-f", "null", "-"])
        XCTAssertTrue(decode.succeeded && decode.stderr.isEmpty, "a dropped frame broke the decoding: \(decode.stderr)")
        let audio = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "packet=pts_time",
                                             "-of", "csv=p=0", received]).stdout.split(separator: "\n").compactMap { Double($0) }
        XCTAssertGreaterThan(audio.count, 100)
        let holes = zip(audio.dropFirst(), audio).filter { $0 - $1 > 0.03 }
        XCTAssertTrue(holes.isEmpty, "the sound nginx received has holes: \(holes.prefix(5))")
        XCTAssertEqual(try FF.probe(local).stream["nb_read_frames"] as? String, "240", "the file must have every frame")
    }

    /// A publish nginx refuses (no such application) is an error naming the output, with no
    /// file left behind; a server that accepts the connection and never answers is given up
    /// after the 5-s connect timeout.
    func testRefusedOrSilentServerIsAClearErrorNotAHang() throws {
        let server = try startNginx()
        let local = path("refused.mp4")
        let started = Date()
        let r = try Proc.run(binary, Self.scene + ["--realtime", "--duration", "5", "-o", local,
                                                   "-o", "rtmp://127.0.0.1:\(server.port)/nosuchapp/secret"], timeout: 30)
        XCTAssertEqual(r.status, 1)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertTrue(r.stderr.contains("refused the connection or the publish"), r.stderr)
        XCTAssertFalse(r.stderr.contains("secret"), "the stream key must not be printed")
        XCTAssertFalse(FileManager.default.fileExists(atPath: local))

        // Accepts TCP (the kernel's backlog) but never answers the RTMP handshake.
        let (fd, port) = try Loopback.silentListener(backlog: 4)
        defer { close(fd) }
        let silentStart = Date()
        let silent = try Proc.run(binary, Self.scene + ["--realtime", "--duration", "5", "-o", local,
                                                        "-o", "rtmp://127.0.0.1:\(port)/live/key"], timeout: 30)
        XCTAssertEqual(silent.status, 1)
        XCTAssertFalse(silent.timedOut)
        XCTAssertTrue(silent.stderr.contains("no answer in time"), silent.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(silentStart), 12, "the 5-s connect timeout did not hold")
        XCTAssertFalse(FileManager.default.fileExists(atPath: local))
    }

    /// SRT to an ffmpeg listener: MPEG-TS with every frame of the file.
    func testStreamsOverSRT() throws {
        let port = try Loopback.freePort(udp: true)
        let received = path("received.ts")
        let listener = try spawnTracked(["-nostdin", "-v", "error", "-y", "-f", "mpegts",
                                         "-i", "srt://127.0.0.1:\(port)?mode=listener", "-c", "copy", received],
                                        executable: "ffmpeg")
        XCTAssertTrue(Loopback.poll(timeout: 10) { Loopback.hasUDPListener(port: port) }, "the SRT listener did not start")
        let local = path("local.mp4")
        let r = try Proc.run(binary, Self.scene + ["--realtime", "--duration", "3", "--audio", "synthetic", "-o", local,
                                                   "-o", "srt://127.0.0.1:\(port)"], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        listener.wait(timeout: 10) // ends when the caller closes
        XCTAssertEqual(try codecs(received), ["h264", "aac"])
        XCTAssertEqual(try videoHashes(received), try videoHashes(local))
    }

    /// Outputs that cannot be: a clear error naming the value (the stream key hidden), nothing
    /// written; exit 64 for a value that is malformed, 2 for a playlist that already exists
    /// (a refusal, as for any existing output: issue 37, 12).
    func testBadOutputsAreRefusedBeforeRecording() throws {
        let playlist = path("taken.m3u8")
        try "#EXTM3U\n".write(toFile: playlist, atomically: true, encoding: .utf8)
        let cases: [([String], String, Int32)] = [
            (["-o", path("a.mp4"), "-o", path("b.mkv")], "one file per recording", 64),
            (["-o", path("a.mp4"), "-o", "http://host/x"], "unsupported protocol", 64),
            (["-o", path("a.mp4"), "-o", "rtmp:///live/secretkey"], "has no host", 64),
            (["-o", path("a.mp4"), "-o", playlist], "already exists", 2),
            (["-o", path("a.mp4"), "-o", path("same.m3u8"), "-o", path("same.m3u8")], "twice", 64),
        ]
        for (args, message, status) in cases {
            let r = try Proc.run(binary, Self.scene.filter { $0 != "-y" } + ["--frames", "5"] + args)
            XCTAssertEqual(r.status, status, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(args): '\(message)' missing from \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("secretkey"), "the stream key must not be printed")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["taken.m3u8"])
        XCTAssertEqual(try String(contentsOfFile: playlist, encoding: .utf8), "#EXTM3U\n")
    }

    /// HLS (MPEG-TS and fragmented-MP4 segments): segments of about 2 s (the key-frame
    /// interval), a complete playlist, and every frame decodable through the playlist, from
    /// disk and served over HTTP by nginx.
    func testHLSSegmentsFollowTheKeyFrameInterval() throws {
        let server = NginxRTMPServer.available ? try startNginx() : nil
        for fmp4 in [false, true] {
            let playlist = path("hls\(fmp4 ? "-fmp4" : "")/live.m3u8")
            try FileManager.default.createDirectory(atPath: (playlist as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let r = try Proc.run(binary, Self.scene + ["--frames", "210", "-o", path("local\(fmp4).mp4"), "-o", playlist]
                                 + (fmp4 ? ["--hls-fmp4"] : []), timeout: 60)
            XCTAssertEqual(r.status, 0, r.stderr)
            let text = try String(contentsOfFile: playlist, encoding: .utf8)
            XCTAssertTrue(text.contains("#EXT-X-ENDLIST"), text)
            let durations = text.split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") }
                .compactMap { Double($0.dropFirst(8).split(separator: ",").first ?? "") }
            XCTAssertEqual(durations.count, 4, text)
            for d in durations.dropLast() { XCTAssertEqual(d, 2.0, accuracy: 0.05, text) }
            XCTAssertEqual(durations.reduce(0, +), 7.0, accuracy: 0.05)
            XCTAssertEqual(try FF.probe(playlist).stream["nb_read_frames"] as? String, "210")
            if let server {
                let served = "http://127.0.0.1:\(server.httpPort)/hls\(fmp4 ? "-fmp4" : "")/live.m3u8"
                XCTAssertEqual(try FF.probe(served).stream["nb_read_frames"] as? String, "210", served)
            }
        }
        // A rolling playlist: the last two segments listed, the older ones removed.
        let rolling = path("rolling.m3u8")
        let r = try Proc.run(binary, Self.scene + ["--frames", "210", "-o", path("rolling.mp4"), "-o", rolling, "--hls-list-size", "2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let listed = try String(contentsOfFile: rolling, encoding: .utf8).split(separator: "\n").filter { $0.hasSuffix(".ts") }
        XCTAssertEqual(listed, ["rolling-2.ts", "rolling-3.ts"])
        let kept = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("rolling-") }.sorted()
        XCTAssertEqual(kept, ["rolling-1.ts", "rolling-2.ts", "rolling-3.ts"], "one segment past the list stays, for players still on it")
    }
}

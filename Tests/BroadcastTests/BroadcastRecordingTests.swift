import Foundation
import Glibc
import TestSupport
import XCTest
@testable import SwiftRecordBroadcast

/// The command and the example sender as two processes: `swift-record --source
/// broadcast:NAME` records every frame of the sender with its two sounds in sync, to a file
/// and to nginx-rtmp at once; a sender killed mid-stream leaves a finished file; a killed
/// recorder fails the sender's next call at once; another user is refused.
final class BroadcastRecordingTests: MediaTestCase {
    private var nginx: NginxRTMPServer?
    private let sender = PackagePaths.product("BroadcastExtension")

    override func setUpWithError() throws {
        try super.setUpWithError()
        chmod(dir.path, 0o700)
    }

    override func tearDownWithError() throws {
        nginx?.stop()
        nginx = nil
        try super.tearDownWithError()
    }

    private var environment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["XDG_RUNTIME_DIR": dir.path]) { $1 }
    }

    private func endpoint(_ name: String) -> String { dir.path + "/swift-record/broadcast/" + name }

    /// Starts the recorder on `name` and waits until it listens.
    private func startRecorder(_ name: String, _ arguments: [String]) throws -> ChildProcess {
        let child = try spawnTracked(["--source", "broadcast:\(name)", "--quiet", "-y"] + arguments, environment: environment)
        XCTAssertTrue(Loopback.poll(timeout: 20) { FileManager.default.fileExists(atPath: endpoint(name)) || child.exited() != nil },
                      "the recorder did not listen: \(child.currentStderr())")
        return child
    }

    private func startSender(_ name: String, seconds: Double, size: String = "640x360") throws -> ChildProcess {
        try spawnTracked([name, "--size", size, "--seconds", "\(seconds)"], executable: sender, environment: environment)
    }

    func testTheExampleSenderIsRecordedFrameExactWithBothSoundsInSyncAndStreamed() throws {
        try XCTSkipUnless(NginxRTMPServer.available, "nginx-light + libnginx-mod-rtmp not installed; run scripts/install-deps.sh")
        let server = try NginxRTMPServer(directory: dir)
        nginx = server
        try server.start()
        let file = path("broadcast.mp4")
        let recorder = try startRecorder("demo", ["--audio", "broadcast:app", "--audio", "broadcast:mic", "--preset", "ultrafast", "-o", file,
                                                  "-o", "rtmp://127.0.0.1:\(server.port)/live/demo"])
        let sent = try startSender("demo", seconds: 6, size: "320x240").wait(timeout: 60)
        XCTAssertEqual(sent.status, 0, sent.stderr)
        // Every frame handed over: the ring (16 buffers of this size) is never full.
        let counts = sent.stdout.components(separatedBy: .whitespacesAndNewlines).compactMap { Int($0.trimmingCharacters(in: .punctuationCharacters)) }
        XCTAssertEqual(counts.prefix(2), [180, 0], sent.stdout)
        let recorded = recorder.wait(timeout: 60)
        XCTAssertEqual(recorded.status, 0, recorded.stderr)
        // Every frame once, in order, in the file and in what the server received: the
        // pictures wait in the ring with their times, so a capture thread the machine's load
        // holds up (up to half a second) still takes each onto its own tick.
        let report = try Proc.run(binary, ["verify", file]).stdout
        XCTAssertTrue(report.contains("frames: 180\n") && report.contains("indices: 0…179") && report.contains("reordered: none"), report)
        XCTAssertTrue(report.contains("gaps: none") && report.contains("repeats: none"), report)
        server.stop()
        let received = server.recording("demo").path
        XCTAssertEqual(FF.hashes(try FF.framemd5(received, outputArgs: ["-map", "0:v"])), FF.hashes(try FF.framemd5(file, outputArgs: ["-map", "0:v"])))
        // Two titled sound tracks: the app's 440 Hz, the microphone's 660 Hz, each clicking
        // within 20 ms of the flashes (a flash on a hiccup's frame: within a frame).
        let titles = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream_tags=handler_name", "-of", "csv=p=0", file])
        XCTAssertEqual(titles.stdout.split(separator: "\n").map(String.init), ["App", "Microphone"])
        var flashes: [Double] = []
        for t in try AudioCheck.flashTimes(file, width: 320, height: 240) where flashes.last.map({ t - $0 > 0.1 }) ?? true { flashes.append(t) }
        XCTAssertTrue((5...6).contains(flashes.count), "\(flashes)")
        for (track, frequency) in [(0, 440.0), (1, 660.0)] {
            let (pcm, start) = try AudioCheck.decodeTimed(file, track: track)
            XCTAssertGreaterThan(AudioCheck.medianToneShare(pcm[...], frequency: frequency), 0.5, "track \(track)")
            let clicks = AudioCheck.clickOnsets(pcm, rate: 48_000).map { $0 + start }
            let offsets = AudioCheck.offsets(flashes: flashes, clicks: clicks).map(abs).sorted()
            XCTAssertEqual(offsets.count, flashes.count)
            XCTAssertLessThan(offsets[offsets.count / 2], 0.020, "track \(track): clicks from their flashes \(offsets)")
            XCTAssertLessThan(offsets.last ?? 1, 0.040, "track \(track): clicks from their flashes \(offsets)")
        }
    }

    /// The sender's `broadcastPaused()` and `broadcastResumed()` pause the recording: 3 s of
    /// frames around a 1.5 s pause make a 3 s file, pictures and sound, without a gap.
    func testTheSendersPauseAndResumePauseTheRecording() throws {
        let file = path("paused.mp4")
        let recorder = try startRecorder("paused", ["--audio", "broadcast:app", "--preset", "ultrafast", "-o", file])
        let started = Date()
        let sent = try spawnTracked(["paused", "--size", "320x240", "--seconds", "3", "--pause-at", "1", "--pause-for", "1.5"],
                                    executable: sender, environment: environment).wait(timeout: 60)
        XCTAssertEqual(sent.status, 0, sent.stderr)
        XCTAssertGreaterThan(Date().timeIntervalSince(started), 4.4, "the sender paused")
        let recorded = recorder.wait(timeout: 60)
        XCTAssertEqual(recorded.status, 0, recorded.stderr)
        // 3 s, not 4.5 s: the pause is not in the file. (A sender starved by the machine's load
        // says it pauses late: the ticks until then repeat its last picture, up to 0.5 s here.)
        let durations = try ["v:0", "a:0"].map { selector in
            let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", selector, "-show_entries", "stream=duration", "-of", "csv=p=0", file])
            return Double(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        XCTAssertTrue((2.95...3.5).contains(durations[0]), "pictures: \(durations[0]) s")
        XCTAssertEqual(durations[1], durations[0], accuracy: 0.05, "the sound's length follows the pictures'")
        // The scene's frame numbers run on across the pause: 0 to 89 in 3 s, none lost to it.
        let report = try Proc.run(binary, ["verify", file]).stdout
        XCTAssertTrue(report.contains("indices: 0…89\n"), report)
    }

    func testASenderKilledMidStreamLeavesAFinishedFile() throws {
        let file = path("killed.mp4")
        let recorder = try startRecorder("killed", ["--duration", "4", "--audio", "broadcast:app", "-o", file])
        let child = try startSender("killed", seconds: 30)
        XCTAssertTrue(Loopback.poll(timeout: 20) { (try? String(contentsOfFile: "/proc/\(child.pid)/stat", encoding: .utf8)) != nil })
        usleep(2_000_000)
        child.signal(SIGKILL)
        let recorded = recorder.wait(timeout: 60)
        XCTAssertEqual(recorded.status, 0, recorded.stderr)
        let probe = try FF.probe(file)
        XCTAssertEqual(Double(int(probe.stream["nb_read_frames"]) ?? 0), 120, accuracy: 2)
        XCTAssertEqual(double(probe.format["duration"]) ?? 0, 4, accuracy: 0.1)
    }

    /// `--on-sender-exit stop`: a sender killed mid-stream ends the recording at its last
    /// picture, the file finished and playable, the exit status 1 saying why.
    func testASenderKilledWithOnSenderExitStopEndsTheRecording() throws {
        let file = path("stopped.mp4")
        let recorder = try startRecorder("stopped", ["--on-sender-exit", "stop", "--audio", "broadcast:app", "--preset", "ultrafast", "-o", file])
        let child = try startSender("stopped", seconds: 30, size: "320x240")
        XCTAssertTrue(Loopback.poll(timeout: 20) { FileManager.default.fileExists(atPath: file) || child.exited() != nil })
        usleep(2_000_000)
        child.signal(SIGKILL)
        let recorded = recorder.wait(timeout: 30)
        XCTAssertEqual(recorded.status, 1, recorded.stderr)
        XCTAssertTrue(recorded.stderr.contains("went away without finishing"), recorded.stderr)
        let probe = try FF.probe(file)
        let duration = double(probe.format["duration"]) ?? 0
        XCTAssertTrue((1.0...4.0).contains(duration), "\(duration) s")
        XCTAssertGreaterThan(int(probe.stream["nb_read_frames"]) ?? 0, 15)
        let decoded = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", file, "-f", "null", "-"])
        XCTAssertEqual(decoded.status, 0, decoded.stderr)
        XCTAssertEqual(decoded.stderr, "", "the file decodes without errors")
    }

    func testAKilledRecorderFailsTheSendersNextCallAtOnce() throws {
        let recorder = try startRecorder("host", ["-o", path("host.mp4")])
        let child = try startSender("host", seconds: 30)
        XCTAssertTrue(Loopback.poll(timeout: 20) { FileManager.default.fileExists(atPath: path("host.mp4")) || child.exited() != nil })
        usleep(1_000_000)
        recorder.signal(SIGKILL)
        let killed = Date()
        XCTAssertTrue(Loopback.poll(timeout: 5) { child.exited() != nil })
        // A frame is 33 ms: the next call comes within it and fails at once.
        XCTAssertLessThan(Date().timeIntervalSince(killed), 0.1 + 0.034 + 0.05)
        let result = child.wait(timeout: 1)
        XCTAssertEqual(result.status, 1, "the sender must end by its own error, not a signal: \(result.stderr)")
        XCTAssertTrue(result.stderr.contains("the recorder has gone"), result.stderr)
    }

    func testAnotherUserIsRefused() throws {
        try XCTSkipUnless(getuid() == 0 && Proc.which("setpriv") != nil && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs root, setpriv and /usr/bin/python3 to connect as another user")
        let recorder = try startRecorder("private", ["--duration", "30", "-o", path("private.mp4")])
        let asNobody = ["--reuid", "65534", "--regid", "65534", "--clear-groups", sender, "private", "--size", "64x48", "--seconds", "1"]
        // The folder and the socket keep another user out…
        let blocked = try Proc.run("setpriv", asNobody, environment: environment, timeout: 30)
        XCTAssertEqual(blocked.status, 1, blocked.stderr)
        XCTAssertTrue(blocked.stderr.contains("Permission denied") || blocked.stderr.contains("owned by user 65534; refusing"), blocked.stderr)
        // …and with their modes opened by mistake, the peer's credentials still do: a hello
        // sent by hand (Python) as another user gets a refusal, and the recorder records on.
        for p in [dir.path, dir.path + "/swift-record", dir.path + "/swift-record/broadcast"] { chmod(p, 0o755) }
        chmod(endpoint("private"), 0o777)
        let hello = BroadcastMessage.hello(.init(pid: 1, width: 64, height: 48, frameRateNumerator: 30, frameRateDenominator: 1,
                                                 sampleRate: 48_000, channels: 2, name: "other user")).encoded
        let script = """
        import socket, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(sys.argv[1])
        try: s.send(bytes.fromhex(sys.argv[2]))
        except OSError: pass
        s.settimeout(5)
        for attempt in range(2):  # (a reset is reported once, before the refusal queued)
            try:
                print(s.recv(4096)[12:].decode(errors="replace")); break
            except ConnectionResetError: pass
        """
        let refused = try Proc.run("setpriv", ["--reuid", "65534", "--regid", "65534", "--clear-groups", "/usr/bin/python3", "-c", script,
                                               endpoint("private"), hello.map { String(format: "%02x", $0) }.joined()], timeout: 30)
        XCTAssertEqual(refused.status, 0, refused.stderr)
        XCTAssertTrue(refused.stdout.contains("only user 0 may send"), refused.stdout + refused.stderr)
        XCTAssertNil(recorder.exited())
        recorder.signal(SIGINT)
        _ = recorder.wait(timeout: 30)
    }

    /// ThreadSanitizer's static runtime intercepts libdispatch: a C program linked with it
    /// needs the toolchain's libdispatch and blocks runtime (beside its clang).
    private func threadSanitizerLibraries(cc: String, _ sanitizer: String?) -> [String] {
        guard sanitizer == "thread" else { return [] }
        let lib = URL(fileURLWithPath: cc).resolvingSymlinksInPath().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("lib/swift/linux").path
        return ["-L", lib, "-ldispatch", "-lBlocksRuntime", "-Wl,-rpath,\(lib)"]
    }

    /// The example sender keeps within a broadcast extension's 50 MB by loading neither
    /// FFmpeg nor Foundation: ldd (the loader's own resolution, dependencies of dependencies
    /// included) lists Swift's runtime and libc, and none of their libraries.
    func testTheExampleSenderLoadsNeitherFFmpegNorFoundation() throws {
        let r = try Proc.run(try XCTUnwrap(Proc.which("ldd"), "no ldd"), [sender])
        XCTAssertEqual(r.status, 0, r.stderr)
        let libraries = r.stdout.split(separator: "\n").compactMap { $0.split(whereSeparator: \.isWhitespace).first.map(String.init) }
        XCTAssertTrue(libraries.contains("libswiftCore.so") && libraries.contains("libc.so.6"), "ldd listed no Swift runtime and libc: \(r.stdout)")
        for banned in ["libavcodec.so", "libavformat.so", "libavutil.so", "libswscale.so", "libswresample.so", "libavdevice.so"] {
            XCTAssertFalse(libraries.contains { $0.hasPrefix(banned) }, "BroadcastExtension loads \(banned): \(r.stdout)")
        }
        XCTAssertFalse(libraries.contains { $0.contains("Foundation") }, "BroadcastExtension loads Foundation: \(r.stdout)")
    }

    /// The C API: Examples/BroadcastSenderC/sender.c compiled here with cc against the
    /// header and the package's libSwiftRecordSender.so, recorded frame exact.
    func testTheCSenderCompiledWithCCIsRecordedFrameExact() throws {
        // A sanitized library needs the sanitizer's runtime in the program: the toolchain's clang's.
        let sanitizer = PackagePaths.sanitizer
        let cc = try XCTUnwrap(Proc.which(sanitizer == nil ? "cc" : "clang"), "no C compiler")
        let build = URL(fileURLWithPath: binary).deletingLastPathComponent().path
        let program = path("sender")
        let compiled = try Proc.run(cc, [PackagePaths.root.appendingPathComponent("Examples/BroadcastSenderC/sender.c").path,
                                         "-I", PackagePaths.root.appendingPathComponent("Sources/SwiftRecordSender").path,
                                         "-L", build, "-lSwiftRecordSender", "-Wl,-rpath,\(build)", "-lm", "-o", program]
                                    + (sanitizer.map { ["-fsanitize=\($0)"] } ?? []) + threadSanitizerLibraries(cc: cc, sanitizer))
        XCTAssertEqual(compiled.status, 0, compiled.stderr)
        let file = path("c.mp4")
        let recorder = try startRecorder("c", ["--audio", "broadcast:app", "-o", file])
        let sent = try Proc.run(program, ["c", "320", "240", "90"], environment: environment, timeout: 60)
        XCTAssertEqual(sent.status, 0, sent.stderr)
        let counts = sent.stdout.components(separatedBy: .whitespacesAndNewlines).compactMap { Int($0.trimmingCharacters(in: .punctuationCharacters)) }
        XCTAssertEqual(counts.prefix(2), [90, 0], sent.stdout)
        let recorded = recorder.wait(timeout: 60)
        XCTAssertEqual(recorded.status, 0, recorded.stderr)
        // Each frame's brightness names it: all 90, in order, none twice.
        let r = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", file, "-map", "0:v:0", "-vf",
                                        "signalstats,metadata=print:key=lavfi.signalstats.YAVG:file=-", "-f", "null", "-"])
        let luma = r.stdout.split(separator: "\n").filter { $0.hasPrefix("lavfi.signalstats.YAVG=") }
            .compactMap { Double($0.dropFirst("lavfi.signalstats.YAVG=".count)) }
        let byLuma = Dictionary(uniqueKeysWithValues: (0..<90).map { (16 + ($0 * 7) % 200, $0) })
        let indices = luma.compactMap { byLuma[Int($0.rounded())] }
        XCTAssertEqual(indices.count, luma.count, "frames of a brightness no frame had: \(luma)")
        XCTAssertEqual(indices, Array(0..<90), "every frame once, in order")
        let (pcm, _) = try AudioCheck.decodeTimed(file)
        XCTAssertGreaterThan(AudioCheck.medianToneShare(pcm[...], frequency: 440), 0.5)
    }

    /// Ctrl-C while the recorder waits for a sender: it stops (within 100 ms of seeing the
    /// signal), says so, removes its socket, and writes nothing.
    func testAStopWhileWaitingForASenderEndsAtOnce() throws {
        let recorder = try startRecorder("waiting", ["-o", path("never.mp4")])
        // (libdispatch arms the command's signal sources asynchronously: a SIGINT in the first
        // moments of a run on a loaded machine can be lost, so it is repeated as a user would.)
        for _ in 0..<5 where recorder.exited() == nil {
            recorder.signal(SIGINT)
            _ = Loopback.poll(timeout: 1) { recorder.exited() != nil }
        }
        let r = recorder.wait(timeout: 5)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("stopped while waiting for a sender on 'waiting'"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("never.mp4")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: endpoint("waiting")), "the socket was left behind")
    }
}

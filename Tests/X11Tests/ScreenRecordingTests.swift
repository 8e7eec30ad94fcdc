import Foundation
import SwiftRecord
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The built `swift-record` recording a private Xvfb screen with known colours on it,
/// checked with ffprobe and ffmpeg.
final class ScreenRecordingTests: XvfbTestCase {
    /// The test pattern: four quadrants of the 1280x720 screen.
    static let quadrants: [(x: Int, y: Int, rgb: (Int, Int, Int))] = [
        (0, 0, (224, 32, 32)), (640, 0, (32, 192, 64)), (0, 360, (32, 64, 224)), (640, 360, (240, 240, 240)),
    ]

    override func setUpWithError() throws {
        try super.setUpWithError()
        let painter = try XPainter(server)
        for q in ScreenRecordingTests.quadrants {
            painter.fill(x: q.x, y: q.y, width: 640, height: 360, rgb: UInt32(q.rgb.0 << 16 | q.rgb.1 << 8 | q.rgb.2))
        }
        painter.movePointer(x: 1279, y: 719)
    }

    func spawn(_ args: [String], on server: XvfbServer? = nil, stdinPath: String? = nil) throws -> ChildProcess {
        try Proc.spawn(binary, args, stdinPath: stdinPath, environment: (server ?? self.server).environment)
    }

    func record(_ args: [String], timeout: Double = 60) throws -> ProcessResult {
        try spawn(args).wait(timeout: timeout)
    }

    func assertColour(_ file: String, x: Int, y: Int, _ expected: (Int, Int, Int), at time: Double = 0.3,
                      file f: StaticString = #filePath, line: UInt = #line) throws {
        let got = try FF.rgb(file, x: x, y: y, at: time)
        // BT.709 limited range through 4:2:0 and H.264 at 2 Mbit/s: a few levels of error.
        for (a, b) in [(got.0, expected.0), (got.1, expected.1), (got.2, expected.2)] {
            XCTAssertLessThanOrEqual(abs(a - b), 10, "pixel (\(x),\(y)) is \(got), expected \(expected)", file: f, line: line)
        }
    }

    /// Shared-memory segments created by process `pid` that still exist.
    func segmentsLeft(by pid: pid_t) throws -> [String] {
        let r = try Proc.run("ipcs", ["-m", "-p"])
        return r.stdout.split(separator: "\n").filter { line in
            let cols = line.split(separator: " ", omittingEmptySubsequences: true)
            return cols.count >= 4 && Int(cols[0]) != nil && cols[2] == "\(pid)"
        }.map(String.init)
    }

    func packetDurations(_ file: String) throws -> [Int] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=duration", "-of", "csv=p=0", file])
        return r.stdout.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    // MARK: -

    func testRecordsTheScreenAtAConstantFrameRate() throws {
        let out = path("s.mp4"), stats = path("stats.json")
        let child = try spawn(["--fps", "30", "--bitrate", "2M", "--duration", "5", "--stats-json", stats, "-o", out])
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("recording the screen of display \(server.display) at 1280x720"), r.stderr)
        let (s, f) = try FF.probe(out)
        XCTAssertEqual(s["codec_name"] as? String, "h264")
        XCTAssertEqual(s["profile"] as? String, "High")
        XCTAssertEqual(s["pix_fmt"] as? String, "yuv420p")
        XCTAssertEqual(s["color_range"] as? String, "tv")
        XCTAssertEqual(s["color_space"] as? String, "bt709")
        XCTAssertEqual(int(s["width"]), 1280)
        XCTAssertEqual(int(s["height"]), 720)
        XCTAssertEqual(s["r_frame_rate"] as? String, "30/1")
        XCTAssertEqual(Double(int(s["nb_read_frames"]) ?? 0), 150, accuracy: 1)
        XCTAssertEqual(try XCTUnwrap(double(f["duration"])), 5.0, accuracy: 0.05)
        XCTAssertEqual(Set(try packetDurations(out)).count, 1, "every frame lasts 1/30 s")
        for q in ScreenRecordingTests.quadrants {
            try assertColour(out, x: q.x + 320, y: q.y + 180, q.rgb, at: 2.5)
        }
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any])
        XCTAssertEqual(json["source"] as? String, "x11")
        XCTAssertEqual(json["framesWritten"] as? Int, 150)
        XCTAssertEqual(try segmentsLeft(by: child.pid), [], "no shared memory left behind")
    }

    func testRegionRecordsThatPartOfTheScreen() throws {
        let out = path("r.mp4")
        let r = try record(["--region", "100,50,640,360", "--duration", "1", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let (s, _) = try FF.probe(out)
        XCTAssertEqual(int(s["width"]), 640)
        XCTAssertEqual(int(s["height"]), 360)
        // Region (x, y) is screen (x + 100, y + 50).
        try assertColour(out, x: 100, y: 100, ScreenRecordingTests.quadrants[0].rgb)
        try assertColour(out, x: 600, y: 100, ScreenRecordingTests.quadrants[1].rgb)
        try assertColour(out, x: 100, y: 340, ScreenRecordingTests.quadrants[2].rgb)
        try assertColour(out, x: 600, y: 340, ScreenRecordingTests.quadrants[3].rgb)
    }

    func testRegionOutsideTheScreenFailsBeforeRecording() throws {
        let out = path("never.mp4")
        let r = try record(["--region", "1000,600,640,360", "--duration", "1", "-o", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("region 1000,600,640,360 is not inside the 1280x720 screen"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out), "nothing is written")
    }

    func testOddRegionAndScaleEncode() throws {
        let odd = path("odd.mp4"), scaled = path("scaled.mp4"), window = path("window.mkv")
        let a = try spawn(["--region", "11,11,321,241", "--duration", "0.5", "-o", odd])
        let b = try spawn(["--scale", "640x360", "--duration", "0.5", "-o", scaled])
        let painter = try XPainter(server)
        let id = painter.window(x: 900, y: 100, width: 301, height: 151, rgb: 0xF0C000)
        defer { painter.destroy(id) }
        let c = try spawn(["--window", "0x" + String(id, radix: 16), "--no-cursor", "--duration", "0.5", "-o", window])
        for (child, name) in [(a, "odd"), (b, "scaled"), (c, "window")] {
            let r = child.wait(timeout: 60)
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            if name == "odd" { XCTAssertTrue(r.stderr.contains("capturing 11,11,322,242 instead of 11,11,321,241"), r.stderr) }
        }
        var (s, _) = try FF.probe(odd)
        XCTAssertEqual([int(s["width"]), int(s["height"])], [322, 242])
        try assertColour(odd, x: 100, y: 100, ScreenRecordingTests.quadrants[0].rgb)
        (s, _) = try FF.probe(scaled)
        XCTAssertEqual([int(s["width"]), int(s["height"])], [640, 360])
        try assertColour(scaled, x: 160, y: 90, ScreenRecordingTests.quadrants[0].rgb)
        try assertColour(scaled, x: 480, y: 270, ScreenRecordingTests.quadrants[3].rgb)
        (s, _) = try FF.probe(window)
        XCTAssertEqual([int(s["width"]), int(s["height"])], [302, 152])
        try assertColour(window, x: 150, y: 75, (240, 192, 0))
    }

    func testPauseAndResumeLeaveNoGap() throws {
        let out = path("p.mp4"), log = path("timing.csv")
        let child = try spawn(["--region", "0,0,640,360", "--duration", "5", "--timing-log", log, "-o", out])
        // Pause 3 s into the recording (by its own log, not the test's clock), resume 2 s later.
        let pausedAt = TimingLogFile.signal([(child, log, 90, SIGUSR1)])[0]
        let pauseSent = Date()
        usleep(2_000_000)
        child.signal(SIGUSR1)
        let pauseMade = Date().timeIntervalSince(pauseSent)
        let r = child.wait(timeout: 30)
        XCTAssertNotNil(pausedAt, "the recording never reached frame 90: \(r.stderr)")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("paused"), r.stderr)
        XCTAssertTrue(r.stderr.contains("resumed"), r.stderr)
        let (s, f) = try FF.probe(out)
        XCTAssertEqual(try XCTUnwrap(double(f["duration"])), 5.0, accuracy: 0.1)
        XCTAssertEqual(Double(int(s["nb_read_frames"]) ?? 0), 150, accuracy: 1)
        let durations = try packetDurations(out)
        XCTAssertEqual(Set(durations).count, 1, "all frame durations equal: \(Set(durations))")

        let rows = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        XCTAssertEqual(rows.first, ["frame", "pts", "capture_time", "host_time", "reason"])
        let paused = try XCTUnwrap(rows.first { $0.last == "paused" })
        let resumed = try XCTUnwrap(rows.first { $0.last == "resumed" })
        XCTAssertEqual(paused[0], resumed[0], "the file continues at the frame where it paused")
        let pauseLength = try XCTUnwrap(Double(resumed[3])) - XCTUnwrap(Double(paused[3]))
        XCTAssertEqual(pauseLength, pauseMade, accuracy: 0.3, "the pause lasts from one SIGUSR1 to the other")
        let frames = rows.filter { $0.last == "captured" || $0.last == "repeated" }.compactMap { Int($0[0]) }
        XCTAssertEqual(frames, Array(0..<frames.count), "one frame per tick, in order")
        XCTAssertEqual(frames.count, 150)
    }

    func testSignalsAndQuitFinishThePlayableFile() throws {
        // SIGINT, SIGTERM, SIGHUP, and q + Enter on a terminal (a pseudo-terminal here).
        let (master, slave) = try PseudoTerminal.open()
        defer { close(master) }
        var children: [(String, ChildProcess, String)] = []
        var logs: [String] = []
        for name in ["INT", "TERM", "HUP", "q"] {
            let out = path("sig-\(name).mp4"), log = path("sig-\(name).csv")
            let child = try spawn(["--region", "0,0,320,240", "--timing-log", log, "-o", out], stdinPath: name == "q" ? slave : nil)
            children.append((name, child, out))
            logs.append(log)
        }
        defer { for (_, child, _) in children { child.terminate() } }
        // Stopped once each has recorded 1 s (by its own log, not the test's clock).
        for ((name, _, _), log) in zip(children, logs) {
            XCTAssertNotNil(TimingLogFile.waitForFrame(30, in: log, timeout: 30), "\(name): the recording never reached 1 s")
        }
        for (name, child, _) in children {
            switch name {
            case "INT": child.signal(SIGINT)
            case "TERM": child.signal(SIGTERM)
            case "HUP": child.signal(SIGHUP)
            default: _ = "p\n".withCString { write(master, $0, 2) }; usleep(300_000); _ = "q\n".withCString { write(master, $0, 2) }
            }
        }
        for (name, child, out) in children {
            let r = child.wait(timeout: 30)
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            let (s, f) = try FF.probe(out)
            XCTAssertGreaterThan(int(s["nb_read_frames"]) ?? 0, 15, name)
            XCTAssertGreaterThan(double(f["duration"]) ?? 0, 0.5, name)
            XCTAssertEqual(try segmentsLeft(by: child.pid), [], name)
            if name == "q" {
                XCTAssertTrue(r.stderr.contains("p + Enter pauses and resumes, q + Enter stops"), r.stderr)
                XCTAssertTrue(r.stderr.contains("swift-record: paused"), r.stderr)
            }
        }
    }

    func testKillingTheXServerKeepsWhatWasRecorded() throws {
        let doomed = try XvfbServer(size: "640x480")
        let out = path("k.mp4")
        let log = path("k.csv")
        let child = try spawn(["--timing-log", log, "-o", out], on: doomed)
        defer { child.terminate() }
        // The server dies 1 s into the recording (by its own log).
        XCTAssertNotNil(TimingLogFile.waitForFrame(30, in: log, timeout: 30), "the recording never reached 1 s")
        doomed.kill9()
        let r = child.wait(timeout: 30)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertFalse(r.timedOut)
        XCTAssertTrue(r.stderr.contains("lost the connection to X display '\(doomed.display)'"), r.stderr)
        XCTAssertTrue(r.stderr.contains("kept what was recorded"), r.stderr)
        let (s, _) = try FF.probe(out)
        XCTAssertGreaterThan(int(s["nb_read_frames"]) ?? 0, 15)
        XCTAssertEqual(try segmentsLeft(by: child.pid), [])
    }

    /// A frozen X server (SIGSTOP) blocks every grab in Xlib; SIGINT still ends the
    /// recording within 2 s, keeping what was captured, and says why it ended early.
    func testStopWorksWhileTheXServerIsFrozen() throws {
        let frozen = try XvfbServer(size: "640x480")
        defer { frozen.stop() }
        let out = path("frozen.mp4")
        let log = path("frozen.csv")
        let child = try spawn(["--timing-log", log, "-o", out], on: frozen)
        defer { child.terminate() }
        XCTAssertNotNil(TimingLogFile.waitForFrame(30, in: log, timeout: 30), "the recording never reached 1 s")
        kill(frozen.pid, SIGSTOP)
        defer { kill(frozen.pid, SIGCONT) }
        usleep(300_000)   // the next grab is now waiting for a server that does not answer
        let sent = Date()
        child.signal(SIGINT)
        let r = child.wait(timeout: 30)
        let took = Date().timeIntervalSince(sent)
        XCTAssertFalse(r.timedOut)
        XCTAssertLessThan(took, PackagePaths.productsAreSanitized ? 6 : 2, "stopping took \(took) s with the X server frozen")
        XCTAssertNotEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("did not return within"), r.stderr)
        XCTAssertTrue(r.stderr.contains("kept what was recorded"), r.stderr)
        let (s, _) = try FF.probe(out)
        XCTAssertGreaterThan(int(s["nb_read_frames"]) ?? 0, 15)
    }

    func testX11WithoutADisplayIsAClearError() throws {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "DISPLAY")
        let out = path("none.mp4")
        var r = try Proc.run(binary, ["--source", "x11", "--duration", "1", "-o", out], environment: env, timeout: 30)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("DISPLAY is not set"), r.stderr)
        r = try Proc.run(binary, ["--display", ":987", "--duration", "1", "-o", out], environment: env, timeout: 30)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("cannot open X display ':987'"), r.stderr)
        r = try Proc.run(binary, ["--source", "synthetic", "--region", "0,0,64,64", "--frames", "1", "-o", out], environment: env, timeout: 30)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("--region applies to the screen"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }
}

/// A pseudo-terminal pair, for a child whose standard input must be a terminal. The
/// functions are looked up at run time: Swift's Glibc module leaves them out.
enum PseudoTerminal {
    typealias OpenPT = @convention(c) (Int32) -> Int32
    typealias PTName = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?

    static func function<T>(_ name: String, as type: T.Type) throws -> T {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { throw TestError.failed("\(name) not found") }
        return unsafeBitCast(symbol, to: type)
    }

    /// The master's file descriptor and the slave's path.
    static func open() throws -> (Int32, String) {
        let master = try function("posix_openpt", as: OpenPT.self)(O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw TestError.failed("posix_openpt failed") }
        guard try function("grantpt", as: OpenPT.self)(master) == 0, try function("unlockpt", as: OpenPT.self)(master) == 0,
              let name = try function("ptsname", as: PTName.self)(master) else {
            close(master)
            throw TestError.failed("cannot set up a pseudo-terminal")
        }
        return (master, String(cString: name))
    }
}

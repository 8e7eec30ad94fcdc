import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Round 3 ("Nothing lost"), an X server that freezes (SIGSTOP) under a recording:
/// - testDurationIsHonouredWhileTheServerIsFrozen: --duration 4 ends on the wall clock with X still frozen; the ticks without a picture are counted; exit 1 saying why, the file kept.
/// - testKilledDuringAFreezeKeepsWhatWasCaptured: a freeze 1.2 s in (before the first fragment's packets are out of the encoder), SIGKILL 2.5 s later: the frames the encoder gave out are in the file (a fragment is flushed without new packets; there were none).
/// - testFrozenBeforeStartIsAClearErrorInBoundedTime: a server frozen before start-up: "did not answer within 5 s", non-zero, nothing left.
final class FrozenXServerTests: MediaTestCase {
    /// A server of each test's own: each test freezes it.
    var server: XvfbServer?

    override func setUpWithError() throws {
        try XCTSkipUnless(XvfbServer.isInstalled, "Xvfb is not installed")
        try super.setUpWithError()
        server = try XvfbServer(size: "320x240")
    }

    override func tearDownWithError() throws {
        if let server {
            kill(server.pid, SIGCONT)   // always: a stopped server cannot be stopped
            server.stop()
        }
        try super.tearDownWithError()
    }

    func testDurationIsHonouredWhileTheServerIsFrozen() throws {
        let server = try XCTUnwrap(server)
        let (out, log, stats) = (path("out.mp4"), path("t.csv"), path("s.json"))
        let child = try Proc.spawn(binary, ["--duration", "4", "--timing-log", log, "--stats-json", stats, "-o", out], environment: server.environment)
        defer { child.terminate() }
        XCTAssertNotNil(TimingLogFile.waitForFrame(45, in: log, timeout: 30), "the recording never reached 1.5 s")
        kill(server.pid, SIGSTOP)
        // The old loop stayed in the grab until the server came back: it never ended on its own.
        let r = child.wait(timeout: 30)
        XCTAssertFalse(r.timedOut, "still recording with the X server frozen, past --duration")
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("did not return within") && r.stderr.contains("kept what was recorded"), r.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any])
        let elapsed = try XCTUnwrap(double(json["elapsedSeconds"]))
        XCTAssertLessThan(elapsed, 4 + 1.5 + (PackagePaths.productsAreSanitized ? 4 : 1.5), "the recording's own clock: ended at \(elapsed) s")
        let written = try XCTUnwrap(int(json["framesWritten"])), missed = try XCTUnwrap(int(json["ticksMissed"]))
        let repeated = try XCTUnwrap(int(json["framesRepeated"])), gaps = try XCTUnwrap(int(json["ticksInGaps"]))
        // `ticksMissed` counts the repeats (written) too: a tick is written (new or repeated),
        // left as a gap, or missed with the source stuck.
        let stuck = missed - repeated
        XCTAssertGreaterThan(stuck, 10, "the ticks of the freeze are counted")
        XCTAssertEqual(written + gaps + stuck, 120, "every tick of the 4 s is written, left as a gap or counted as missed: \(json)")
        // The file holds what was captured, and says so: frames and duration as ffprobe finds them.
        let (s, f) = try FF.probe(out)
        XCTAssertEqual(int(s["nb_read_frames"]), written)
        XCTAssertEqual(int(json["framesInFile"]), written)
        XCTAssertEqual(try XCTUnwrap(double(f["duration"])), Double(written) / 30, accuracy: 0.05)
        XCTAssertEqual(try XCTUnwrap(double(json["mediaSeconds"])), Double(written) / 30, accuracy: 0.05)
    }

    func testKilledDuringAFreezeKeepsWhatWasCaptured() throws {
        let server = try XCTUnwrap(server)
        let (out, log) = (path("killed.mp4"), path("t.csv"))
        // veryfast (the default): x264 holds a look-ahead of frames, so at 1.2 s the packets
        // out end before the first fragment's boundary (1 s), which only a packet crossed.
        let child = try Proc.spawn(binary, ["--duration", "60", "--threads", "1", "--timing-log", log, "-o", out], environment: server.environment)
        defer { child.terminate() }
        XCTAssertNotNil(TimingLogFile.waitForFrame(36, in: log, timeout: 30), "the recording never reached 1.2 s")
        kill(server.pid, SIGSTOP)
        usleep(2_500_000)   // more than a fragment interval (1 s) without a new picture
        child.signal(SIGKILL)
        _ = child.wait(timeout: 10)
        // What was captured before the freeze, less what the encoder still held (its
        // look-ahead: 10 frames at veryfast), is in the file.
        let probe = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                             "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", out])
        let frames = Int(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        XCTAssertGreaterThanOrEqual(frames, 15, "\(frames) frames readable after 1.2 s of recording and a freeze: \(probe.stderr)")
    }

    func testFrozenBeforeStartIsAClearErrorInBoundedTime() throws {
        let server = try XCTUnwrap(server)
        kill(server.pid, SIGSTOP)
        let out = path("never.mp4")
        let started = Date()
        let r = try Proc.run(binary, ["--duration", "2", "-o", out], environment: server.environment, timeout: 40)
        let took = Date().timeIntervalSince(started)
        XCTAssertFalse(r.timedOut, "start-up hung with the X server frozen")
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("the X server at \(server.display) did not answer within 5 s"), r.stderr)
        XCTAssertLessThan(took, 5 + 10, "a bounded wait")
        XCTAssertGreaterThanOrEqual(took, 4.5, "the server had its 5 s")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], "nothing left behind")
    }
}

import Foundation
import SwiftRecord
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class RecordCommandTests: CLITestCase {

    func record(_ args: [String], timeout: Double = 120) throws -> ProcessResult {
        try Proc.run(binary, args, timeout: timeout)
    }

    func testSyntheticRecordingIsExactAndVerifies() throws {
        let out = dir.appendingPathComponent("x.mp4").path
        let r = try record(["--source", "synthetic", "--size", "1280x720", "--fps", "30", "--bitrate", "2M", "--frames", "300", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let (s, f) = try FF.probe(out)
        XCTAssertEqual(s["codec_name"] as? String, "h264")
        XCTAssertEqual(s["profile"] as? String, "High")
        XCTAssertEqual(int(s["width"]), 1280)
        XCTAssertEqual(int(s["height"]), 720)
        XCTAssertEqual(s["pix_fmt"] as? String, "yuv420p")
        XCTAssertEqual(int(s["nb_read_frames"]), 300)
        XCTAssertEqual(s["r_frame_rate"] as? String, "30/1")
        XCTAssertEqual(try XCTUnwrap(double(f["duration"])), 10.0, accuracy: 0.0005)

        let v = try Proc.run(binary, ["verify", out])
        XCTAssertEqual(v.status, 0, v.stdout)
        XCTAssertTrue(v.stdout.contains("indices: 0…299"), v.stdout)
        XCTAssertTrue(v.stdout.contains("gaps: none"), v.stdout)
        XCTAssertTrue(v.stdout.contains("repeats: none"), v.stdout)
    }

    /// `--crf` and `--qp` are encoder options of `record` too; x264 writes the rate control it
    /// ran with into the stream (its SEI options string), which is what this reads.
    func testRecordTakesConstantQuality() throws {
        for (flag, expected) in [("--crf", ["rc=crf", "crf=20.0"]), ("--qp", ["rc=cqp", "qp=24"])] {
            let out = dir.appendingPathComponent("q\(flag).mkv").path
            let value = flag == "--crf" ? "20" : "24"
            let r = try record(["--source", "synthetic", "--size", "320x240", "--frames", "10", flag, value, "-q", "-o", out])
            XCTAssertEqual(r.status, 0, r.stderr)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: out))
            let text = String(decoding: bytes, as: UTF8.self)
            for e in expected { XCTAssertTrue(text.contains(e + " "), "\(flag): x264 options lack '\(e)'") }
            let (s, _) = try FF.probe(out)
            XCTAssertEqual(int(s["nb_read_frames"]), 10)
        }
    }

    func testDefaultSourceWithoutDisplayIsSyntheticAndAnnounced() throws {
        let out = dir.appendingPathComponent("d.mkv").path
        let stats = dir.appendingPathComponent("stats.json").path
        let r = try record(["--size", "320x240", "--frames", "15", "--stats-json", stats, "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("no DISPLAY set; recording the synthetic scene"), r.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any])
        XCTAssertEqual(json["framesWritten"] as? Int, 15)
        XCTAssertEqual(json["framesDropped"] as? Int, 0)
        XCTAssertEqual(json["source"] as? String, "synthetic")
        XCTAssertGreaterThan(json["outputBytes"] as? Int ?? 0, 0)
        let (s, _) = try FF.probe(out)
        XCTAssertEqual(int(s["nb_read_frames"]), 15)
    }

    func testRealtimeDurationTakesWallClockTime() throws {
        let out = dir.appendingPathComponent("rt.mp4").path
        let log = dir.appendingPathComponent("rt.csv").path, stats = dir.appendingPathComponent("rt.json").path
        let r = try record(["--source", "synthetic", "--size", "640x360", "--realtime", "--duration", "3",
                            "--timing-log", log, "--stats-json", stats, "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        // Wall-clock time as the recording measured it (start-up of the process is not part of
        // it): frame 0 to frame 89 takes 89/30 s of real time, never less (it is paced, not
        // rendered as fast as possible), and not much more even on a busy machine. Host times
        // are when each grab returned: a first grab that comes back late on a busy machine
        // shortens the span by its lateness (2.928 s once at load 21), so the lower bound
        // allows a quarter second; unpaced, the 90 frames take a fraction of that span.
        let frames = TimingLogFile.rows(log).filter { $0.reason == "captured" || $0.reason == "repeated" }
        let first = try XCTUnwrap(frames.first), last = try XCTUnwrap(frames.last)
        XCTAssertEqual(first.frame, 0)
        XCTAssertEqual(last.frame, 89)
        let span = last.hostTime - first.hostTime
        XCTAssertGreaterThanOrEqual(span, 89.0 / 30 - 0.25, "not faster than real time")
        XCTAssertLessThan(span, 89.0 / 30 + 0.5, "paced by the clock")
        // From the session's start to the end of finishing the file: 3 s, plus a prompt finish.
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any])
        let elapsed = try XCTUnwrap(double(json["elapsedSeconds"]))
        XCTAssertGreaterThanOrEqual(elapsed, 89.0 / 30, "the session lasts as long as its media")
        XCTAssertLessThan(elapsed, 3.0 + 1.5, "finished promptly after the last frame")
        let (s, f) = try FF.probe(out)
        XCTAssertEqual(int(s["nb_read_frames"]), 90)
        XCTAssertEqual(try XCTUnwrap(double(f["duration"])), 3.0, accuracy: 0.001)
        // Every frame readable and in order; each tick a busy machine made a repeat is in the
        // timing log as one, and verify finds as many repeats: the ticks a late grab missed
        // show the picture before it, as logged (a stall at frame 20 logs ticks 20–22 as
        // repeated, and verify reads picture 19 at ticks 19–22; LiveSchedulerTests checks
        // it on a fake clock). (The log names ticks, verify the scene's own picture numbers.)
        let v = try Proc.run(binary, ["verify", out])
        let repeated = frames.filter { $0.reason == "repeated" }
        let found = v.stdout.split(separator: "\n").first { $0.hasPrefix("repeats: ") }.map { line in
            line.dropFirst("repeats: ".count) == "none" ? 0 : line.split(separator: ",").count
        }
        XCTAssertTrue(v.stdout.contains("gaps: none") && v.stdout.contains("reordered: none") && v.stdout.contains("unreadable: 0"), v.stdout)
        XCTAssertEqual(found, repeated.count, "\(v.stdout)\nlogged repeats at ticks: \(repeated.compactMap(\.frame))")
        XCTAssertEqual(v.status, repeated.isEmpty ? 0 : 1, v.stdout)
    }

    func testSignalsFinishTheFileAndExitZero() throws {
        for (sig, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")] {
            let out = dir.appendingPathComponent("sig-\(name).mp4").path, log = dir.appendingPathComponent("sig-\(name).csv").path
            let child = try spawnTracked(["--source", "synthetic", "--size", "640x360", "--realtime", "--duration", "60",
                                          "--timing-log", log, "-o", out])
            // The signal goes 2 s into the recording (by its own log, not the test's clock).
            let sentAt = TimingLogFile.signal([(child, log, 60, sig)])[0]
            let r = child.wait(timeout: 10)
            XCTAssertFalse(r.timedOut, "\(name): the recorder did not stop")
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            let signalled = try XCTUnwrap(sentAt, "\(name): frame 60 never came: \(r.stderr)")
            let (s, f) = try FF.probe(out)
            let frames = try XCTUnwrap(int(s["nb_read_frames"]))
            XCTAssertGreaterThan(frames, Int(signalled), "\(name): every frame up to the signal is kept")
            XCTAssertLessThan(frames, Int(signalled) + 60, "\(name): stopped within 2 s of the signal")
            let duration = try XCTUnwrap(double(f["duration"]))
            XCTAssertEqual(duration, Double(frames) / 30, accuracy: 0.001, "\(name): duration matches the frames")
            let decode = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
            XCTAssertTrue(decode.succeeded, "\(name): decodes cleanly: \(decode.stderr)")
        }
    }

    /// The binary reports its plan's usage errors and refusals: a bad value exits 64 naming
    /// the option, on stderr, with nothing written. The full table of bad values is checked
    /// in process (RecordingPlanTests.testBadValuesAreUsageErrorsNamingTheOption).
    func testBadValuesExitNonZeroNamingTheOption() throws {
        let out = dir.appendingPathComponent("bad.mp4").path
        let cases: [([String], String)] = [
            (["--fps", "0"], "--fps"),
            (["--size", "641x360"], "--size"),
            (["--source", "webcam"], "--source"),
        ]
        for (args, option) in cases {
            let r = try record(["--source", "synthetic", "--frames", "5", "-o", out] + args)
            XCTAssertEqual(r.status, 64, "\(args) should be a usage error: \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(option), "\(args): message should name \(option): \(r.stderr)")
            let said = r.stderr.lowercased()
            XCTAssertTrue(said.contains("expected") || said.contains("provide one of"), "\(args): message should say what is expected: \(r.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "\(args): no output left behind")
        }
        let unwritable = try record(["--source", "synthetic", "--frames", "5", "-o", "/nonexistent-dir/x.mp4"])
        XCTAssertNotEqual(unwritable.status, 0)
        XCTAssertTrue(unwritable.stderr.contains("/nonexistent-dir"), unwritable.stderr)
    }

    func testHelpShowsExamples() throws {
        let r = try Proc.run(binary, ["--help"])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.stdout.contains("EXAMPLES"), r.stdout)
        XCTAssertTrue(r.stdout.contains("swift-record --fps 30 --bitrate 2M"), r.stdout)
        // The first examples are what people do: the screen with its sound, then a microphone.
        let examples = try XCTUnwrap(r.stdout.components(separatedBy: "EXAMPLES").last)
        let first = examples.split(separator: "\n").filter { $0.hasPrefix("  swift-record") }.prefix(2).map(String.init)
        XCTAssertEqual(first, ["  swift-record -o screen.mkv", "  swift-record --audio default --audio pulse:mic -o talk.mkv"])
        XCTAssertTrue(r.stdout.contains("desktop's sound"), r.stdout)
        let rec = try Proc.run(binary, ["record", "--help"])
        XCTAssertTrue(rec.stdout.contains("--bitrate"), rec.stdout)
    }

    func testVerifyReportsGaps() throws {
        // Every other frame of the scene (SceneRecorder's 60 → 30 fps): verify sees gaps.
        let scene = PackagePaths.product("SceneRecorder")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: scene), "SceneRecorder not built")
        let out = dir.appendingPathComponent("scene.mp4").path
        let r = try Proc.run(scene, [out, "2"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        let (s, f) = try FF.probe(out)
        XCTAssertEqual(int(s["nb_read_frames"]), 60)
        XCTAssertEqual(s["r_frame_rate"] as? String, "30/1")
        XCTAssertEqual(try XCTUnwrap(double(f["duration"])), 2.0, accuracy: 0.001)
        let v = try Proc.run(binary, ["verify", "--list", out])
        XCTAssertEqual(v.status, 1, "gaps make verify fail")
        let listed = v.stdout.split(separator: "\n").prefix(60).compactMap { $0.split(separator: "\t").last.flatMap { Int($0) } }
        XCTAssertEqual(listed, Array(stride(from: 0, to: 120, by: 2)), "the recorded frames are the even rendered ones")
    }

    func testPixelBufferPoolTourShowsReuse() throws {
        let tour = PackagePaths.product("PixelBufferPoolTour")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: tour), "PixelBufferPoolTour not built")
        let out = dir.appendingPathComponent("tour.mp4").path
        let r = try Proc.run(tour, [out], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stdout)
        XCTAssertTrue(r.stdout.contains("reused its buffers"), r.stdout)
        let (s, _) = try FF.probe(out)
        XCTAssertEqual(int(s["nb_read_frames"]), 60)
    }
}

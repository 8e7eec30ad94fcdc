import Foundation
import TestSupport
import XCTest

/// What the command line makes of a request before anything starts (issue 37's messages):
/// - testCodecsFollowTheContainer (8): no --codec means the container's codec (.webm: VP9
///   and Opus), for record and convert alike; a chosen codec the container cannot carry is
///   refused with exit 2 before any source starts, naming what fits (record's three cases in
///   process, RecordingPlanTests; one here end to end).
/// - testHLSSegmentNameThatExistsIsARefusal (12): exit 2, the segment untouched (was 64).
/// - testZeroToleranceAndFineIntervalsAreValues (13): --tolerance 0 is frame-accurate;
///   --every 0.0001 is a value, refused for the count of pictures it makes.
/// - testTimesAndVolumesAreExact (30): --at 3.0001 on a 3.000-s file is past its end;
///   volume=12.0001dB is refused, 4 and 12dB taken (the bounds in process: RecordingPlanTests).
/// - testListingAudioDevicesAnnouncesNoRecording (21).
/// - testOfflineSoundWithRealtimeSaysDropRealtime (24).
/// - testCommaInATitleIsEscapedOrExplained (29): the escaped comma recorded (the unescaped
///   one's message in process: RecordingPlanTests.testCommaInATitleIsExplained).
final class RequestRulesTests: CLITestCase {

    func run(_ args: [String], environment: [String: String]? = nil) throws -> ProcessResult {
        let r = try Proc.run(binary, args, environment: environment, timeout: 120)
        XCTAssertFalse(r.timedOut, "\(args): hung")
        XCTAssertLessThan(r.status, 128, "\(args): crashed: \(r.stderr)")
        return r
    }

    func codecs(_ file: String) throws -> [String] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", file])
        return r.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    func assertDecodesSilently(_ file: String, line: UInt = #line) throws {
        let r = try Proc.run("ffmpeg", ["-v", "warning", "-i", file, "-f", "null", "-"])
        XCTAssertTrue(r.succeeded && r.stderr.isEmpty, "\(file): \(r.stderr)", line: line)
    }

    func testCodecsFollowTheContainer() throws {
        let webm = path("x.webm")
        var r = try run(["--source", "synthetic", "--frames", "10", "--size", "160x96", "--audio", "synthetic", "-o", webm])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try codecs(webm), ["vp9", "opus"])
        XCTAssertTrue(r.stderr.contains("carries vp9"), r.stderr)
        try assertDecodesSilently(webm)
        let gst = try GStreamer.decode(webm, streams: (1, 1))
        XCTAssertTrue(gst.succeeded, "GStreamer: \(gst.stderr.suffix(600))")
        // The refusals' rules and messages are RecordingPlanTests.testCodecsTheContainerCannotCarryAreRefused's;
        // here, one end to end: exit 2, said on stderr, no source opened, nothing written.
        for (args, says) in [(["--codec", "vp9", "-o", path("x.mov")], ["cannot carry vp9", "h264 or hevc", ".mkv"])] {
            r = try run(["--source", "synthetic", "--frames", "10", "--audio", "synthetic"] + args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
            for s in says { XCTAssertTrue(r.stderr.contains(s), "\(args): '\(s)' missing from \(r.stderr)") }
            XCTAssertFalse(r.stderr.contains("audio:"), "\(args): a source was opened before the refusal: \(r.stderr)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["x.webm"], "nothing else written")
        // convert: Y4M and a media file follow the same rule.
        let y4m = path("in.y4m"), mkv = path("in.mkv")
        for (file, extra) in [(y4m, ["-pix_fmt", "yuv420p"]), (mkv, ["-c:v", "libx264"])] {
            let made = try Proc.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x96:rate=30", "-t", "0.5"] + extra + [file])
            XCTAssertTrue(made.succeeded, made.stderr)
            let out = file + ".webm"
            r = try run(["convert", file, "-q", "-o", out])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(try codecs(out), ["vp9"])
            r = try run(["convert", file, "--codec", "h264", "-o", file + "-2.webm"])
            XCTAssertEqual(r.status, 2, r.stderr)
            XCTAssertTrue(r.stderr.contains("cannot carry h264"), r.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: file + "-2.webm"))
        }
    }

    func testHLSSegmentNameThatExistsIsARefusal() throws {
        let segment = path("h-0.ts")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: segment))
        let r = try run(["--source", "synthetic", "--frames", "5", "--audio", "none", "-o", path("v.mp4"), "-o", path("h.m3u8")])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("h-0.ts") && r.stderr.contains("already exists"), r.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: segment)), Data("mine".utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("v.mp4")))
    }

    func makeThreeSecondFile() throws -> String {
        let file = path("three.mp4")
        let made = try Proc.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x96:rate=30", "-t", "3", "-c:v", "libx264", file])
        XCTAssertTrue(made.succeeded, made.stderr)
        return file
    }

    func testZeroToleranceAndFineIntervalsAreValues() throws {
        let file = try makeThreeSecondFile()
        var r = try run(["thumbnail", file, "--tolerance", "0", "--at", "1", "-o", path("t.png")])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try run(["thumbnail", file, "--every", "0.0001", "-o", path("e%d.png")])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("30000 pictures") && r.stderr.contains("at most 10000"), r.stderr)
        r = try run(["thumbnail", file, "--every", "0", "-o", path("z%d.png")])
        XCTAssertEqual(r.status, 64, r.stderr)
        XCTAssertTrue(r.stderr.contains("is zero"), r.stderr)
    }

    func testTimesAndVolumesAreExact() throws {
        let file = try makeThreeSecondFile()
        var r = try run(["thumbnail", file, "--at", "3.0001", "-o", path("late.png")])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("3.000100 s is past the end"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("late.png")))
        r = try run(["thumbnail", file, "--at", "2.0001", "-o", path("fine.png")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("asked 2.000100 s"), r.stderr)
        // Volumes' bounds are RecordingPlanTests.testVolumesAreExactAndNeedTheMix's; here one
        // refused end to end (exit 2, said on stderr), and the largest ones recorded.
        let mix = ["--source", "synthetic", "--frames", "5", "--size", "160x96", "--audio-mix", "--audio", "synthetic"]
        r = try run(mix + ["--audio", "synthetic,volume=12.0001dB", "-o", path("v.mp4")])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("volume=12.0001dB is out of range"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("v.mp4")))
        r = try run(mix + ["--audio", "synthetic,volume=4", "--audio", "synthetic,volume=12dB", "-o", path("v.mp4")])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    func testListingAudioDevicesAnnouncesNoRecording() throws {
        for list in ["--list-audio-devices", "--list-cameras", "--list-monitors"] {
            let r = try Proc.run("/bin/sh", ["-c", "cd \"$1\" && exec \"$2\" \"$3\"", "sh", dir.path, binary, list],
                                 environment: ["PULSE_SERVER": "unix:" + path("no-server"), "PATH": "/usr/bin:/bin"], timeout: 60)
            XCTAssertLessThan(r.status, 128, "\(list): \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("recording to"), "\(list): \(r.stderr)")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], list)
        }
    }

    func testOfflineSoundWithRealtimeSaysDropRealtime() throws {
        let wav = path("tone.wav")
        let made = try Proc.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1", wav])
        XCTAssertTrue(made.succeeded, made.stderr)
        let r = try run(["--source", "synthetic", "--realtime", "--duration", "1", "--audio", "wav:" + wav, "-o", path("w.mp4")])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("drop --realtime"), r.stderr)
        XCTAssertFalse(r.stderr.contains("use --realtime"), r.stderr)
    }

    /// The unescaped comma's message is RecordingPlanTests.testCommaInATitleIsExplained's.
    func testCommaInATitleIsEscapedOrExplained() throws {
        let out = path("t.mkv")
        let r = try run(["--source", "synthetic", "--frames", "5", "--size", "160x96", "--audio", "synthetic,title=Left\\, Right", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let tags = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream_tags=title", "-of", "csv=p=0", out])
        XCTAssertEqual(tags.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "\"Left, Right\"")
    }
}

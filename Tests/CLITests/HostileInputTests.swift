import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// The hostile input catalogue: every case ends in a clear error naming what was wrong and a
/// non-zero exit (or, where the input is legitimate, a correct file), never a crash or a
/// hang, and leaves no stray output. Also run under AddressSanitizer (make check-sanitizers).
///
/// The third hostile pass (issue 31, 21 defects) has its cases in these classes, each with
/// a catalogue at its top: SignalsAndPrintingTests (items 2, 3, 9, 14, 17, 18),
/// WrittenPathTests (4-8, 16) and WrittenPathRuleTests (every path the tool writes against the one rule),
/// ContainerDecodingTests (1, 11-13, the codec x container x finished/killed/repaired matrix),
/// CommandMessageTests and LibraryRefusalTests (19-21), FrozenXServerTests (10),
/// SRTReconnectTests (15), ReplayBufferTests.testAClipSavedWhilePausedEndsAtThePause (14, the
/// clip saved while paused).
final class HostileInputTests: CLITestCase {

    var out: String { dir.appendingPathComponent("out.mp4").path }

    /// Runs convert and asserts a refusal: non-zero, not a crash (signal exit ≥ 128), the
    /// message contains each of `says`, and no output file.
    func refuse(_ args: [String], says: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try Proc.run(binary, ["convert"] + args + ["-o", out], timeout: 30)
        XCTAssertFalse(r.timedOut, "\(args): hung", file: file, line: line)
        XCTAssertNotEqual(r.status, 0, "\(args) should fail", file: file, line: line)
        XCTAssertLessThan(r.status, 128, "\(args): crashed (status \(r.status)): \(r.stderr)", file: file, line: line)
        for s in says {
            XCTAssertTrue(r.stderr.contains(s), "\(args): '\(s)' missing from: \(r.stderr)", file: file, line: line)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: out), "\(args): output left behind", file: file, line: line)
    }

    func write(_ name: String, _ data: Data) throws -> String {
        let p = dir.appendingPathComponent(name).path
        try data.write(to: URL(fileURLWithPath: p))
        return p
    }

    func testSizes() throws {
        let raw = try write("in.yuv", Data(repeating: 128, count: 4608 * 2))
        try refuse([raw, "--size", "0x48"], says: ["--size"])
        try refuse([raw, "--size=-64x48"], says: ["--size"])
        try refuse([raw, "--size", "16385x16"], says: ["--size", "16384"])
        try refuse([raw, "--size", "16384x16384", "--pix-fmt", "yuv444p10le"], says: ["out of range"])   // 1.5 GiB frames: beyond FFmpeg's picture-size limit (av_image_check_size)
        try refuse([raw, "--size", "99999999999x99999999999"], says: ["--size"])
        // 1x1 is a legal picture: encoded (padded to 2x2) from a file of 1x1 frames.
        let tiny = try write("tiny.yuv", Data(repeating: 100, count: 3 * 3))   // 1x1 yuv420p = 3 bytes; 3 frames
        let r = try Proc.run(binary, ["convert", tiny, "--size", "1x1", "--fps", "30", "-o", out], timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(int(try FF.probe(out).stream["nb_read_frames"]), 3)
    }

    func testEveryPixelFormatOneByteShort() throws {
        for format in RawPixelFormat.allCases {
            let frame = try XCTUnwrap(format.frameSize(width: 32, height: 16))
            let raw = try write("short-\(format).raw", Data(repeating: 7, count: 2 * frame - 1))
            try refuse([raw, "--size", "32x16", "--pix-fmt", format.rawValue], says: ["\(frame) bytes", "1 whole frame", "left over"])
        }
    }

    func testDevicesNeedFramesAndWorkWithThem() throws {
        for device in ["/dev/zero", "/dev/urandom"] {
            try refuse([device, "--size", "64x48"], says: [device, "--frames"])
            let r = try Proc.run(binary, ["convert", device, "--size", "64x48", "--fps", "30", "--frames", "20", "-o", out], timeout: 60)
            XCTAssertEqual(r.status, 0, "\(device) with --frames: \(r.stderr)")
            XCTAssertEqual(int(try FF.probe(out).stream["nb_read_frames"]), 20, device)
            try FileManager.default.removeItem(atPath: out)
        }
        try refuse(["/dev/zero", "--size", "64x48", "--frames", "0"], says: ["--frames"])
    }

    func testY4MGarbageAndMissingFrameMarkers() throws {
        var garbage = Data("YUV4MPEG2 ".utf8)
        garbage += Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 7) })
        try refuse([try write("garbage.y4m", garbage)], says: ["YUV4MPEG2"])
        try refuse([try write("binary.y4m", Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) }))], says: ["YUV4MPEG2"])
        // A good header, then frame data without the FRAME line.
        var missing = Data("YUV4MPEG2 W16 H16 F30:1 C420jpeg\n".utf8)
        missing += Data(repeating: 90, count: 384 * 2)
        try refuse([try write("noframe.y4m", missing)], says: ["FRAME"])
        // Header only, no frame at all.
        try refuse([try write("headeronly.y4m", Data("YUV4MPEG2 W16 H16 F30:1\n".utf8))], says: ["frame"])
    }

    /// Case 7 of the second hostile round: another process truncates the input while it is
    /// converted. The conversion ends at the new end, says how many of the announced frames
    /// it got, keeps the (playable) file and exits non-zero.
    func testInputShrinkingDuringConversionIsReported() throws {
        let frameBytes = 320 * 240 * 3 / 2
        let raw = try write("big.yuv", Data((0..<(frameBytes * 150)).map { UInt8(truncatingIfNeeded: ($0 &* 2654435761) >> 13) }))
        // Noise at medium on one thread: slow enough that the truncation, made as soon as the
        // output exists, lands long before the encoder could have taken all 150 frames.
        let child = try spawnTracked(["convert", raw, "--size", "320x240", "--preset", "medium", "--threads", "1", "-q", "-o", out])
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: out) && child.exited() == nil && Date() < deadline { usleep(5_000) }
        XCTAssertEqual(truncate(raw, off_t(frameBytes * 47)), 0)
        let r = child.wait(timeout: 120)
        XCTAssertFalse(r.timedOut)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("of the 150 frames") && r.stderr.contains("shrank"), r.stderr)
        XCTAssertTrue(r.stderr.contains("kept what was written: \(out)"), r.stderr)
        let frames = try XCTUnwrap(int(try FF.probe(out).stream["nb_read_frames"]))
        XCTAssertTrue(r.stderr.contains("ended after \(frames) of the 150 frames"), "\(frames) in the file: \(r.stderr)")
        XCTAssertLessThan(frames, 150)
    }

    /// Case 9 of the second hostile round: converting from a FIFO whose writer sent two
    /// frames and went quiet (still open). SIGTERM and SIGINT stop it within 2 s; with
    /// --allow-partial the two frames are kept, without it nothing is left.
    func testStopWhileAPipeIsQuiet() throws {
        for (sig, partial) in [(SIGTERM, true), (SIGINT, false)] {
            let fifo = dir.appendingPathComponent("quiet-\(sig).fifo").path
            XCTAssertEqual(mkfifo(fifo, 0o600), 0)
            // Opened read-write, so opening does not wait for a reader; kept open: the writer is idle.
            let writer = open(fifo, O_RDWR)
            XCTAssertGreaterThanOrEqual(writer, 0)
            defer { close(writer) }
            let frame = [UInt8](repeating: 90, count: 64 * 48 * 3 / 2)
            for _ in 0..<2 { XCTAssertEqual(Glibc.write(writer, frame, frame.count), frame.count) }
            let child = try spawnTracked(["convert", fifo, "--size", "64x48", "-o", out] + (partial ? ["--allow-partial"] : []))
            let deadline = Date().addingTimeInterval(60)
            while !FileManager.default.fileExists(atPath: out) && child.exited() == nil && Date() < deadline { usleep(5_000) }
            usleep(300_000)   // time to read both frames and block on the third
            XCTAssertNil(child.exited(), "ended before the signal: \(child.currentStderr())")
            let sent = Date()
            child.signal(sig)
            let r = child.wait(timeout: 30)
            let took = Date().timeIntervalSince(sent)
            XCTAssertLessThan(took, PackagePaths.productsAreSanitized ? 6 : 2, "signal \(sig): took \(took) s to stop")
            XCTAssertEqual(r.status, 130, r.stderr)
            XCTAssertTrue(r.stderr.contains("stopped while waiting for input") || r.stderr.contains("stopped after"), r.stderr)
            if partial {
                XCTAssertEqual(int(try FF.probe(out).stream["nb_read_frames"]), 2)
                try FileManager.default.removeItem(atPath: out)
            } else {
                XCTAssertFalse(FileManager.default.fileExists(atPath: out), r.stderr)
            }
        }
    }

    /// Messages that tell the truth: a CR LF header names the line ending, not a field.
    /// The help's ranges are the checks': 0–51 for H.264 and HEVC, 0–63 for VP9 and AV1.
    func testQualityRangesFollowTheCodec() throws {
        let raw = try write("q.yuv", Data(repeating: 128, count: 4608))
        try refuse([raw, "--size", "64x48", "--crf", "60"], says: ["--crf 60", "0 to 51"])
        try refuse([raw, "--size", "64x48", "--codec", "hevc", "--qp", "52"], says: ["--qp 52", "0 to 51"])
        try refuse([raw, "--size", "64x48", "--codec", "vp9", "--crf", "64"], says: ["--crf 64", "0 to 63"])
    }

    func testY4MHeaderWithWindowsLineEnding() throws {
        var y4m = Data("YUV4MPEG2 W16 H16 F30:1\r\n".utf8)
        y4m += Data("FRAME\n".utf8) + Data(repeating: 90, count: 384)
        try refuse([try write("crlf.y4m", y4m)], says: ["CR LF"])
    }

    func testAbsurdFrameRates() throws {
        let raw = try write("in.yuv", Data(repeating: 128, count: 4608 * 2))
        // Slower than a frame a day overflows MP4's time scale (once exited 0 with an empty file).
        for rate in ["0/0", "1/0", "0", "1000000/1", "-30", "abc", "1/1000000", "1/86401"] {
            try refuse([raw, "--size", "64x48", "--fps=\(rate)"], says: ["--fps"])
        }
        // F0:0 is the format's own "unknown": accepted, with the default rate and a note.
        var unknown = Data("YUV4MPEG2 W16 H16 F0:0\n".utf8)
        unknown += Data("FRAME\n".utf8) + Data(repeating: 90, count: 384)
        let r = try Proc.run(binary, ["convert", try write("unknown.y4m", unknown), "-o", out], timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("no frame rate given"), r.stderr)
        try FileManager.default.removeItem(atPath: out)
        for header in ["YUV4MPEG2 W16 H16 F1:0\n", "YUV4MPEG2 W16 H16 F1000000:1\n", "YUV4MPEG2 W16 H16 F-5:1\n", "YUV4MPEG2 W16 H16 F1:1000000\n"] {
            var y4m = Data(header.utf8)
            y4m += Data("FRAME\n".utf8) + Data(repeating: 90, count: 384)
            try refuse([try write("rate.y4m", y4m)], says: ["F (frame rate)"])
        }
    }

    func testOptionsWithUnitTypos() throws {
        let raw = try write("in.yuv", Data(repeating: 128, count: 4608 * 2))
        try refuse([raw, "--size", "64x48", "--bitrate", "2Mbps"], says: ["--bitrate"])
        try refuse([raw, "--size", "64x48", "--bitrate", "2 M"], says: ["--bitrate"])
        try refuse([raw, "--size", "64by48"], says: ["--size"])
        try refuse([raw, "--size", "64x48", "--fps", "30fps"], says: ["--fps"])
        try refuse([raw, "--size", "64x48", "--crop", "0,0,32"], says: ["--crop"])
        try refuse([raw, "--size", "64x48", "--rotate", "45"], says: ["--rotate"])
    }
}

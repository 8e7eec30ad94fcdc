import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// The hostile input catalogue: every case ends in a clear error naming what was wrong and a
/// non-zero exit (or, where the input is legitimate, a correct file), never a crash or a
/// hang, and leaves no stray output. Also run under AddressSanitizer (make check-sanitizers).
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

    func testAbsurdFrameRates() throws {
        let raw = try write("in.yuv", Data(repeating: 128, count: 4608 * 2))
        for rate in ["0/0", "1/0", "0", "1000000/1", "-30", "abc"] {
            try refuse([raw, "--size", "64x48", "--fps=\(rate)"], says: ["--fps"])
        }
        // F0:0 is the format's own "unknown": accepted, with the default rate and a note.
        var unknown = Data("YUV4MPEG2 W16 H16 F0:0\n".utf8)
        unknown += Data("FRAME\n".utf8) + Data(repeating: 90, count: 384)
        let r = try Proc.run(binary, ["convert", try write("unknown.y4m", unknown), "-o", out], timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("no frame rate given"), r.stderr)
        try FileManager.default.removeItem(atPath: out)
        for header in ["YUV4MPEG2 W16 H16 F1:0\n", "YUV4MPEG2 W16 H16 F1000000:1\n", "YUV4MPEG2 W16 H16 F-5:1\n"] {
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

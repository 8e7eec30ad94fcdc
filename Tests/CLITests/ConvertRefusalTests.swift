import Foundation
import TestSupport
import XCTest

/// `swift-record convert` given bad input: a message, a non-zero exit, and no output file
/// (ConvertTests holds what it converts).
final class ConvertRefusalTests: ConvertTestCase {
    func testBadInputIsRefusedBeforeEncodingAndLeavesNoFile() throws {
        let out = path("never.mp4")
        let raw = try makeRaw("bad.yuv", size: "64x48", pixFmt: "yuv420p", frames: 3)   // 3 × 4608 bytes
        var bytes = try Data(contentsOf: URL(fileURLWithPath: raw))
        bytes += Data(repeating: 0, count: 100)
        try bytes.write(to: URL(fileURLWithPath: raw))

        // Size not a multiple of the frame size.
        var r = try convert([raw, "--size", "64x48", "-o", out])
        XCTAssertNotEqual(r.status, 0)
        for fragment in ["13924 bytes", "frames of 4608 bytes", "3 whole frames", "100 bytes are left over", "--allow-partial"] {
            XCTAssertTrue(r.stderr.contains(fragment), "'\(fragment)' missing from: \(r.stderr)")
        }
        assertNoFile(out)

        // --allow-partial: the whole frames, with a warning.
        let partial = path("partial.mp4")
        r = try convert([raw, "--size", "64x48", "--allow-partial", "-o", partial])
        XCTAssertTrue(r.succeeded, r.stderr)
        XCTAssertTrue(r.stderr.contains("warning") && r.stderr.contains("100 bytes"), r.stderr)
        XCTAssertEqual(int(try FF.probe(partial).stream["nb_read_frames"]), 3)

        // Raw input without --size.
        r = try convert([raw, "-o", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("needs --size"), r.stderr)
        assertNoFile(out)

        // A size or format too big for the file: zero frames.
        r = try convert([raw, "--size", "640x480", "--pix-fmt", "yuv444p", "-o", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("less than one 640x480 yuv444p frame (921600 bytes)"), r.stderr)
        assertNoFile(out)

        // Empty file.
        let empty = path("empty.yuv")
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        r = try convert([empty, "--size", "64x48", "-o", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("is empty"), r.stderr)
        assertNoFile(out)

        // Unknown pixel format: the supported ones are listed.
        r = try convert([raw, "--size", "64x48", "--pix-fmt", "yuv9000", "-o", out])
        XCTAssertNotEqual(r.status, 0)
        for fragment in ["unknown pixel format 'yuv9000'", "yuv420p (i420)", "yv12", "nv21", "uyvy422", "rgb24", "yuv420p10le"] {
            XCTAssertTrue(r.stderr.contains(fragment), "'\(fragment)' missing from: \(r.stderr)")
        }
        assertNoFile(out)

        // Truncated Y4M header, and malformed fields.
        let truncated = path("truncated.y4m")
        try Data("YUV4MPEG2 W64 H48 F30:1".utf8).write(to: URL(fileURLWithPath: truncated))
        r = try convert([truncated, "-o", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("YUV4MPEG2 header") && r.stderr.contains("truncated"), r.stderr)
        assertNoFile(out)
        for (header, field) in [("YUV4MPEG2 H48 F30:1", "W (width)"), ("YUV4MPEG2 W64 H48 Fthirty", "F (frame rate)"),
                                ("YUV4MPEG2 W64 H48 C411", "C (colour space)"), ("YUV4MPEG2 W64 H48 A1", "A (pixel aspect)")] {
            let bad = path("bad-field.y4m")
            try Data((header + "\nFRAME\n").utf8).write(to: URL(fileURLWithPath: bad))
            r = try convert([bad, "-o", out])
            XCTAssertNotEqual(r.status, 0)
            XCTAssertTrue(r.stderr.contains(field), "\(field) missing from: \(r.stderr)")
            assertNoFile(out)
        }

        // A Y4M file that ends inside a frame.
        let y4m = path("short.y4m")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "3", "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", y4m])
        let full = try Data(contentsOf: URL(fileURLWithPath: y4m))
        try full.prefix(full.count - 1000).write(to: URL(fileURLWithPath: y4m))
        r = try convert([y4m, "-o", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("ends inside a frame") && r.stderr.contains("2 whole"), r.stderr)
        assertNoFile(out)
    }

    /// Standard input can only show it is cut short by ending: the file started by then is removed.
    func testTruncatedStandardInputRemovesTheStartedFile() throws {
        let raw = try makeRaw("cut.yuv", size: "64x48", pixFmt: "yuv420p", frames: 4)
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        try data.prefix(data.count - 10).write(to: URL(fileURLWithPath: raw))
        let out = path("cut.mp4")
        var r = try convertPiped(raw, ["-", "--size", "64x48", "-o", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("ends inside frame 4") && r.stderr.contains("3 whole frames"), r.stderr)
        assertNoFile(out)

        let kept = path("kept.mp4")
        r = try convertPiped(raw, ["-", "--size", "64x48", "--allow-partial", "-o", kept])
        XCTAssertTrue(r.succeeded, r.stderr)
        XCTAssertTrue(r.stderr.contains("warning"), r.stderr)
        XCTAssertEqual(int(try FF.probe(kept).stream["nb_read_frames"]), 3)

        // Redirected from a file, standard input is checked before encoding like a file.
        r = try convert(["-", "--size", "64x48", "-o", out], stdin: raw)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("3 whole frames fit"), r.stderr)
        assertNoFile(out)

        let empty = path("nothing.yuv")
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        r = try convertPiped(empty, ["-", "--size", "64x48", "-o", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("empty"), r.stderr)
        assertNoFile(out)
    }

    func testConflictingOptionsAreRefused() throws {
        let raw = try makeRaw("opt.rgba", size: "64x48", pixFmt: "rgba", frames: 1)
        let out = path("x.mp4")
        var r = try convert([raw, "--size", "64x48", "--pix-fmt", "rgba", "--lossless", "-o", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("cannot carry ffv1") && r.stderr.contains(".mkv"), r.stderr)
        assertNoFile(out)
        r = try convert([raw, "--size", "64x48", "--pix-fmt", "rgba", "--lossless", "--scale", "32x24", "-o", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("--scale"), r.stderr)
        r = try convert([raw, "--size", "64x48", "--crf", "20", "--qp", "10", "-o", out])
        XCTAssertNotEqual(r.status, 0)
        r = try convert([raw, "--size", "64x48", "--rotate", "45", "-o", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("quarter turn"), r.stderr)
        r = try convert([raw, "--size", "64x48", "--pix-fmt", "rgba", "-o", path("x.avi")])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("container"), r.stderr)
        r = try convert([raw, "--size", "64x48", "--pix-fmt", "rgba", "--crop", "0,0,65,48", "-o", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("does not fit"), r.stderr)
        assertNoFile(out)
    }

    // MARK: - The example
}

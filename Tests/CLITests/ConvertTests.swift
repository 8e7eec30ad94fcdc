import Foundation
import TestSupport
import XCTest

/// What the convert classes share: the built binary's `convert`, raw inputs made by ffmpeg
/// and their hashes as ffmpeg reads them.
class ConvertTestCase: CLITestCase {
    @discardableResult
    func convert(_ args: [String], stdin: String? = nil) throws -> ProcessResult {
        try Proc.run(binary, ["convert"] + args, stdinPath: stdin, timeout: 120)
    }

    /// Runs convert with `file` piped to its standard input (a pipe, not a redirected file).
    func convertPiped(_ file: String, _ args: [String]) throws -> ProcessResult {
        let quoted = (["convert"] + args).map { "'\($0)'" }.joined(separator: " ")
        return try Proc.run("/bin/sh", ["-c", "cat '\(file)' | '\(binary)' \(quoted)"], timeout: 120)
    }

    /// Raw frames of ffmpeg's testsrc2 in `pixFmt`.
    func makeRaw(_ name: String, size: String, pixFmt: String, frames: Int, rate: String = "30") throws -> String {
        let out = path(name)
        // testsrc2 rounds its size down to even numbers: scale to odd sizes.
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=\(rate)", "-frames:v", "\(frames)",
                       "-vf", "scale=\(size.replacingOccurrences(of: "x", with: ":"))",
                       "-pix_fmt", pixFmt, "-f", "rawvideo", out])
        return out
    }

    /// framemd5 hashes of a raw file as ffmpeg reads it.
    func rawHashes(_ file: String, size: String, pixFmt: String) throws -> [String] {
        FF.hashes(try FF.framemd5(file, inputArgs: ["-f", "rawvideo", "-pix_fmt", pixFmt, "-s", size], outputArgs: ["-pix_fmt", pixFmt]))
    }

    func assertNoFile(_ p: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(FileManager.default.fileExists(atPath: p), "\(p) must not be left behind", file: file, line: line)
    }
}

/// `swift-record convert` end to end: the built binary, checked with ffprobe and ffmpeg's framemd5.
final class ConvertTests: ConvertTestCase {
    static let example = PackagePaths.product("YUVToMP4")

    // MARK: - Exactness

    /// Every supported layout: testsrc2 dumped raw, converted with --lossless, decodes (in the
    /// input's pixel format) to exactly the input frames.
    func testLosslessRoundTripForEveryPixelFormat() throws {
        let size = "64x48"
        let formats = ["yuv420p", "yv12", "nv12", "nv21", "yuv422p", "yuv444p", "yuyv422", "uyvy422", "gray",
                       "bgra", "rgba", "rgb24", "bgr0", "yuv420p10le", "yuv422p10le", "yuv444p10le"]
        for format in formats {
            // ffmpeg has no yv12: write I420 and swap the chroma planes.
            let ffFormat = format == "yv12" ? "yuv420p" : format
            let raw = try makeRaw("src-\(format).raw", size: size, pixFmt: ffFormat, frames: 10)
            var expected = try rawHashes(raw, size: size, pixFmt: ffFormat)
            if format == "yv12" {
                let i420 = try Data(contentsOf: URL(fileURLWithPath: raw))
                let frame = 64 * 48 * 3 / 2, y = 64 * 48, c = y / 4
                var yv12 = Data()
                for f in 0..<10 {
                    let base = f * frame
                    yv12 += i420[base..<(base + y)] + i420[(base + y + c)..<(base + y + 2 * c)] + i420[(base + y)..<(base + y + c)]
                }
                try yv12.write(to: URL(fileURLWithPath: raw))
            }
            if format == "bgr0" {
                // The fourth byte of bgr0 is padding and not kept: compare the colours.
                expected = FF.hashes(try FF.framemd5(raw, inputArgs: ["-f", "rawvideo", "-pix_fmt", "bgr0", "-s", size], outputArgs: ["-pix_fmt", "bgr24"]))
            }
            let r = try convert([raw, "--size", size, "--pix-fmt", format, "--lossless", "--threads", "1"])
            XCTAssertTrue(r.succeeded, "\(format): \(r.stderr)")
            let out = [path("src-\(format).mp4"), path("src-\(format).mkv")].first { FileManager.default.fileExists(atPath: $0) }
            guard let out else { XCTFail("\(format): no output; \(r.stderr)"); continue }
            let decoded = FF.hashes(try FF.framemd5(out, outputArgs: ["-pix_fmt", format == "bgr0" ? "bgr24" : ffFormat]))
            XCTAssertEqual(decoded.count, 10, format)
            XCTAssertEqual(decoded, expected, "\(format) → \(URL(fileURLWithPath: out).lastPathComponent) is not exact")
            let (stream, _) = try FF.probe(out, countFrames: false)
            let codec = stream["codec_name"] as? String
            XCTAssertEqual(codec, ["bgra", "rgba", "rgb24", "bgr0"].contains(format) ? "ffv1" : "h264", format)
        }
    }

    /// H.264 packets equal those of the equivalent ffmpeg -f rawvideo command (same frames,
    /// preset, bit rate, key-frame interval, one thread).
    func checkBitExact(size: String, frames: Int) throws {
        let raw = try makeRaw("ref-\(size).yuv", size: size, pixFmt: "yuv420p", frames: frames)
        let ours = path("ours-\(size).mp4"), theirs = path("theirs-\(size).mp4")
        let r = try convert([raw, "--size", size, "--fps", "30", "--preset", "veryfast", "--bitrate", "1M", "--keyint", "60",
                             "--threads", "1", "-q", "-o", ours])
        XCTAssertTrue(r.succeeded, r.stderr)
        try FF.ffmpeg(["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", size, "-r", "30", "-i", raw,
                       "-c:v", "libx264", "-preset", "veryfast", "-b:v", "1M", "-g", "60", "-threads", "1",
                       "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv", theirs])
        let a = try FF.framemd5(ours, outputArgs: ["-map", "0:v", "-c", "copy"])
        let b = try FF.framemd5(theirs, outputArgs: ["-map", "0:v", "-c", "copy"])
        XCTAssertEqual(a.count, frames)
        XCTAssertEqual(a, b, "\(size): packets (and their timestamps) differ from ffmpeg -c:v libx264's")
    }

    func testBitExactWithFFmpeg640x360() throws { try checkBitExact(size: "640x360", frames: 30) }
    func testBitExactWithFFmpeg1920x1080() throws { try checkBitExact(size: "1920x1080", frames: 8) }

    // MARK: - Y4M

    func testY4MFromFFmpegConvertsWithoutSizeOrRate() throws {
        let cases: [(pixFmt: String, size: String, rate: String, frames: Int, expectC: String)] = [
            ("yuv420p", "64x48", "30000/1001", 12, "C420jpeg"),
            ("yuv422p", "96x64", "25", 7, "C422"),
            ("yuv444p", "64x48", "24", 5, "C444"),
            ("gray", "80x48", "60", 9, "Cmono"),
            ("yuv420p10le", "64x48", "50", 6, "C420p10"),
        ]
        for c in cases {
            // Named .dat: Y4M is recognised by its header.
            let y4m = path("clip-\(c.pixFmt).dat")
            try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(c.size):rate=\(c.rate)", "-frames:v", "\(c.frames)",
                           "-pix_fmt", c.pixFmt, "-strict", "-1", "-f", "yuv4mpegpipe", y4m])
            let head = try String(decoding: Data(contentsOf: URL(fileURLWithPath: y4m)).prefix(80), as: UTF8.self)
            XCTAssertTrue(head.contains(c.expectC), "ffmpeg wrote \(head)")
            let out = path("clip-\(c.pixFmt).mp4")
            let r = try convert([y4m, "-o", out, "--preset", "ultrafast"])
            XCTAssertTrue(r.succeeded, "\(c.pixFmt): \(r.stderr)")
            let (s, _) = try FF.probe(out)
            let dims = c.size.split(separator: "x").map { Int($0) }
            XCTAssertEqual(int(s["width"]), dims[0], c.pixFmt)
            XCTAssertEqual(int(s["height"]), dims[1], c.pixFmt)
            XCTAssertEqual(s["r_frame_rate"] as? String, c.rate.contains("/") ? c.rate : "\(c.rate)/1", c.pixFmt)
            XCTAssertEqual(int(s["nb_read_frames"]), c.frames, c.pixFmt)
        }
        // Lossless from Y4M: the samples survive (10-bit included).
        for pixFmt in ["yuv422p", "yuv420p10le", "gray"] {
            let y4m = path("clip-\(pixFmt).dat")
            let out = path("exact-\(pixFmt).mkv")
            XCTAssertTrue(try convert([y4m, "--lossless", "--codec", "ffv1", "-o", out, "-q"]).succeeded)
            XCTAssertEqual(FF.hashes(try FF.framemd5(out, outputArgs: ["-pix_fmt", pixFmt])),
                           FF.hashes(try FF.framemd5(y4m, outputArgs: ["-pix_fmt", pixFmt])), pixFmt)
        }
    }

    // MARK: - Geometry

    func testOddSizeIsPaddedWithTheLastColumnAndRowAndReported() throws {
        let raw = try makeRaw("odd.yuv", size: "65x49", pixFmt: "yuv420p", frames: 3)
        let out = path("odd.mp4")
        // qp 0: lossless H.264 in yuv420p, so the padding can be checked sample by sample.
        let r = try convert([raw, "--size", "65x49", "--qp", "0", "-o", out])
        XCTAssertTrue(r.succeeded, r.stderr)
        XCTAssertTrue(r.stderr.contains("encoding 66x50"), r.stderr)
        let decoded = path("odd-decoded.yuv")
        try FF.ffmpeg(["-i", out, "-f", "rawvideo", "-pix_fmt", "yuv420p", decoded])
        let input = try Data(contentsOf: URL(fileURLWithPath: raw)), output = try Data(contentsOf: URL(fileURLWithPath: decoded))
        let inFrame = 65 * 49 + 2 * 33 * 25, outFrame = 66 * 50 + 2 * 33 * 25
        XCTAssertEqual(output.count, 3 * outFrame)
        for f in 0..<3 {
            for y in 0..<50 {
                for x in 0..<66 {
                    let expected = input[f * inFrame + min(y, 48) * 65 + min(x, 64)]
                    XCTAssertEqual(output[f * outFrame + y * 66 + x], expected, "frame \(f) luma (\(x),\(y))")
                    if output[f * outFrame + y * 66 + x] != expected { return }
                }
            }
            // Chroma of the odd picture already had the even size: unchanged.
            XCTAssertEqual(output[(f * outFrame + 66 * 50)..<((f + 1) * outFrame)], input[(f * inFrame + 65 * 49)..<((f + 1) * inFrame)])
        }

        // --crop instead of padding; lossless with an odd size keeps it via FFV1.
        let cropped = path("cropped.mp4")
        XCTAssertTrue(try convert([raw, "--size", "65x49", "--crop", "0,0,64,48", "-o", cropped, "-q"]).succeeded)
        let (s, _) = try FF.probe(cropped, countFrames: false)
        XCTAssertEqual(int(s["width"]), 64)
        XCTAssertEqual(int(s["height"]), 48)
        let exact = try convert([raw, "--size", "65x49", "--lossless"])
        XCTAssertTrue(exact.succeeded, exact.stderr)
        XCTAssertEqual(FF.hashes(try FF.framemd5(path("odd.mkv"), outputArgs: ["-pix_fmt", "yuv420p"])),
                       try rawHashes(raw, size: "65x49", pixFmt: "yuv420p"))
    }

    func testScaleCropAndRotate() throws {
        let raw = try makeRaw("geo.yuv", size: "64x48", pixFmt: "yuv444p", frames: 4)
        // Turning the pixels: exact against ffmpeg's transpose.
        for (degrees, filter) in [("90", "transpose=clock"), ("270", "transpose=cclock"), ("180", "hflip,vflip")] {
            let out = path("rot\(degrees).mkv")
            let r = try convert([raw, "--size", "64x48", "--pix-fmt", "yuv444p", "--lossless", "--rotate", degrees, "-o", out])
            XCTAssertTrue(r.succeeded, r.stderr)
            let expected = FF.hashes(try FF.framemd5(raw, inputArgs: ["-f", "rawvideo", "-pix_fmt", "yuv444p", "-s", "64x48"],
                                                     outputArgs: ["-vf", filter, "-pix_fmt", "yuv444p"]))
            XCTAssertEqual(FF.hashes(try FF.framemd5(out, outputArgs: ["-pix_fmt", "yuv444p"])), expected, "rotate \(degrees)")
        }
        // Crop then rotate: exact too.
        let cr = path("croprot.mkv")
        XCTAssertTrue(try convert([raw, "--size", "64x48", "--pix-fmt", "yuv444p", "--lossless", "--crop", "10,4,30,20", "--rotate", "90", "-o", cr]).succeeded)
        XCTAssertEqual(FF.hashes(try FF.framemd5(cr, outputArgs: ["-pix_fmt", "yuv444p"])),
                       FF.hashes(try FF.framemd5(raw, inputArgs: ["-f", "rawvideo", "-pix_fmt", "yuv444p", "-s", "64x48"],
                                                 outputArgs: ["-vf", "crop=30:20:10:4,transpose=clock", "-pix_fmt", "yuv444p"])))
        // Only the display matrix.
        let meta = path("meta.mp4")
        XCTAssertTrue(try convert([raw, "--size", "64x48", "--pix-fmt", "yuv444p", "--rotate", "90", "--rotate-metadata", "-o", meta]).succeeded)
        let side = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=width,height:stream_side_data=rotation", "-of", "default=nw=1", meta])
        XCTAssertTrue(side.stdout.contains("width=64") && side.stdout.contains("rotation=-90"), side.stdout)
        // Scale: the output size (after rotation).
        let scaled = path("scaled.mp4")
        XCTAssertTrue(try convert([raw, "--size", "64x48", "--pix-fmt", "yuv444p", "--rotate", "90", "--scale", "24x32", "-o", scaled]).succeeded)
        let (s, _) = try FF.probe(scaled)
        XCTAssertEqual(int(s["width"]), 24)
        XCTAssertEqual(int(s["height"]), 32)
        XCTAssertEqual(int(s["nb_read_frames"]), 4)
    }

    // MARK: - Standard input and the default output name

    func testStandardInputAndDefaultOutputName() throws {
        let raw = try makeRaw("pipe.nv12", size: "64x48", pixFmt: "nv12", frames: 5)
        for piped in [true, false] {
            let out = path("from-stdin-\(piped).mp4")
            let args = ["-", "--size", "64x48", "--pix-fmt", "nv12", "--fps", "30000/1001", "-o", out]
            let r = piped ? try convertPiped(raw, args) : try convert(args, stdin: raw)
            XCTAssertTrue(r.succeeded, r.stderr)
            let (s, _) = try FF.probe(out)
            XCTAssertEqual(int(s["nb_read_frames"]), 5)
            XCTAssertEqual(s["r_frame_rate"] as? String, "30000/1001")
        }
        let y4m = path("pipe.y4m")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=24", "-frames:v", "4", "-pix_fmt", "yuv422p", "-f", "yuv4mpegpipe", y4m])
        let r = try convertPiped(y4m, ["-", "-o", path("pipe-y4m.mp4")])
        XCTAssertTrue(r.succeeded, r.stderr)
        XCTAssertEqual(int(try FF.probe(path("pipe-y4m.mp4")).stream["nb_read_frames"]), 4)

        let named = try makeRaw("in.yuv", size: "64x48", pixFmt: "yuv420p", frames: 2)
        XCTAssertTrue(try convert([named, "--size", "64x48", "-q"]).succeeded)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path("in.mp4")), "in.yuv → in.mp4")
    }

    func testYUVToMP4Example() throws {
        guard FileManager.default.isExecutableFile(atPath: ConvertTests.example) else {
            throw TestError.failed("\(ConvertTests.example) not found; run swift build first")
        }
        let raw = try makeRaw("example.yuv", size: "320x240", pixFmt: "yuv420p", frames: 15)
        let out = path("example.mp4")
        let r = try Proc.run(ConvertTests.example, [raw, "320x240", "30000/1001", out])
        XCTAssertTrue(r.succeeded, r.stderr)
        XCTAssertTrue(r.stdout.contains("wrote"), r.stdout)
        let (s, _) = try FF.probe(out)
        XCTAssertEqual(int(s["nb_read_frames"]), 15)
        XCTAssertEqual(s["r_frame_rate"] as? String, "30000/1001")
        let bad = try Proc.run(ConvertTests.example, [raw, "321x240"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("not a whole number"), bad.stderr)
    }
}

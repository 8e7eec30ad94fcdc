import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

// ThumbnailCLITests: `swift-record thumbnail`, its files checked with ffprobe and compared
// with ffmpeg's pictures (ffmpeg's psnr filter).
//
// - testAtWritesThePictureFFmpegDecodes: --at 1.5 -o t.png: a 320x240 PNG ≥ 45 dB against
//   `ffmpeg -ss 1.5 -i F -frames:v 1`, exit 0.
// - testSeveralTimesNamesAndFormats: --at 1,2 --at 3 without -o: in-1.png … in-3.png;
//   -o 'x-%02d.jpg': x-01.jpg … (JPEG, no libswscale warning); --every 1s: 4 pictures of a 4 s file.
// - testContactSheetDimensions: --sheet 3x2: 960x480 (tiles 320 wide); --sheet 4x3
//   --size 160x160: 640x360; the top-left tile is the picture of the first time.
// - testDisplayMatrixIsAppliedUnlessNoTransform: an MP4 tagged with a 90° display matrix
//   (convert --rotate 90 --rotate-metadata): 240x320 equal to ffmpeg's autorotated picture;
//   --no-transform: the stored 320x240.
// - testErrorsAreRefusedBeforeWriting: a time past the end, an audio-only file, noise, an
//   existing output without -y (kept; replaced with -y), the input as output, a link to
//   /dev/null, one name for several pictures: non-zero exit, a clear message, nothing written.
// - testALengthTheFileMakesUpNeitherCrashesNorHangs: a Matroska Duration patched to 10^11 s:
//   --sheet 32x32 ends with an exit status (no overflow trap), --every 10s is refused (exit 2)
//   saying how many pictures that would be.
final class ThumbnailCLITests: CLITestCase {
    /// A 4 s MP4: H.264 with B-frames, 320x240 at 30 fps, a key frame every second.
    func makeSource(_ name: String = "in.mp4") throws -> String {
        let p = path(name)
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "4", "-c:v", "libx264", "-threads", "1",
                       "-bf", "2", "-g", "30", "-pix_fmt", "yuv420p", p])
        return p
    }

    func thumbnail(_ args: [String]) throws -> ProcessResult {
        try Proc.run(binary, ["thumbnail"] + args, timeout: 60)
    }

    /// "codec,width,height" of a picture file.
    func describe(_ file: String) throws -> String {
        try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", file])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// PSNR of two pictures by ffmpeg's psnr filter (infinity when equal).
    func psnr(_ a: String, _ b: String) throws -> Double {
        let r = try Proc.run("ffmpeg", ["-nostdin", "-i", a, "-i", b, "-lavfi", "psnr", "-f", "null", "-"])
        guard let range = r.stderr.range(of: #"average:\S+"#, options: .regularExpression) else { return 0 }
        let value = r.stderr[range].dropFirst("average:".count)
        return value == "inf" ? .infinity : Double(value) ?? 0
    }

    func files() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() }

    func testAtWritesThePictureFFmpegDecodes() throws {
        let source = try makeSource()
        let r = try thumbnail([source, "--at", "1.5", "-o", path("t.png")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("1.500 s"), r.stderr)
        XCTAssertEqual(try describe(path("t.png")), "png,320,240")
        try FF.ffmpeg(["-ss", "1.5", "-i", source, "-frames:v", "1", path("ref.png")])
        XCTAssertGreaterThanOrEqual(try psnr(path("t.png"), path("ref.png")), 45)
        try FF.ffmpeg(["-ss", "1.6", "-i", source, "-frames:v", "1", path("other.png")])
        XCTAssertLessThan(try psnr(path("t.png"), path("other.png")), 45, "the comparison tells pictures apart")
    }

    func testSeveralTimesNamesAndFormats() throws {
        let source = try makeSource()
        var r = try thumbnail([source, "--at", "1,2", "--at", "3"])
        XCTAssertEqual(r.status, 0, r.stderr)
        for n in 1...3 { XCTAssertEqual(try describe(path("in-\(n).png")), "png,320,240") }
        r = try thumbnail([source, "--at", "0.5,2.5", "-o", path("x-%02d.jpg"), "--size", "160x160"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stderr.contains("warning"), "JPEG through libswscale without its deprecated-format warning: \(r.stderr)")
        XCTAssertEqual(try describe(path("x-01.jpg")), "mjpeg,160,120")
        XCTAssertEqual(try describe(path("x-02.jpg")), "mjpeg,160,120")
        r = try thumbnail([source, "--every", "1s", "-o", path("e-%d.png")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try files().filter { $0.hasPrefix("e-") }, ["e-1.png", "e-2.png", "e-3.png", "e-4.png"])
        try FF.ffmpeg(["-ss", "3", "-i", source, "-frames:v", "1", path("ref3.png")])
        XCTAssertGreaterThanOrEqual(try psnr(path("e-4.png"), path("ref3.png")), 45, "the 4th of --every 1s is at 3 s")
    }

    func testContactSheetDimensions() throws {
        let source = try makeSource()
        var r = try thumbnail([source, "--sheet", "3x2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try describe(path("in-sheet.png")), "png,960,480")
        r = try thumbnail([source, "--sheet", "4x3", "--size", "160x160", "--every", "0.25", "-o", path("s.jpg")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try describe(path("s.jpg")), "mjpeg,640,360")
        // The top-left tile is the picture at 0 s, scaled to 160x120.
        r = try thumbnail([source, "--sheet", "2x2", "--at", "0,1,2,3", "-o", path("q.png")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try describe(path("q.png")), "png,640,480")
        try FF.ffmpeg(["-i", path("q.png"), "-vf", "crop=320:240:0:0", path("tile.png")])
        try FF.ffmpeg(["-i", source, "-frames:v", "1", path("first.png")])
        XCTAssertGreaterThanOrEqual(try psnr(path("tile.png"), path("first.png")), 45)
    }

    func testDisplayMatrixIsAppliedUnlessNoTransform() throws {
        let y4m = path("src.y4m")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "1", "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", y4m])
        let rotated = path("rot.mp4")
        var r = try Proc.run(binary, ["convert", y4m, "--rotate", "90", "--rotate-metadata", "-o", rotated, "-q", "--threads", "1"], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try thumbnail([rotated, "--at", "0.5", "-o", path("shown.png")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try describe(path("shown.png")), "png,240,320")
        try FF.ffmpeg(["-ss", "0.5", "-i", rotated, "-frames:v", "1", path("ref.png")])
        XCTAssertEqual(try describe(path("ref.png")), "png,240,320", "ffmpeg turns it too")
        XCTAssertGreaterThanOrEqual(try psnr(path("shown.png"), path("ref.png")), 45)
        r = try thumbnail([rotated, "--at", "0.5", "-o", path("stored.png"), "--no-transform"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try describe(path("stored.png")), "png,320,240")
    }

    func testErrorsAreRefusedBeforeWriting() throws {
        let source = try makeSource()
        var r = try thumbnail([source, "--at", "1,9", "-o", path("late-%d.png")])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("9.000 s is past the end") && r.stderr.contains("in.mp4"), r.stderr)
        let audio = path("tone.m4a")
        try FF.ffmpeg(["-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "1", "-c:a", "aac", audio])
        r = try thumbnail([audio, "--at", "0.5"])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("no video track"), r.stderr)
        let noise = path("noise.mkv")
        var seed: UInt32 = 777
        try Data((0..<65_536).map { _ -> UInt8 in
            seed = seed &* 1_103_515_245 &+ 12_345
            return UInt8(truncatingIfNeeded: seed >> 16)
        }).write(to: URL(fileURLWithPath: noise))
        r = try thumbnail([noise, "--at", "1"])
        XCTAssertNotEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("noise.mkv"), r.stderr)
        XCTAssertEqual(try files(), ["in.mp4", "noise.mkv", "tone.m4a"], "nothing written")
        // An existing file is kept without -y, replaced with it.
        let existing = path("keep.png")
        let old = Data("not a picture".utf8)
        try old.write(to: URL(fileURLWithPath: existing))
        r = try thumbnail([source, "--at", "1", "-o", existing])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("already exists"), r.stderr)
        assertUnchanged(existing, old, "without -y")
        r = try thumbnail([source, "--at", "1", "-o", existing, "-y"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try describe(existing), "png,320,240")
        // The input itself (through a link), a device node behind a link, one name for several pictures.
        XCTAssertEqual(symlink(source, path("same.png")), 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: source))
        r = try thumbnail([source, "--at", "1", "-o", path("same.png"), "-y"])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("same file as the input"), r.stderr)
        assertUnchanged(source, before, "the input")
        XCTAssertEqual(symlink("/dev/null", path("null.png")), 0)
        r = try thumbnail([source, "--at", "1", "-o", path("null.png")])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("character device"), r.stderr)
        r = try thumbnail([source, "--at", "1,2", "-o", path("one.png")])
        XCTAssertEqual(r.status, 64, r.stderr)
        XCTAssertTrue(r.stderr.contains("%d"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("one.png")))
    }

    /// A file whose header says it lasts 10^11 s (its Matroska Duration patched; 2 s of
    /// pictures in it): --sheet 32x32's evenly spread times had overflowed Int64 microseconds
    /// (a crash), and --every 10s had listed 10^10 times (a hang). Now the sheet is made (its
    /// tiles past the pictures black) or refused, and --every says how many it would make.
    func testALengthTheFileMakesUpNeitherCrashesNorHangs() throws {
        let source = path("long.mkv")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=5", "-t", "2", "-c:v", "libx264", "-threads", "1", source])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        let at = try XCTUnwrap(bytes.indices.dropLast(11).first { bytes[$0] == 0x44 && bytes[$0 + 1] == 0x89 && bytes[$0 + 2] == 0x88 },
                               "the Duration element")
        withUnsafeBytes(of: (1e14 as Double).bitPattern.bigEndian) { bytes.replaceSubrange((at + 3)..<(at + 11), with: $0) }
        let huge = path("huge.mkv")
        try Data(bytes).write(to: URL(fileURLWithPath: huge))
        var r = try thumbnail([huge, "--sheet", "32x32", "-o", path("sheet.png")])
        XCTAssertTrue([0, 1, 2].contains(r.status), "an exit status, not a crash: \(r.status) \(r.stderr.prefix(600))")
        r = try thumbnail([huge, "--every", "10s", "-o", path("e-%d.png")])
        XCTAssertEqual(r.status, 2, r.stderr.prefix(600) + "")
        XCTAssertTrue(r.stderr.contains("pictures; at most 10000"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("e-1.png")))
    }
}

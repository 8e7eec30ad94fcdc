import Foundation
import TestSupport
import XCTest

// ConvertMediaPictureTests: how `swift-record convert` of a media file shows its pictures:
// turned as the input says, at the input's size (issue 37, items 15 and 18).
//
// - testDisplayRotationIsKept: an MP4 tagged rotate=90 (a display matrix): --copy and
//   re-encoding into .mp4 and .mov keep ffprobe's rotation; re-encoding into .mkv (no
//   display matrix) turns the pixels as ffmpeg's autorotation shows them; --copy into
//   .mkv is refused before writing (exit 2).
// - testOddSizedMediaIsPaddedLikeY4M: a 321x241 FFV1 MKV at --qp 0 becomes 322x242, its
//   luma and chroma the input's exactly with the last column and row repeated, the same
//   size and luma as the same pictures given as Y4M.
final class ConvertMediaPictureTests: CLITestCase {

    func convert(_ args: [String]) throws -> ProcessResult {
        try Proc.run(binary, ["convert", "-q"] + args, timeout: 120)
    }

    func rotation(_ file: String) throws -> String? {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream_side_data=rotation",
                                         "-of", "csv=p=0", file])
        let value = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return value.isEmpty ? nil : value
    }

    /// framemd5 hashes of `file`'s pictures after `filter`.
    func pictures(_ file: String, _ filter: String, inputArgs: [String] = []) throws -> [String] {
        FF.hashes(try FF.framemd5(file, inputArgs: inputArgs, outputArgs: ["-vf", filter, "-threads", "1"]))
    }

    func testDisplayRotationIsKept() throws {
        let plain = path("plain.mp4"), source = path("rot.mp4")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-t", "1", "-c:v", "libx264", "-threads", "1", plain])
        try FF.ffmpeg(["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=90", source])
        let turn = try rotation(source)
        XCTAssertNotNil(turn)
        for (args, name) in [(["--copy"], "c.mp4"), (["--copy"], "c.mov"), ([], "e.mp4"), ([], "e.mov")] {
            let r = try convert([source, "-o", path(name)] + args)
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            XCTAssertEqual(try rotation(path(name)), turn, name)
        }
        let mkv = path("e.mkv")
        let r = try convert([source, "-o", mkv])
        XCTAssertEqual(r.status, 0, r.stderr)
        let size = try FF.probe(mkv).stream
        XCTAssertEqual(size["width"] as? Int, 120)
        XCTAssertEqual(size["height"] as? Int, 160)
        // The pictures as ffmpeg shows the input (autorotated), near enough after H.264.
        let psnr = try Proc.run("ffmpeg", ["-i", source, "-i", mkv, "-lavfi", "[0][1]psnr", "-f", "null", "-"])
        let average = psnr.stderr.components(separatedBy: "average:").last.flatMap { Double($0.prefix { $0 != " " }) } ?? 0
        XCTAssertGreaterThan(average, 30, psnr.stderr)
        let refused = try convert([source, "--copy", "-o", path("c.mkv")])
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("display matrix") && refused.stderr.contains(".mp4"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("c.mkv")))
    }

    func testOddSizedMediaIsPaddedLikeY4M() throws {
        let mkv = path("odd.mkv"), y4m = path("odd.y4m")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=321x241:rate=10,format=rgb24", "-t", "1", "-pix_fmt", "yuv420p",
                       "-c:v", "ffv1", mkv])
        try FF.ffmpeg(["-i", mkv, "-pix_fmt", "yuv420p", "-strict", "-1", y4m])
        let fromMKV = path("mkv.mp4"), fromY4M = path("y4m.mp4")
        for (input, output) in [(mkv, fromMKV), (y4m, fromY4M)] {
            let r = try convert([input, "--qp", "0", "-o", output])
            XCTAssertEqual(r.status, 0, r.stderr)
            let stream = try FF.probe(output).stream
            XCTAssertEqual(stream["width"] as? Int, 322, output)
            XCTAssertEqual(stream["height"] as? Int, 242, output)
        }
        let luma = try pictures(mkv, "format=gray")
        XCTAssertEqual(luma.count, 10)
        XCTAssertEqual(try pictures(fromMKV, "format=gray,crop=321:241:0:0"), luma)
        XCTAssertEqual(try pictures(fromY4M, "format=gray,crop=321:241:0:0"), luma)
        // The added column and row repeat the last ones.
        XCTAssertEqual(try pictures(fromMKV, "format=gray,crop=1:241:321:0"), try pictures(mkv, "format=gray,crop=1:241:320:0"))
        XCTAssertEqual(try pictures(fromMKV, "format=gray,crop=321:1:0:241"), try pictures(mkv, "format=gray,crop=321:1:0:240"))
        // 4:2:0 chroma of 321x241 is 161x121 either way: the input's exactly.
        for plane in ["u", "v"] {
            XCTAssertEqual(try pictures(fromMKV, "extractplanes=\(plane)"), try pictures(mkv, "extractplanes=\(plane)"), plane)
        }
    }
}

import Foundation
import SwiftRecord
import TestSupport
import XCTest

// Catalogue (issue 42, `swift-record screenshot` on X11; Wayland: ScreenCaptureKitWaylandTests):
// - testScreenshotHasThePaintedColours: four painted quadrants of a 1280x720 Xvfb → a
//   1280x720 PNG (ffprobe) whose pixels (ffmpeg's decode) are the painted colours; the same as
//   JPEG (mjpeg) within JPEG's error.
// - testRegionAndWindowAreCut: --region 600,320,80,80 → an 80x80 picture, red at its top
//   left and yellow at its bottom right; --window of a 200x100 green window → 200x100, green.
// - testRefusalsWriteNothing: an existing -o without -y → exit 2, the file as it was; -y
//   replaces it; -o x.gif → usage error (64); --monitor NOPE → exit 2 naming it; no display
//   named → exit 1 naming DISPLAY and WAYLAND_DISPLAY; nothing written by any of them.

/// `swift-record screenshot` on a private Xvfb painted in four quadrants.
final class ScreenshotCommandTests: XvfbTestCase {
    static let quadrants: [(x: Int, y: Int, rgb: UInt32)] = [(0, 0, 0xFF0000), (640, 0, 0x00FF00), (0, 360, 0x0000FF), (640, 360, 0xFFFF00)]

    override func setUpWithError() throws {
        try super.setUpWithError()
        let painter = try XPainter(server)
        for q in ScreenshotCommandTests.quadrants { painter.fill(x: q.x, y: q.y, width: 640, height: 360, rgb: q.rgb) }
        painter.movePointer(x: 4, y: 4)
    }

    private func screenshot(_ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
        try Proc.run(binary, ["screenshot"] + arguments, environment: environment ?? server.environment, timeout: 30)
    }

    private func rgb(_ value: UInt32) -> (Int, Int, Int) { (Int(value >> 16 & 0xFF), Int(value >> 8 & 0xFF), Int(value & 0xFF)) }

    /// The picture in `file` as ffmpeg decodes it: packed RGB rows of `width` pixels.
    private func decoded(_ file: String) throws -> (pixels: [UInt8], width: Int) {
        let raw = path("decoded.rgb")
        try FF.ffmpeg(["-i", file, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        return (try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw))), int(try FF.probe(file).stream["width"]) ?? 0)
    }

    private func assertColour(_ file: String, _ points: [(x: Int, y: Int, rgb: UInt32)], within: Int = 0, line: UInt = #line) throws {
        let (pixels, width) = try decoded(file)
        for p in points {
            let i = (p.y * width + p.x) * 3
            guard i + 2 < pixels.count else { return XCTFail("(\(p.x), \(p.y)) is outside \(file)", line: line) }
            let want = rgb(p.rgb), got = (Int(pixels[i]), Int(pixels[i + 1]), Int(pixels[i + 2]))
            XCTAssertTrue(abs(got.0 - want.0) <= within && abs(got.1 - want.1) <= within && abs(got.2 - want.2) <= within,
                          "at (\(p.x), \(p.y)): \(got), expected \(want)", line: line)
        }
    }

    func testScreenshotHasThePaintedColours() throws {
        let png = path("shot.png"), jpeg = path("shot.jpg")
        let r = try screenshot(["--no-cursor", "-o", png])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("wrote \(png): 1280x720"), r.stderr)
        let (info, _) = try FF.probe(png)
        XCTAssertEqual(info["codec_name"] as? String, "png")
        XCTAssertEqual([int(info["width"]), int(info["height"])], [1280, 720])
        let quadrants = ScreenshotCommandTests.quadrants
        try assertColour(png, quadrants.map { ($0.x + 320, $0.y + 180, $0.rgb) } + quadrants.map { ($0.x + 1, $0.y + 1, $0.rgb) })
        let j = try screenshot(["--no-cursor", "-o", jpeg])
        XCTAssertEqual(j.status, 0, j.stderr)
        XCTAssertEqual(try FF.probe(jpeg).stream["codec_name"] as? String, "mjpeg")
        try assertColour(jpeg, quadrants.map { ($0.x + 320, $0.y + 180, $0.rgb) }, within: 12)
    }

    func testRegionAndWindowAreCut() throws {
        let part = path("part.png"), window = path("window.png")
        let r = try screenshot(["--region", "600,320,80,80", "--no-cursor", "-o", part])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual([int(try FF.probe(part).stream["width"]), int(try FF.probe(part).stream["height"])], [80, 80])
        try assertColour(part, [(5, 5, 0xFF0000), (75, 75, 0xFFFF00)])
        let painter = try XPainter(server)
        let id = painter.window(x: 300, y: 200, width: 200, height: 100, rgb: 0x20C040)
        defer { painter.destroy(id) }
        let w = try screenshot(["--window", "0x" + String(id, radix: 16), "--no-cursor", "-o", window])
        XCTAssertEqual(w.status, 0, w.stderr)
        let info = try FF.probe(window).stream
        XCTAssertEqual([int(info["width"]), int(info["height"])], [200, 100])
        try assertColour(window, [(100, 50, 0x20C040)])
    }

    func testRefusalsWriteNothing() throws {
        let kept = path("kept.png")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: kept))
        let exists = try screenshot(["-o", kept])
        XCTAssertEqual(exists.status, 2, exists.stderr)
        XCTAssertEqual(try String(contentsOfFile: kept, encoding: .utf8), "mine")
        let replaced = try screenshot(["-y", "-o", kept])
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertEqual(try FF.probe(kept).stream["codec_name"] as? String, "png")

        let gif = try screenshot(["-o", path("x.gif")])
        XCTAssertEqual(gif.status, 64, gif.stderr)
        XCTAssertTrue(gif.stderr.contains(".png, .jpg or .jpeg"), gif.stderr)
        let monitor = try screenshot(["--monitor", "NOPE", "-o", path("nope.png")])
        XCTAssertEqual(monitor.status, 2, monitor.stderr)
        XCTAssertTrue(monitor.stderr.contains("NOPE"), monitor.stderr)
        var bare = server.environment
        for key in ["DISPLAY", "WAYLAND_DISPLAY"] { bare.removeValue(forKey: key) }
        let none = try screenshot(["-o", path("none.png")], environment: bare)
        XCTAssertEqual(none.status, 1, none.stderr)
        XCTAssertTrue(none.stderr.contains("DISPLAY") && none.stderr.contains("WAYLAND_DISPLAY"), none.stderr)
        for name in ["x.gif", "nope.png", "none.png"] { XCTAssertFalse(FileManager.default.fileExists(atPath: path(name)), name) }
    }
}

// Issue 27: --region, --scale and --monitor/--list-monitors on --source wayland, against the
// real headless GNOME compositor (HeadlessGNOME), and the letterboxing of a monitor that
// changes size, on synthetic PipeWire buffers.
//
// Catalogue:
// - testRegionRecordsThatPartOfTheMonitor: --region 0,64,30,64 (weston-simple-shm's static white
//   frame over the background) → a 30x64 file whose last lossless frame equals the same crop of
//   a full-monitor recording's (framemd5), and the frame's edge where it is on the monitor.
// - testOddRegionGrowsAndOneOutsideIsRefused: --region 0,0,255,255 → 256x256, said on stderr;
//   --region 1200,700,100,100 on the 1280x720 monitor → exit 2, nothing written.
// - testScaleOnWayland: --scale 640x360 → a 640x360 file, the window's white frame at half its
//   coordinates, the background beside it (ffmpeg's decode).
// - testListMonitorsShowsMutterMonitors: --list-monitors in the session →
//   "wayland:Meta-0 1280x720 MetaVendor [primary]"; --monitor Meta-0 records it.
// - testMonitorReconfiguredMidRecordingEndsWithTheFileKept: the monitor rotated through
//   DisplayConfig 1 s in → Mutter 43 closes the cast (it does not resize the stream): exit 1
//   naming it, the frames so far playable, the file's size unchanged.
// - testLetterboxesAPictureOfAnotherSize: synthetic BGRx and RGBx buffers of 640x480 (with a padded
//   stride) copied into a 1280x720 picture → scaled to 960x720 at x 160, black bars, colours
//   in place; a second copy of that size counted, not announced again; one of the picture's own
//   size copied as is.
// - testFitKeepsTheShapeEvenAndCentred: StreamPictureCopy.fit for portrait, landscape and equal shapes.
import Foundation
import SwiftRecord
internal import CPipeWire
@testable import SwiftRecordWayland
import TestSupport
import XCTest

final class WaylandAreaTests: WaylandTestCase {
    override var commonArguments: [String] { ["--audio", "none"] }

    private func assertColour(_ file: String, x: Int, y: Int, near expected: (Int, Int, Int), tolerance: Int = 24,
                              line: UInt = #line) throws {
        let got = try FF.rgb(file, x: x, y: y, at: 0.9)
        for (a, b) in [(got.0, expected.0), (got.1, expected.1), (got.2, expected.2)] {
            XCTAssertLessThanOrEqual(abs(a - b), tolerance, "pixel (\(x),\(y)) is \(got), expected about \(expected)", line: line)
        }
    }

    static let white = (255, 255, 255), background = (20, 50, 80)

    func testRegionRecordsThatPartOfTheMonitor() throws {
        let desktop = try HeadlessGNOME(movingWindow: true)
        defer { desktop.stop() }
        // weston-simple-shm's window: a white frame at (12, 72), its animation from (32, 92). The
        // full recording's last frame shows it (the window may appear a moment after the
        // client starts); the region is recorded after that and compared with the same crop.
        let full = path("full.mkv"), part = path("part.mkv")
        var r = try record(desktop, ["--source", "wayland", "--frames", "30", "--qp", "0", "--threads", "1", "--no-cursor", "-o", full])
        XCTAssertEqual(r.status, 0, r.stderr)
        let fullFrames = FF.hashes(try FF.framemd5(full, outputArgs: ["-vf", "crop=30:64:0:64"]))
        XCTAssertEqual(fullFrames.count, 30)
        r = try record(desktop, ["--source", "wayland", "--region", "0,64,30,64", "--frames", "30", "--qp", "0", "--threads", "1",
                                 "--no-cursor", "-o", part])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("recording region 0,64,30,64 of monitor"), r.stderr)
        let (stream, _) = try FF.probe(part)
        XCTAssertEqual(int(stream["width"]), 30)
        XCTAssertEqual(int(stream["height"]), 64)
        let partFrames = FF.hashes(try FF.framemd5(part, outputArgs: []))
        XCTAssertEqual(partFrames.count, 30)
        XCTAssertEqual(partFrames.last, fullFrames.last, "the region should be that crop of the monitor, pixel for pixel")
        // The frame's corner (12, 72) of the monitor is (12, 8) of the region.
        try assertColour(part, x: 20, y: 30, near: WaylandAreaTests.white)
        try assertColour(part, x: 4, y: 30, near: WaylandAreaTests.background, tolerance: 40)
        try assertColour(part, x: 20, y: 2, near: WaylandAreaTests.background, tolerance: 40)
    }

    func testOddRegionGrowsAndOneOutsideIsRefused() throws {
        let desktop = try HeadlessGNOME()
        defer { desktop.stop() }
        let odd = path("odd.mp4"), outside = path("outside.mp4")
        var r = try record(desktop, ["--source", "wayland", "--region", "0,0,255,255", "--frames", "3", "-o", odd])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("capturing 0,0,256,256 instead of 0,0,255,255"), r.stderr)
        let (stream, _) = try FF.probe(odd)
        XCTAssertEqual(int(stream["width"]), 256)
        XCTAssertEqual(int(stream["height"]), 256)
        r = try record(desktop, ["--source", "wayland", "--region", "1200,700,100,100", "--frames", "3", "-o", outside])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("region 1200,700,100,100 is not inside the 1280x720 picture"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: outside))
    }

    func testScaleOnWayland() throws {
        let desktop = try HeadlessGNOME(movingWindow: true)
        defer { desktop.stop() }
        let out = path("half.mp4")
        let r = try record(desktop, ["--source", "wayland", "--scale", "640x360", "--frames", "30", "--no-cursor", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let (stream, _) = try FF.probe(out)
        XCTAssertEqual(int(stream["width"]), 640)
        XCTAssertEqual(int(stream["height"]), 360)
        XCTAssertEqual(int(stream["nb_read_frames"]), 30)
        // The frame's top border (y 72–92 of the monitor) at y 36–46, the background below and right.
        try assertColour(out, x: 60, y: 41, near: WaylandAreaTests.white, tolerance: 30)
        try assertColour(out, x: 400, y: 41, near: WaylandAreaTests.background, tolerance: 40)
        try assertColour(out, x: 2, y: 100, near: WaylandAreaTests.background, tolerance: 40)
    }

    func testListMonitorsShowsMutterMonitors() throws {
        let desktop = try HeadlessGNOME()
        defer { desktop.stop() }
        let r = try Proc.run(binary, ["--list-monitors"], environment: desktop.clientEnvironment(), timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.split(separator: "\n").contains("wayland:Meta-0\t1280x720 MetaVendor [primary]"), r.stdout)
        let out = path("meta0.mp4")
        let m = try record(desktop, ["--source", "wayland", "--monitor", "Meta-0", "--frames", "3", "-o", out])
        XCTAssertEqual(m.status, 0, m.stderr)
        XCTAssertTrue(m.stderr.contains("monitor Meta-0 through GNOME's screen cast"), m.stderr)
    }

    func testMonitorReconfiguredMidRecordingEndsWithTheFileKept() throws {
        let desktop = try HeadlessGNOME()
        defer { desktop.stop() }
        let out = path("rotated.mp4"), log = path("rotated.csv")
        let child = try Proc.spawn(binary, ["--source", "wayland", "--duration", "30", "--timing-log", log, "--audio", "none", "-o", out],
                                   environment: desktop.clientEnvironment())
        defer { child.terminate() }
        XCTAssertNotNil(TimingLogFile.waitForFrame(30, in: log, timeout: 30), child.currentStderr())
        let script = PackagePaths.root.appendingPathComponent("Tests/WaylandTests/Helpers/mutter-rotate.py").path
        let rotate = try Proc.run("/usr/bin/python3", [script, "1"], environment: desktop.environment, timeout: 30)
        XCTAssertTrue(rotate.stdout.contains("applied"), rotate.stderr)
        let r = child.wait(timeout: 20)
        XCTAssertFalse(r.timedOut, "the recording should end when the compositor closes the cast")
        XCTAssertEqual(r.status, 1, r.stderr)
        // Whichever is noticed first: the session closed (D-Bus), or its node gone (PipeWire).
        XCTAssertTrue(r.stderr.contains("the compositor closed the screen-cast session")
                      || r.stderr.contains("the compositor, camera or program that made it closed it"), r.stderr)
        let (stream, _) = try FF.probe(out)
        XCTAssertEqual(int(stream["width"]), 1280)
        XCTAssertEqual(int(stream["height"]), 720)
        XCTAssertGreaterThanOrEqual(int(stream["nb_read_frames"]) ?? 0, 30)
        let decode = try Proc.run("ffmpeg", ["-v", "error", "-i", out, "-f", "null", "-"])
        XCTAssertEqual(decode.status, 0)
        XCTAssertEqual(decode.stderr, "")
    }

    private func pixel(_ picture: PixelBuffer, _ x: Int, _ y: Int) -> [UInt8] {
        picture.withReadAccess { planes in
            let p = planes[0].baseAddress.assumingMemoryBound(to: UInt8.self) + y * planes[0].bytesPerRow + x * 4
            return [p[0], p[1], p[2]]
        }
    }

    func testLetterboxesAPictureOfAnotherSize() throws {
        let pool = try PixelBufferPool(width: 1280, height: 720, pixelFormat: .bgra, maximumBufferCount: 4)
        var copier = StreamPictureCopy()
        let size = VideoSize(width: 1280, height: 720)
        // BGRx orange (B 0x20, G 0x80, R 0xF0), 640x480, rows padded to 2624 bytes.
        let bgrx = SyntheticBuffer(width: 640, height: 480, stride: 2624, pixel: [0x20, 0x80, 0xF0, 0xFF])
        let picture = try pool.makePixelBuffer()
        let outcome = copier.copy(bgrx.pw, format: StreamFormat(width: 640, height: 480, pixelFormat: .bgrx), region: nil, into: picture)
        XCTAssertEqual(outcome, .letterboxed(from: VideoSize(width: 640, height: 480)))
        let said = try XCTUnwrap(copier.announcement(after: outcome, recordingSize: size))
        XCTAssertTrue(said.contains("now 640x480 instead of 1280x720") && said.contains("black bars"), said)
        // 4:3 in 16:9: 960x720 from x 160; black bars left and right.
        for (x, y) in [(0, 0), (159, 360), (1120, 360), (1279, 719)] { XCTAssertEqual(pixel(picture, x, y), [0, 0, 0], "(\(x),\(y))") }
        for (x, y) in [(160, 0), (640, 360), (1119, 719)] { XCTAssertEqual(pixel(picture, x, y), [0x20, 0x80, 0xF0], "(\(x),\(y))") }

        // RGBx of the same size: red and blue change places; counted, not announced again.
        let rgbx = SyntheticBuffer(width: 640, height: 480, stride: 2560, pixel: [0xF0, 0x80, 0x20, 0xFF])
        let second = try pool.makePixelBuffer()
        let again = copier.copy(rgbx.pw, format: StreamFormat(width: 640, height: 480, pixelFormat: .rgbx), region: nil, into: second)
        XCTAssertEqual(again, .letterboxed(from: VideoSize(width: 640, height: 480)))
        XCTAssertNil(copier.announcement(after: again, recordingSize: size))
        XCTAssertEqual(copier.letterboxed, 2)
        XCTAssertEqual(pixel(second, 640, 360), [0x20, 0x80, 0xF0])
        XCTAssertEqual(pixel(second, 100, 360), [0, 0, 0])

        // The picture's own size: copied as is, nothing to say.
        let same = SyntheticBuffer(width: 1280, height: 720, stride: 5120, pixel: [1, 2, 3, 0xFF])
        let third = try pool.makePixelBuffer()
        let copied = copier.copy(same.pw, format: StreamFormat(width: 1280, height: 720, pixelFormat: .bgrx), region: nil, into: third)
        XCTAssertEqual(copied, .copied)
        XCTAssertNil(copier.announcement(after: copied, recordingSize: size))
        XCTAssertEqual(pixel(third, 0, 0), [1, 2, 3])
        XCTAssertEqual(pixel(third, 1279, 719), [1, 2, 3])
    }

    func testFitKeepsTheShapeEvenAndCentred() {
        let hd = VideoSize(width: 1280, height: 720)
        XCTAssertEqual(StreamPictureCopy.fit(VideoSize(width: 1920, height: 1080), in: hd), PixelRegion(x: 0, y: 0, width: 1280, height: 720))
        XCTAssertEqual(StreamPictureCopy.fit(VideoSize(width: 720, height: 1280), in: hd), PixelRegion(x: 438, y: 0, width: 404, height: 720))
        XCTAssertEqual(StreamPictureCopy.fit(VideoSize(width: 2560, height: 1080), in: hd), PixelRegion(x: 0, y: 90, width: 1280, height: 540))
        XCTAssertEqual(StreamPictureCopy.fit(VideoSize(width: 640, height: 480), in: hd), PixelRegion(x: 160, y: 0, width: 960, height: 720))
    }
}

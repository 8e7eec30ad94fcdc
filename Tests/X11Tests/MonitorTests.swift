import Foundation
import SwiftRecord
import SwiftRecordX11
import TestSupport
import XCTest

// Catalogue (issue 27, `--monitor NAME` on X11 through RandR 1.5 monitors):
// - testMonitorRecordsThatMonitorAtItsSize: two monitors made with `xrandr --setmonitor` over the left
//   (red) and right (blue) halves of a 1280x720 Xvfb; --monitor right → a 640x720 file, blue in ffmpeg's decode.
// - testUnknownMonitorListsTheMonitorsAndWritesNothing: --monitor NOPE → exit 2, the message names
//   NOPE and lists left and right, no output file.
// - testListMonitorsShowsTheX11Monitors: --list-monitors prints x11:left 640x720+0+0 and x11:right
//   640x720+640+0 (as xrandr --listmonitors does), exit 0.
// - testTabCompletesTheMonitors (issue 43): argument-parser's completion call for --monitor
//   (what the bash, zsh and fish scripts run) offers left and right.
// - testMonitorsThroughTheLibrary: X11Source.monitors(display:) and Area.monitor give the same rectangle.
// - testMonitorWithRegionIsAUsageError: --monitor with --region → usage error (64), nothing written.
// - testWithoutLibXrandrAndLibXdamage: with both unloadable (HiddenLibraries), --list-monitors
//   fails naming libXrandr and its package; the screen is still recorded (30 frames), whole
//   pictures every frame, with a note naming libXdamage.

/// `--monitor NAME` on a private Xvfb whose screen is split into two RandR monitors.
final class MonitorTests: XvfbTestCase {
    static let red = (224, 32, 32), blue = (32, 64, 224)

    override func setUpWithError() throws {
        try XCTSkipUnless(Proc.which("xrandr") != nil, "xrandr is not installed (apt-get install x11-xserver-utils)")
        try super.setUpWithError()
        // The server runs with -noreset: monitors made by a client outlive it (and one made
        // again under the same name is refused), so they are made once per server.
        let made = try Proc.run("xrandr", ["--listmonitors"], environment: server.environment, timeout: 10).stdout
        for (name, geometry) in [("left", "640/169x720/190+0+0"), ("right", "640/169x720/190+640+0")] where !made.contains(" \(name) ") {
            let r = try Proc.run("xrandr", ["--setmonitor", name, geometry, "none"], environment: server.environment, timeout: 10)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        let painter = try XPainter(server)
        painter.fill(x: 0, y: 0, width: 640, height: 720, rgb: 0xE02020)
        painter.fill(x: 640, y: 0, width: 640, height: 720, rgb: 0x2040E0)
        painter.movePointer(x: 8, y: 8)  // out of the way of the pixels checked
    }

    func record(_ args: [String]) throws -> ProcessResult {
        try Proc.run(binary, args + ["--audio", "none"], environment: server.environment, timeout: 60)
    }

    func assertColour(_ file: String, x: Int, y: Int, _ expected: (Int, Int, Int), line: UInt = #line) throws {
        let got = try FF.rgb(file, x: x, y: y, at: 0.3)
        for (a, b) in [(got.0, expected.0), (got.1, expected.1), (got.2, expected.2)] {
            XCTAssertLessThanOrEqual(abs(a - b), 10, "pixel (\(x),\(y)) is \(got), expected \(expected)", line: line)
        }
    }

    func testMonitorRecordsThatMonitorAtItsSize() throws {
        let out = path("right.mp4")
        let r = try record(["--monitor", "right", "--duration", "1", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("monitor right"), r.stderr)
        let s = try FF.probe(out).stream
        XCTAssertEqual(int(s["width"]), 640)
        XCTAssertEqual(int(s["height"]), 720)
        XCTAssertEqual(int(s["nb_read_frames"]), 30)
        try FF.ffmpeg(["-i", out, "-f", "null", "-"])
        // The whole picture is the right half: blue at both ends, no red anywhere sampled.
        for (x, y) in [(5, 5), (320, 360), (634, 714)] { try assertColour(out, x: x, y: y, MonitorTests.blue) }

        let left = path("left.mp4")
        XCTAssertEqual(try record(["--monitor", "left", "--duration", "1", "-o", left]).status, 0)
        try assertColour(left, x: 634, y: 360, MonitorTests.red)
    }

    func testUnknownMonitorListsTheMonitorsAndWritesNothing() throws {
        let out = path("nope.mp4")
        let r = try record(["--monitor", "NOPE", "--duration", "1", "-o", out])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("no monitor 'NOPE'"), r.stderr)
        XCTAssertTrue(r.stderr.contains("left 640x720 at 0,0") && r.stderr.contains("right 640x720 at 640,0"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testListMonitorsShowsTheX11Monitors() throws {
        var env = server.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(dir.path)/no-bus"
        let r = try Proc.run(binary, ["--list-monitors"], environment: env, timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains("x11:left\t640x720+0+0"), r.stdout)
        XCTAssertTrue(lines.contains("x11:right\t640x720+640+0"), r.stdout)
        // The same list as the X server's own client shows.
        let xrandr = try Proc.run("xrandr", ["--listmonitors"], environment: server.environment, timeout: 10).stdout
        XCTAssertTrue(xrandr.contains("left 640/169x720/190+0+0") && xrandr.contains("right 640/169x720/190+640+0"), xrandr)
    }

    func testTabCompletesTheMonitors() throws {
        var env = server.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(dir.path)/no-bus"
        let r = try Proc.run(binary, ["---completion", "record", "--", "--monitor", "2", "0", "swift-record", "--monitor", ""],
                             environment: env, timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        // Every monitor --list-monitors shows (Xvfb's own whole-screen one besides ours).
        XCTAssertTrue(Set(r.stdout.split(separator: "\n").map(String.init)).isSuperset(of: ["left", "right"]), r.stdout)
    }

    func testMonitorsThroughTheLibrary() throws {
        let monitors = try X11Source.monitors(display: server.display)
        let right = try XCTUnwrap(monitors.first { $0.name == "right" }, "\(monitors)")
        XCTAssertEqual(right.area, CaptureRect(x: 640, y: 0, width: 640, height: 720))
        let source = try X11Source(configuration: .init(display: server.display, area: .monitor("right")))
        defer { source.stop() }
        XCTAssertEqual(source.initialCaptureArea, right.area)
        XCTAssertEqual(source.nativeSize, VideoSize(width: 640, height: 720))
    }

    func testMonitorWithRegionIsAUsageError() throws {
        let out = path("both.mp4")
        let r = try record(["--monitor", "left", "--region", "0,0,64,64", "--duration", "1", "-o", out])
        XCTAssertEqual(r.status, 64, r.stderr)
        XCTAssertTrue(r.stderr.contains("--region and --monitor both choose what to record"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testWithoutLibXrandrAndLibXdamage() throws {
        let hidden = try HiddenLibraries(["libXrandr.so.2", "libXdamage.so.1"])
        let listed = try hidden.run(binary, ["--list-monitors"], environment: server.environment, timeout: 60)
        XCTAssertNotEqual(listed.status, 0, listed.stdout)
        XCTAssertTrue(listed.stderr.contains("cannot load libXrandr.so.2") && listed.stderr.contains("libxrandr2"), listed.stderr)
        let out = path("whole.mp4")
        let r = try hidden.run(binary, ["--source", "x11", "--duration", "1", "--audio", "none", "-o", out], environment: server.environment, timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("cannot load libXdamage.so.1") && r.stderr.contains("grabbing the whole picture every frame"), r.stderr)
        XCTAssertEqual(int(try FF.probe(out).stream["nb_read_frames"]), 30)
    }
}

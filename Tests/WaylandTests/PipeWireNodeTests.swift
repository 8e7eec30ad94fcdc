// Issue 40: any PipeWire picture producer as a source (`--source pipewire:NODE`), read through
// the camera's reader. The producer is GStreamer's own: `videotestsrc ! pipewiresink
// mode=provide` publishing a Video/Source node in a private PipeWire (HeadlessGNOME without a
// compositor) beside the tests' camera (swift-record-test-camera). pipewiresink serves one
// reader: every recording gets a producer of its own.
//
// Catalogue:
// - testRecordsAGStreamerProducerAndRefusesUnknownNodes: --source pipewire:nope (neither a
//   camera nor a node) → exit 2, the picture nodes listed (the producer and the camera, name
//   and description), nothing written; --source pipewire: → exit 64; --source
//   pipewire:sr-gst for 2 s into an MP4 and an HLS playlist at once → exit 0, 320x240,
//   60 frames, 2.0 s (ffprobe), SMPTE bars in their colours at 1 s (ffmpeg, rgb24: white,
//   yellow, cyan, green, magenta, red, blue), the playlist's segments decoding.
// - testProducerGoingAwayFinishesTheFile: the producer SIGKILLed once 30 frames are in a 10-s
//   recording → exit 1 within 10 s saying the node went away, the file finished (ffprobe: at
//   least 30 frames, its duration their count at 30 fps).
import Foundation
import SwiftRecord
import TestSupport
import XCTest

final class PipeWireNodeTests: CameraTestCase {
    /// Starts GStreamer's test picture (`pattern`) as the Video/Source node `name` of `desktop`'s
    /// PipeWire: 320x240 BGRx at 30 fps, paced by the clock; returns once the node is listed.
    private func startProducer(_ desktop: HeadlessGNOME, name: String = "sr-gst", pattern: String = "smpte") throws {
        guard Proc.which("gst-launch-1.0") != nil else { throw XCTSkip("gst-launch-1.0 is not installed (scripts/install-deps.sh)") }
        try desktop.start("gst-launch-1.0", ["-q", "videotestsrc", "is-live=true", "pattern=\(pattern)", "!",
                                             "video/x-raw,width=320,height=240,framerate=30/1,format=BGRx", "!",
                                             "pipewiresink", "mode=provide", "async=false",
                                             "stream-properties=p,media.class=Video/Source,node.name=\(name),node.description=GStreamer_test"])
        try desktop.waitFor("GStreamer's node \(name)") {
            let r = try? Proc.run("pw-cli", ["ls", "Node"], environment: desktop.environment, timeout: 10)
            return r?.stdout.contains("node.name = \"\(name)\"") ?? false
        }
    }

    func testRecordsAGStreamerProducerAndRefusesUnknownNodes() throws {
        let desktop = try pipeWireWithCamera()
        defer { desktop.stop() }
        try startProducer(desktop)

        let unknown = try record(desktop, ["--source", "pipewire:nope", "--duration", "1", "-o", path("nope.mp4")])
        XCTAssertEqual(unknown.status, 2, unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("no PipeWire picture node 'nope'"), unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("sr-gst (GStreamer_test, Video/Source"), unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("sr-test-cam (Test_camera, Video/Source"), unknown.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("nope.mp4")))
        let empty = try record(desktop, ["--source", "pipewire:", "-o", path("empty.mp4")])
        XCTAssertEqual(empty.status, 64, empty.stderr)
        XCTAssertTrue(empty.stderr.contains("--source pipewire needs a node"), empty.stderr)

        let out = path("gst.mp4"), playlist = path("live/gst.m3u8")
        try FileManager.default.createDirectory(atPath: path("live"), withIntermediateDirectories: true)
        let r = try record(desktop, ["--source", "pipewire:sr-gst", "--duration", "2", "-o", out, "-o", playlist])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("recording PipeWire node sr-gst (GStreamer_test) at 320x240 30 fps, BGRX"), r.stderr)
        let (stream, format) = try FF.probe(out)
        XCTAssertEqual(int(stream["width"]), 320)
        XCTAssertEqual(int(stream["height"]), 240)
        XCTAssertEqual(int(stream["nb_read_frames"]), 60)
        XCTAssertEqual(Double(format["duration"] as? String ?? "") ?? 0, 2.0, accuracy: 0.05)
        // The seven bars of the SMPTE pattern's top, left to right.
        let bars = [(255, 255, 255), (255, 255, 0), (0, 255, 255), (0, 255, 0), (255, 0, 255), (255, 0, 0), (0, 0, 255)]
        for (i, bar) in bars.enumerated() {
            let x = i * 320 / 7 + 320 / 14
            let rgb = try FF.rgb(out, x: x, y: 60, at: 1.0)
            for (got, want) in [(rgb.0, bar.0), (rgb.1, bar.1), (rgb.2, bar.2)] {
                XCTAssertLessThanOrEqual(abs(got - want), 40, "bar \(i) at x \(x): \(rgb), expected \(bar)")
            }
        }
        let hls = try Proc.run("ffmpeg", ["-v", "error", "-i", playlist, "-f", "null", "-"], timeout: 60)
        XCTAssertEqual(hls.status, 0, hls.stderr)
        XCTAssertGreaterThanOrEqual(int(try FF.probe(playlist).stream["nb_read_frames"]) ?? 0, 50, "the live copy has the pictures")
    }

    func testProducerGoingAwayFinishesTheFile() throws {
        let desktop = try HeadlessGNOME(compositor: false)
        defer { desktop.stop() }
        try startProducer(desktop, pattern: "ball")
        let out = path("gone.mp4"), log = path("gone.csv")
        let child = try Proc.spawn(binary, ["--source", "pipewire:sr-gst", "--duration", "10", "--timing-log", log, "-o", out] + commonArguments,
                                   environment: desktop.clientEnvironment())
        defer { child.terminate() }
        XCTAssertNotNil(TimingLogFile.waitForFrame(30, in: log, timeout: 30), child.currentStderr())
        desktop.kill9("gst-launch-1.0")
        let killed = Date()
        let r = child.wait(timeout: 30)
        XCTAssertLessThan(Date().timeIntervalSince(killed), 7, "the recording ends when the node goes away, not at --duration")
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("PipeWire node 'sr-gst' stopped sending") && r.stderr.contains("went away"), r.stderr)
        let (stream, format) = try FF.probe(out)
        let frames = int(stream["nb_read_frames"]) ?? 0
        XCTAssertGreaterThanOrEqual(frames, 30, r.stderr)
        XCTAssertEqual(Double(format["duration"] as? String ?? "") ?? 0, Double(frames) / 30, accuracy: 0.1, "a finished file, as long as its frames")
    }
}

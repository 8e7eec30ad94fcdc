// Issue 37: a camera that sends nothing (the tests' camera SIGSTOPped), one read many times in
// a row, and one recorded beside the screen into a replay clip.
//
// Catalogue:
// - testTwentyRecordingsInARowLeaveTheCameraReadable (item 4): 20 one-second recordings of
//   the camera in a row → each exit 0 with 30 frames; GStreamer's pipewiresrc then reads 20
//   buffers from it (a recording had kept one of the camera's buffers at its end: after 8
//   the camera had none left and sent nothing to anyone).
import Foundation
import SwiftRecord
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class CameraFaultTests: CameraTestCase {
    /// `desktop`'s camera stopped (SIGSTOP) until the returned closure continues it, once it
    /// has been recorded (a camera stopped before any reader agreed on a format with it
    /// agrees on none: a different error, told apart at start-up).
    private func stopCamera(_ desktop: HeadlessGNOME) throws -> () -> Void {
        let warmUp = try record(desktop, ["--source", "camera:sr-test-cam", "--duration", "1", "-q", "-o", path("warm-up.mp4")])
        XCTAssertEqual(warmUp.status, 0, warmUp.stderr)
        let camera = try XCTUnwrap(desktop.process(CameraTestCase.camera))
        camera.signal(SIGSTOP)
        return { camera.signal(SIGCONT) }
    }

    /// The flags of the first packet of each video stream of `file` ("K_" for a key frame).
    private func firstVideoPacketFlags(_ file: String, streams: Int) throws -> [String] {
        try (0..<streams).map { v in
            let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v:\(v)", "-show_entries", "packet=flags", "-of", "csv=p=0", file])
            return String(r.stdout.split(separator: "\n").first ?? "")
        }
    }

    /// The frame counts of `file`'s video streams (ffprobe, decoded).
    private func videoFrameCounts(_ file: String) throws -> [Int] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries", "stream=nb_read_frames",
                                         "-of", "csv=p=0", file])
        return r.stdout.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    private func decodesSilently(_ file: String) throws {
        let r = try Proc.run("ffmpeg", ["-v", "warning", "-i", file, "-map", "0", "-f", "null", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "", "\(file) decodes without a warning")
    }

    func testTwentyRecordingsInARowLeaveTheCameraReadable() throws {
        guard Proc.which("gst-launch-1.0") != nil else { throw XCTSkip("gst-launch-1.0 is not installed (scripts/install-deps.sh)") }
        let desktop = try pipeWireWithCamera()
        defer { desktop.stop() }
        for run in 1...20 {
            let out = path("run\(run).mp4")
            let r = try record(desktop, ["--source", "camera:sr-test-cam", "--duration", "1", "-q", "-o", out])
            XCTAssertEqual(r.status, 0, "recording \(run): \(r.stderr)")
            guard r.status == 0 else { break }
            XCTAssertEqual(try videoFrameCounts(out), [30], "recording \(run)")
            try FileManager.default.removeItem(atPath: out)
        }
        let gst = try Proc.run("gst-launch-1.0", ["-q", "pipewiresrc", "target-object=sr-test-cam", "num-buffers=20", "!", "videoconvert", "!", "fakesink"],
                               environment: desktop.clientEnvironment(), timeout: 30)
        XCTAssertEqual(gst.status, 0, "GStreamer reads the camera after 20 recordings: \(gst.stderr)")
    }
}

import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `--replay-buffer`: SIGUSR2 saves the last N seconds while the recording goes on.
final class ReplayBufferTests: CLITestCase {
    /// Two saves during one live recording: each clip starts on a key frame, lasts between
    /// N and N + one key-frame interval, holds exactly the recording's pictures of that
    /// stretch (decoded), with its sound alongside; the recording itself is whole.
    func testSavesTheLastSecondsWhileRecording() throws {
        let output = dir.appendingPathComponent("rec.mp4").path, log = dir.appendingPathComponent("timing.csv").path
        let child = try spawnTracked(["--source", "synthetic", "--realtime", "--size", "640x360", "--fps", "30", "--duration", "9",
                                      "--audio", "synthetic", "--replay-buffer", "3s", "--quiet", "-o", output, "--timing-log", log])
        for frame: Int64 in [150, 210] {
            XCTAssertNotNil(TimingLogFile.waitForFrame(frame, in: log, timeout: 30))
            child.signal(SIGUSR2)
        }
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr.components(separatedBy: "saved the last").count - 1, 2, r.stderr)
        let clips = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("rec-replay-") }.sorted()
        XCTAssertEqual(clips.count, 2, "\(clips)")
        let recording = try FF.hashes(FF.framemd5(output, outputArgs: ["-map", "0:v"]))
        XCTAssertEqual(recording.count, 270)
        for name in clips {
            let clip = dir.appendingPathComponent(name).path
            let keys = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=key_frame",
                                                "-of", "csv=p=0", clip]).stdout.split(separator: "\n").map { $0.prefix(1) }
            XCTAssertEqual(keys.first, "1", "\(name) must start on a key frame")
            // 3 s to 3 s + one key-frame interval (2 s), minus the encoder's look-ahead at the end.
            XCTAssertGreaterThanOrEqual(Double(keys.count) / 30, 2.5, name)
            XCTAssertLessThanOrEqual(Double(keys.count) / 30, 5.0, name)
            let pictures = try FF.hashes(FF.framemd5(clip, outputArgs: ["-map", "0:v"]))
            let start = try XCTUnwrap(recording.firstIndex(of: pictures[0]))
            XCTAssertEqual(Array(recording[start..<min(recording.count, start + pictures.count)]), pictures, "\(name): other pictures than the recording's")
            let streams = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,start_time,duration",
                                                   "-of", "csv=p=0", clip]).stdout.split(separator: "\n").map { $0.split(separator: ",") }
            XCTAssertEqual(streams.map { String($0[0]) }, ["video", "audio"])
            guard streams.count == 2, streams.allSatisfy({ $0.count == 3 }) else { continue }
            let audioStart = try XCTUnwrap(Double(streams[1][1])), audioLength = try XCTUnwrap(Double(streams[1][2]))
            let videoLength = try XCTUnwrap(Double(streams[0][2]))
            XCTAssertLessThan(audioStart, 0.025, "\(name): the sound must start with the pictures")
            XCTAssertEqual(audioLength + audioStart, videoLength, accuracy: 0.05, "\(name): the sound must end with the pictures")
        }
    }
}

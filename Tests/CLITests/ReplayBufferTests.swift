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
        // 9 s at 30 fps: every tick written (captured or repeated) unless a busy machine left
        // one out, which the timing log says (a frame dropped at a full queue, a gap).
        let rows = TimingLogFile.rows(log)
        let written = rows.filter { $0.reason == "captured" || $0.reason == "repeated" }.count
        XCTAssertEqual(recording.count, written, "the file holds the frames the timing log says were written")
        XCTAssertGreaterThanOrEqual(written, 265, "\(rows.filter { $0.reason != "captured" && $0.reason != "repeated" }.map(\.reason))")
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

    /// A clip saved while paused ends at the pause: the encoder's look-ahead (about 0.7 s
    /// with libx264) is written out when the recording pauses, so the clip's last picture is
    /// the last one before the pause (two saves gave identical clips 0.7 s short before).
    /// The recording goes on after the resume with a key frame, whole and decodable.
    func testAClipSavedWhilePausedEndsAtThePause() throws {
        let output = dir.appendingPathComponent("rec.mp4").path, log = dir.appendingPathComponent("timing.csv").path
        let child = try spawnTracked(["--source", "synthetic", "--realtime", "--size", "640x360", "--fps", "30", "--duration", "5",
                                      "--audio", "synthetic", "--replay-buffer", "10s", "--quiet", "-o", output, "--timing-log", log])
        XCTAssertNotNil(TimingLogFile.waitForFrame(60, in: log, timeout: 30))
        child.signal(SIGUSR1)
        let paused = try XCTUnwrap(TimingLogFile.waitForFrame(0, in: log, reasons: ["paused"], timeout: 30))
        let lastBefore = try XCTUnwrap(paused.frame) - 1
        child.signal(SIGUSR2)
        // The save runs on a thread of its own: resume only once its file is there.
        let deadline = Date().addingTimeInterval(30)
        var clips: [String] = []
        while clips.isEmpty, Date() < deadline {
            usleep(20_000)
            clips = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [])
                .filter { $0.hasPrefix("rec-replay-") && $0.hasSuffix(".mp4") && !$0.contains(".partial-") }
        }
        child.signal(SIGUSR1)
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(clips.count, 1, "\(clips)")
        let clip = dir.appendingPathComponent(try XCTUnwrap(clips.first)).path

        let recording = try FF.hashes(FF.framemd5(output, outputArgs: ["-map", "0:v"]))
        XCTAssertEqual(recording.count, 150)
        let pictures = try FF.hashes(FF.framemd5(clip, outputArgs: ["-map", "0:v"]))
        XCTAssertEqual(pictures.count, Int(lastBefore) + 1, "the clip holds every frame from the start (the buffer is 10 s) to the pause")
        XCTAssertEqual(pictures, Array(recording.prefix(pictures.count)), "the clip's pictures are the recording's up to the pause")
        XCTAssertEqual(try Proc.run("ffmpeg", ["-v", "error", "-i", clip, "-f", "null", "-"]).stderr, "")
        // The sound ends with the pictures, but for the sound encoder's own frame and the last
        // buffer captured before the pause (it stays in the encoder until the resume).
        let streams = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,duration",
                                               "-of", "csv=p=0", clip]).stdout.split(separator: "\n").map { $0.split(separator: ",") }
        XCTAssertEqual(streams.map { String($0[0]) }, ["video", "audio"])
        if streams.count == 2, let v = Double(streams[0][1]), let a = Double(streams[1][1]) {
            XCTAssertEqual(v, Double(lastBefore + 1) / 30, accuracy: 0.001)
            XCTAssertEqual(a, v, accuracy: 0.25, "the clip's sound lasts about as long as its pictures")
        }
        // The recording: decodes without a complaint, a key frame where it resumed.
        XCTAssertEqual(try Proc.run("ffmpeg", ["-v", "error", "-i", output, "-f", "null", "-"]).stderr, "")
        let keys = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=key_frame",
                                            "-of", "csv=p=0", output]).stdout.split(separator: "\n").map { $0.prefix(1) }
        XCTAssertEqual(keys.count, 150)
        if keys.count > Int(lastBefore) + 1 { XCTAssertEqual(keys[Int(lastBefore) + 1], "1", "a key frame where the recording resumed") }
    }
}

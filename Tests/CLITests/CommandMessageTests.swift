import Foundation
import TestSupport
import XCTest

/// Round 3 ("Nothing lost"), messages and values the command line accepted and then failed on:
/// - testNegativeValuesSayNegative: --fps/--bitrate/--keyint/--frames/--threads/--duration -5 say the value is negative and what is expected (not "Missing value").
/// - testLosslessH264UsesHigh444: --qp 0 / --crf 0 record lossless H.264 in High 4:4:4 Predictive (x264 refused "high" before).
/// - testScaleBeyondThePictureLimitIsRefusedUpfront: --scale 16384x16384 names libavcodec's picture-size limit, not a bare avcodec_open2 error; nothing left.
/// - testOutputUnderARegularFile: -o file/x.mp4 says file is not a directory.
/// - testHLSSegmentPathThatIsADirectory: a directory where a segment goes is named, before anything is recorded.
/// - testTimingLogIntoAPipe: --timing-log /dev/stdout on a pipe is refused as a FIFO (regular files only), not "No such file".
/// - testConvertAudioThatIsADirectory: convert --audio DIR says it is a directory and an audio file was expected.
/// - testConvertAudioTooShortForOneFrame: a 10-byte PCM file is refused (too short for one frame), not dropped silently.
/// - testSourceYUVAndAudioWAVWork: --source yuv:FILE with --size and --audio wav:FILE record both tracks; bare names say how to give the file.
/// - testRepairIntoAnotherContainerIsExplained: repair -o x.webm of an MP4 says the container must stay .mp4.
/// - testSummaryAudioIsTheTrackInTheFile: the summary's "audio N s" is the audio track's length in the file (ffprobe).
final class CommandMessageTests: CLITestCase {

    var out: String { dir.appendingPathComponent("out.mp4").path }

    /// Runs swift-record and asserts a refusal: non-zero, no crash, each of `says` in the message.
    @discardableResult
    func refuse(_ args: [String], says: [String], saysNot: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        let r = try Proc.run(binary, args, timeout: 60)
        XCTAssertFalse(r.timedOut, "\(args): hung", file: file, line: line)
        XCTAssertNotEqual(r.status, 0, "\(args) should fail", file: file, line: line)
        XCTAssertLessThan(r.status, 128, "\(args): crashed: \(r.stderr)", file: file, line: line)
        for s in says { XCTAssertTrue(r.stderr.contains(s), "\(args): '\(s)' missing from: \(r.stderr)", file: file, line: line) }
        for s in saysNot { XCTAssertFalse(r.stderr.contains(s), "\(args): '\(s)' in: \(r.stderr)", file: file, line: line) }
        return r
    }

    func testNegativeValuesSayNegative() throws {
        for option in ["--fps", "--bitrate", "--keyint", "--frames", "--threads", "--duration"] {
            try refuse(["--source", "synthetic", option, "-5", "-o", out], says: [option, "negative", "expected"], saysNot: ["Missing value"])
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), option)
        }
        // Attached with '=' it was always the value; it now says the same.
        try refuse(["--source", "synthetic", "--fps=-2.5", "-o", out], says: ["negative", "expected"])
    }

    func testLosslessH264UsesHigh444() throws {
        for rate in [["--qp", "0"], ["--crf", "0"]] {
            try? FileManager.default.removeItem(atPath: out)
            let r = try Proc.run(binary, ["--source", "synthetic", "--size", "160x96", "--frames", "5", "--preset", "ultrafast", "--quiet"] + rate + ["-o", out], timeout: 60)
            XCTAssertEqual(r.status, 0, "\(rate): \(r.stderr)")
            let stream = try FF.probe(out).stream
            XCTAssertEqual(stream["profile"] as? String, "High 4:4:4 Predictive", "\(rate)")
            XCTAssertEqual(int(stream["nb_read_frames"]), 5, "\(rate)")
            let decode = try Proc.run("ffmpeg", ["-v", "error", "-i", out, "-f", "null", "-"])
            XCTAssertTrue(decode.succeeded && decode.stderr.isEmpty, decode.stderr)
        }
    }

    func testScaleBeyondThePictureLimitIsRefusedUpfront() throws {
        let r = try refuse(["--source", "synthetic", "--frames", "2", "--scale", "16384x16384", "-o", out],
                           says: ["16384x16384", "picture-size limit", "16128"], saysNot: ["avcodec_open2"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], "nothing left behind")
    }

    func testOutputUnderARegularFile() throws {
        let file = dir.appendingPathComponent("file").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        try refuse(["--source", "synthetic", "--frames", "2", "-o", file + "/x.mp4"], says: ["not a directory"], saysNot: ["does not exist"])
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), "x")
    }

    func testHLSSegmentPathThatIsADirectory() throws {
        let segment = dir.appendingPathComponent("live-0.ts").path
        try FileManager.default.createDirectory(atPath: segment, withIntermediateDirectories: false)
        let playlist = dir.appendingPathComponent("live.m3u8").path
        try refuse(["--source", "synthetic", "--frames", "90", "-o", out, "-o", playlist],
                   says: [segment, "a directory", "regular files"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out), "refused before recording")
        XCTAssertFalse(FileManager.default.fileExists(atPath: playlist))
    }

    func testTimingLogIntoAPipe() throws {
        let script = "set -o pipefail; '\(binary)' --source synthetic --frames 3 --quiet --timing-log /dev/stdout -o '\(out)' | cat"
        let r = try Proc.run("bash", ["-c", script], timeout: 60)
        XCTAssertNotEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("/dev/stdout") && r.stderr.contains("FIFO") && r.stderr.contains("regular files"), r.stderr)
        XCTAssertFalse(r.stderr.contains("No such file"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testConvertAudioThatIsADirectory() throws {
        let raw = dir.appendingPathComponent("in.yuv").path
        try Data(repeating: 128, count: 64 * 48 * 3 / 2).write(to: URL(fileURLWithPath: raw))
        try refuse(["convert", raw, "--size", "64x48", "--audio", dir.path, "-o", out], says: ["is a directory", "audio file"], saysNot: ["raw video"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testConvertAudioTooShortForOneFrame() throws {
        let raw = dir.appendingPathComponent("in.yuv").path
        try Data(repeating: 128, count: 64 * 48 * 3 / 2 * 10).write(to: URL(fileURLWithPath: raw))
        let pcm = dir.appendingPathComponent("short.raw").path
        try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: pcm))
        try refuse(["convert", raw, "--size", "64x48", "--audio", pcm, "-o", out], says: ["short.raw", "too short", "1024"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        // One AAC frame's worth (1024 stereo s16 samples) is enough: the file gets the track.
        try Data(repeating: 1, count: 1024 * 4).write(to: URL(fileURLWithPath: pcm))
        let r = try Proc.run(binary, ["convert", raw, "--size", "64x48", "--fps", "25", "--audio", pcm, "--quiet", "-o", out], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let probe = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", out])
        XCTAssertEqual(probe.stdout.split(separator: "\n").sorted(), ["audio", "video"], probe.stdout)
    }

    func testSourceYUVAndAudioWAVWork() throws {
        let raw = dir.appendingPathComponent("clip.yuv").path
        try FF.ffmpeg(["-v", "error", "-f", "lavfi", "-i", "testsrc=s=96x64:r=30:d=2", "-pix_fmt", "yuv420p", "-f", "rawvideo", raw])
        let wav = dir.appendingPathComponent("tone.wav").path
        try FF.ffmpeg(["-v", "error", "-f", "lavfi", "-i", "sine=d=2:sample_rate=48000", "-ac", "2", wav])
        let r = try Proc.run(binary, ["--source", "yuv:" + raw, "--size", "96x64", "--fps", "30", "--audio", "wav:" + wav, "--threads", "1", "-o", out], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(int(try FF.probe(out).stream["nb_read_frames"]), 60)
        let a = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration", "-of", "csv=p=0", out])
        XCTAssertEqual(Double(a.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, 2.0, accuracy: 0.03, a.stdout)
        // Bare names say how to give the file.
        try FileManager.default.removeItem(atPath: out)
        try refuse(["--source", "yuv", "-o", out], says: ["yuv:FILE"])
        try refuse(["--source", "synthetic", "--audio", "wav", "--frames", "3", "-o", out], says: ["wav:PATH"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testRepairIntoAnotherContainerIsExplained() throws {
        let r = try Proc.run(binary, ["--source", "synthetic", "--size", "160x96", "--frames", "10", "--quiet", "-o", out], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let webm = dir.appendingPathComponent("x.webm").path
        try refuse(["repair", out, "-o", webm], says: ["container", ".mp4"], saysNot: ["Invalid argument"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: webm))
    }

    func testSummaryAudioIsTheTrackInTheFile() throws {
        // A 1 kHz WAV is read in chunks of 480 ms: more sound is captured than the file keeps.
        let wav = dir.appendingPathComponent("low.wav").path
        try FF.ffmpeg(["-v", "error", "-f", "lavfi", "-i", "sine=d=3:sample_rate=1000", "-ac", "1", wav])
        let r = try Proc.run(binary, ["--source", "synthetic", "--size", "160x96", "--fps", "10", "--frames", "1", "--audio", "wav:" + wav, "-o", out], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let a = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration", "-of", "csv=p=0", out])
        let inFile = try XCTUnwrap(Double(a.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), a.stdout)
        XCTAssertTrue(r.stderr.contains(String(format: "audio %.1f s", inFile)), "the file's audio track lasts \(inFile) s: \(r.stderr)")
    }
}

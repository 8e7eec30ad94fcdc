import Foundation
import TestSupport
import XCTest

/// `convert in.yuv --audio in.wav`: the sound file beside the pictures, sample-exact,
/// cut where the pictures end; bad sound files refused before any output exists.
final class AudioConvertTests: CLITestCase {
    /// 90 frames of 320x240 yuv420p (a grey ramp per frame).
    private func writeVideo(frames: Int = 90) throws -> String {
        let path = dir.appendingPathComponent("in.yuv").path
        var data = Data(capacity: frames * 320 * 240 * 3 / 2)
        for n in 0..<frames {
            data.append(contentsOf: [UInt8](repeating: UInt8(16 + n % 200), count: 320 * 240))
            data.append(contentsOf: [UInt8](repeating: 128, count: 320 * 240 / 2))
        }
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A quiet 440 Hz tone with 2-ms clicks at `clicks` seconds, 16-bit, as WAV (or raw s16le).
    private func writeSound(_ name: String, seconds: Double, rate: Int, channels: Int, clicks: [Double], wav: Bool = true) throws -> String {
        let frames = Int(seconds * Double(rate))
        var samples = [Int16](repeating: 0, count: frames * channels)
        for i in 0..<frames {
            let t = Double(i) / Double(rate)
            var v = 0.1 * sin(2 * .pi * 440 * t)
            if let c = clicks.first(where: { t >= $0 && t < $0 + 0.002 }) { v = 0.9 * sin(2 * .pi * 3000 * (t - c)) }
            for ch in 0..<channels { samples[i * channels + ch] = Int16(v * 32_767) }
        }
        var data = Data()
        if wav {
            func le<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
            let bytes = UInt32(samples.count * 2)
            data.append(contentsOf: Array("RIFF".utf8)); le(36 + bytes); data.append(contentsOf: Array("WAVEfmt ".utf8))
            le(UInt32(16)); le(UInt16(1)); le(UInt16(channels)); le(UInt32(rate)); le(UInt32(rate * channels * 2))
            le(UInt16(channels * 2)); le(UInt16(16)); data.append(contentsOf: Array("data".utf8)); le(bytes)
        }
        samples.withUnsafeBytes { data.append(contentsOf: $0) }
        let path = dir.appendingPathComponent(name).path
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A 4-second WAV at 44.1 kHz beside 3 seconds of pictures: AAC at 44.1 kHz stereo,
    /// exactly as long as the video, every click within 1 ms of where it was in the file.
    func testWAVBesideRawVideoIsSampleExactAndCutAtTheLastPicture() throws {
        let video = try writeVideo()
        let sound = try writeSound("in.wav", seconds: 4, rate: 44_100, channels: 2, clicks: [0.5, 1.25, 2.9])
        let out = dir.appendingPathComponent("out.mp4").path
        let r = try Proc.run(binary, ["convert", video, "--size", "320x240", "--fps", "30", "--audio", sound, "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("aac 44100 Hz stereo") && r.stderr.contains("audio 3.000 s"), r.stderr)
        let audio = try AudioCheck.probe(out)
        XCTAssertEqual(audio["codec_name"] as? String, "aac")
        XCTAssertEqual(int(audio["sample_rate"]), 44_100)
        XCTAssertEqual(int(audio["channels"]), 2)
        XCTAssertTrue(try AudioCheck.isMP4A402(out))
        let (pcm, start) = try AudioCheck.decodeTimed(out, rate: 44_100)
        XCTAssertEqual(start, 0, accuracy: 0.0001, "the first sample is not cut")
        XCTAssertEqual(Double(pcm.count) / 44_100, 3.0, accuracy: 1024.0 / 44_100)
        let clicks = AudioCheck.clickOnsets(pcm, rate: 44_100).map { $0 + start }
        XCTAssertEqual(clicks.count, 3, "clicks at \(clicks)")
        for (found, expected) in zip(clicks, [0.5, 1.25, 2.9]) {
            XCTAssertEqual(found, expected, accuracy: 0.001, "the click at \(expected) s came out at \(found) s")
        }
    }

    /// Raw PCM (mono, 48 kHz) shorter than the pictures, as Opus in WebM: said so, kept whole.
    func testShorterRawPCMAsOpusInWebMIsNoted() throws {
        let video = try writeVideo()
        let sound = try writeSound("in.pcm", seconds: 2, rate: 48_000, channels: 1, clicks: [1.0], wav: false)
        let out = dir.appendingPathComponent("out.webm").path
        let r = try Proc.run(binary, ["convert", video, "--size", "320x240", "--fps", "30", "--codec", "vp9", "--audio", sound,
                                      "--audio-channels", "1", "--audio-bitrate", "64k", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("the sound ends at 2.000 s"), r.stderr)
        let audio = try AudioCheck.probe(out)
        XCTAssertEqual(audio["codec_name"] as? String, "opus")
        XCTAssertEqual(int(audio["channels"]), 1)
        // ffmpeg decodes on its timeline (the file's times less the earliest, here Opus's
        // pre-skip before 0): back to the file's times, where the pictures start at 0.
        let (pcm, start) = try AudioCheck.decodeTimed(out)
        let formatStart = try XCTUnwrap(double(try Proc.run("ffprobe", ["-v", "error", "-show_entries", "format=start_time", "-of", "csv=p=0", out])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertEqual(Double(pcm.count) / 48_000, 2.0, accuracy: 0.025)
        let clicks = AudioCheck.clickOnsets(pcm, rate: 48_000).map { $0 + start + formatStart }
        XCTAssertEqual(clicks.first ?? 0, 1.0, accuracy: 0.001, "clicks at \(clicks)")
    }

    /// The video input as the sound, a file that is not a WAV, a codec the container cannot
    /// carry, sound options without --audio: refused before an output exists.
    func testBadSoundIsRefusedBeforeAnyOutput() throws {
        let video = try writeVideo(frames: 5)
        let notWAV = dir.appendingPathComponent("bad.wav").path
        try Data(repeating: 7, count: 100).write(to: URL(fileURLWithPath: notWAV))
        let sound = try writeSound("ok.wav", seconds: 1, rate: 48_000, channels: 2, clicks: [])
        let cases: [([String], String)] = [
            (["--audio", video], "is the video input too"),
            (["--audio", notWAV], "not a WAV file"),
            (["--audio", dir.appendingPathComponent("none.wav").path], "none.wav"),
            (["--audio", sound, "--audio-codec", "opus", "-o", dir.appendingPathComponent("x.mov").path], "cannot carry opus"),
            (["--audio-codec", "opus"], "need --audio"),
            (["--audio", sound, "--audio-rate", "5"], "--audio-rate 5"),
        ]
        for (extra, expected) in cases {
            let out = extra.contains("-o") ? [] : ["-o", dir.appendingPathComponent("x.mp4").path]
            let r = try Proc.run(binary, ["convert", video, "--size", "320x240"] + extra + out)
            XCTAssertNotEqual(r.status, 0, "\(extra)")
            XCTAssertTrue(r.stderr.contains(expected), "\(extra): \(r.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.mp4").path), "\(extra)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.mov").path), "\(extra)")
        }
    }
}

import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The command line with sound from PulseAudio: a private server per test (one test takes
/// its sink away), the recorder pointed at it through `PULSE_SERVER` in its environment
/// only, a 1 kHz tone played into the null sink with `pacat`, checked with ffprobe/ffmpeg.
final class PulseRecordingTests: PulseCLITestCase {
    /// Plays the tone and waits a second: an idle null sink sleeps in long blocks, so a
    /// monitor stream opened while it wakes gets its first sound up to 0.7 s late.
    private func playTone(seconds: Double) throws {
        let tone = dir.appendingPathComponent("tone.raw").path
        try writeTone(to: tone, seconds: seconds)
        track(try server.play(tone))
        Thread.sleep(forTimeInterval: 1)
    }

    /// `--audio default` with a server reachable and live pictures: the default sink's
    /// monitor, announced by its real name; AAC 48 kHz stereo holding the tone, as long as
    /// the video.
    func testDefaultAudioIsTheDefaultSinksMonitorWhenAServerAnswers() throws {
        try playTone(seconds: 10)
        let out = dir.appendingPathComponent("default.mp4").path, stats = dir.appendingPathComponent("s.json").path
        let r = try spawn(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "4",
                           "--stats-json", stats, "-o", out]).wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("audio:") && r.stderr.contains("test.monitor"), r.stderr)
        let audio = try AudioCheck.probe(out)
        XCTAssertEqual(audio["codec_name"] as? String, "aac")
        XCTAssertEqual(Int("\(audio["sample_rate"] ?? "")"), 48_000)
        XCTAssertEqual(Int("\(audio["channels"] ?? "")"), 2)
        let pcm = try AudioCheck.decode(out)
        let frames = try XCTUnwrap(Int("\(try FF.probe(out).stream["nb_read_frames"] ?? "")"))
        XCTAssertEqual(Double(pcm.count) / 48_000, Double(frames) / 30, accuracy: 1024.0 / 48_000 + 0.001)
        // The tone (RMS 0.35 at full scale one half) from the middle second, at 1 kHz.
        let middle = pcm[(pcm.count / 2 - 24_000)..<(pcm.count / 2 + 24_000)]
        XCTAssertGreaterThan(AudioCheck.rms(middle), 0.25)
        var crossings = 0
        for (x, y) in zip(middle, middle.dropFirst()) where (x < 0) != (y < 0) { crossings += 1 }
        XCTAssertEqual(Double(crossings) / 2, 1000, accuracy: 20, "zero crossings in the middle second")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        let audioStats = try XCTUnwrap(json?["audio"] as? [String: Any])
        XCTAssertNil(audioStats["endedEarly"], "\(audioStats)")
    }

    func testListAudioDevicesShowsTheMonitorAsDefault() throws {
        let r = try spawn(["--list-audio-devices"]).wait(timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        let line = r.stdout.split(separator: "\n").first { $0.hasPrefix("pulse:test.monitor") }
        XCTAssertNotNil(line, r.stdout)
        XCTAssertTrue(line?.contains("(monitor)") == true && line?.contains("[default]") == true, r.stdout)
    }

    func testAnUnknownDeviceIsRefusedBeforeRecording() throws {
        let out = dir.appendingPathComponent("none.mp4").path
        let r = try spawn(["--source", "synthetic", "--realtime", "--duration", "2", "--audio", "pulse:nosuch", "-o", out]).wait(timeout: 30)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("nosuch"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    /// The sink goes away two seconds in: the audio ends there, said so, its track is
    /// filled with silence and the video goes on to the end; the file is complete (exit 0).
    func testLosingTheDeviceEndsTheAudioAndTheVideoGoesOn() throws {
        try playTone(seconds: 10)
        let out = dir.appendingPathComponent("loss.mp4").path, log = dir.appendingPathComponent("loss.csv").path
        let child = try spawn(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "5",
                               "--audio", "pulse:test.monitor", "--timing-log", log, "-o", out])
        XCTAssertNotNil(TimingLogFile.waitForFrame(60, in: log, timeout: 30), "the recording never reached 2 s")
        try server.pactl(["unload-module", "module-null-sink"])
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("audio ended early"), r.stderr)
        let frames = try XCTUnwrap(Int("\(try FF.probe(out).stream["nb_read_frames"] ?? "")"))
        XCTAssertEqual(frames, 150)
        let pcm = try AudioCheck.decode(out)
        XCTAssertEqual(Double(pcm.count) / 48_000, 5, accuracy: 1024.0 / 48_000 + 0.001, "the track lasts as long as the video")
        XCTAssertGreaterThan(AudioCheck.rms(pcm[24_000..<72_000]), 0.25, "the tone before the loss")
        XCTAssertLessThan(AudioCheck.rms(pcm[(pcm.count - 48_000)...]), 0.001, "silence after it")
    }
}

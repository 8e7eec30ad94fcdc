import Foundation
import SwiftRecordX11
import TestSupport
import XCTest

/// Examples/ScreenCaptureEngine, a ScreenCaptureKit capture engine written as for the Mac
/// (SCStream with screen, audio and microphone outputs, an AVAssetWriter behind it with
/// two AAC tracks), run as built under a private Xvfb (320x240) while a window draws a new
/// step every 50 ms, and a private PulseAudio server: the desktop's sound is the sink `test`
/// playing 1 kHz, the default microphone the monitor of a sink `mic` playing 440 Hz.
/// ffprobe and ffmpeg check the movie: frames, duration, two AAC tracks, each tone where it belongs.
final class ScreenCaptureEngineExampleTests: MediaTestCase {
    override class var runsTheBinary: Bool { false }
    override class var checksWithFFmpeg: Bool { false }

    func testTheEngineRecordsTheDisplayTheSoundAndTheMicrophone() throws {
        try XCTSkipUnless(XvfbServer.isInstalled && PrivatePulseServer.isInstalled, "Xvfb or pulseaudio missing; run scripts/install-deps.sh")
        let example = PackagePaths.product("ScreenCaptureEngine")
        guard FileManager.default.isExecutableFile(atPath: example) else {
            throw TestError.failed("\(example) is not built; run `swift build --build-tests` first (make test does)")
        }
        let xvfb = try XvfbServer(size: "320x240")
        defer { xvfb.stop() }
        let pulse = try PrivatePulseServer()
        defer { pulse.stop() }
        try pulse.playDesktopAndMicrophoneTones(in: path("")).forEach { track($0) }

        let window = try X11AppWindow(display: xvfb.display, title: "engine", x: 20, y: 20, width: 200, height: 120)
        var environment = pulse.environment
        environment["DISPLAY"] = xvfb.display
        let movie = path("engine.mov")
        let run = track(try Proc.spawn(example, [movie, "2", "sound"], environment: environment))
        var step = 0
        while run.exited() == nil, step < 200 {
            try window.draw(step: step)
            step += 1
            Thread.sleep(forTimeInterval: 0.05)
        }
        let result = run.wait(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        let counts = result.stdout.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        print("ScreenCaptureEngineExampleTests: \(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) after \(step) steps")
        XCTAssertEqual(counts.count, 4, result.stdout)
        XCTAssertGreaterThan(counts.first ?? 0, 15, "a picture for most of the 40 steps in 2 s")
        XCTAssertGreaterThan(counts.count == 4 ? min(counts[2], counts[3]) : 0, 50, "about 100 sound buffers a second on each track")

        let probe = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                             "stream=codec_type,codec_name,width,height,nb_read_frames,duration:format=duration", "-of", "json", movie])
        XCTAssertTrue(probe.succeeded, probe.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let streams = try XCTUnwrap(json["streams"] as? [[String: Any]])
        XCTAssertEqual(streams.map { $0["codec_name"] as? String }, ["h264", "aac", "aac"], probe.stdout)
        XCTAssertEqual(streams.first?["width"] as? Int, 320)
        XCTAssertEqual(streams.first?["height"] as? Int, 240)
        XCTAssertEqual(Int(streams.first?["nb_read_frames"] as? String ?? ""), counts.count == 4 ? counts[1] : -1, "ffprobe counts the frames the writer took")
        let duration = try XCTUnwrap(Double((json["format"] as? [String: Any])?["duration"] as? String ?? ""), probe.stdout)
        XCTAssertEqual(duration, 2.0, accuracy: 0.6)
        for stream in streams.dropFirst() {
            XCTAssertEqual(Double(stream["duration"] as? String ?? "") ?? 0, duration, accuracy: 0.35, "the sound runs with the pictures: \(stream)")
        }
        let audio = try AudioCheck.decode(movie, track: 0), microphone = try AudioCheck.decode(movie, track: 1)
        let middle = { (pcm: [Float]) in pcm[min(pcm.count, 24_000)..<min(pcm.count, 72_000)] }
        XCTAssertGreaterThan(AudioCheck.medianToneShare(middle(audio), frequency: 1000), 0.8, "the system audio's tone")
        XCTAssertLessThan(AudioCheck.medianToneShare(middle(audio), frequency: 440), 0.1)
        XCTAssertGreaterThan(AudioCheck.medianToneShare(middle(microphone), frequency: 440), 0.8, "the microphone's tone")
        XCTAssertLessThan(AudioCheck.medianToneShare(middle(microphone), frequency: 1000), 0.1)
    }
}

import CoreMedia
import Foundation
import ScreenCaptureKit
import SwiftRecord
import SwiftRecordPulse
import SwiftRecordX11
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// An `SCStream`'s sound over a private Xvfb (320x240) and a private PulseAudio server (one
/// per class, named to this process by `$PULSE_SERVER`): the desktop's sound is the sink
/// `test` playing 1 kHz, the microphone the monitor of a sink `mic` playing 440 Hz. ffprobe
/// and ffmpeg read the recording's tracks.
final class ScreenCaptureKitSoundTests: MediaTestCase {
    override class var runsTheBinary: Bool { false }
    override class var checksWithFFmpeg: Bool { false }

    private struct Servers {
        let xvfb: XvfbServer
        let pulse: PrivatePulseServer
        let players: [ChildProcess]
        let previousPulseServer: String?
    }
    nonisolated(unsafe) private static var servers: Servers?
    nonisolated(unsafe) private static var failure = ""

    override class func setUp() {
        super.setUp()
        guard XvfbServer.isInstalled, PrivatePulseServer.isInstalled else { return }
        do {
            let xvfb = try XvfbServer(size: "320x240")
            let pulse = try PrivatePulseServer()
            let players = try pulse.playDesktopAndMicrophoneTones(in: pulse.directory.path)
            servers = Servers(xvfb: xvfb, pulse: pulse, players: players, previousPulseServer: getenv("PULSE_SERVER").map { String(cString: $0) })
            setenv("PULSE_SERVER", pulse.address, 1)
        } catch {
            failure = "\(error)"
        }
    }

    override class func tearDown() {
        if let s = servers {
            if let previous = s.previousPulseServer { setenv("PULSE_SERVER", previous, 1) } else { unsetenv("PULSE_SERVER") }
            for p in s.players { p.signal(SIGKILL); p.wait(timeout: 5) }
            s.pulse.stop()
            s.xvfb.stop()
        }
        servers = nil
        super.tearDown()
    }

    private var s: Servers!

    override func setUpWithError() throws {
        try XCTSkipUnless(XvfbServer.isInstalled && PrivatePulseServer.isInstalled, "Xvfb or pulseaudio missing; run scripts/install-deps.sh")
        try super.setUpWithError()
        s = try XCTUnwrap(Self.servers, "the servers did not start: \(Self.failure)")
    }

    /// Every sample buffer a stream hands out, by type: its time and, for sound, its format.
    final class Samples: SCStreamOutput, SCStreamDelegate {
        let seen = Locked<[SCStreamOutputType: [(time: Double, rate: Int, channels: Int)]]>([:])
        let stopError = Locked<(any Error)?>(nil)
        func stream(_ stream: SCStream, didOutputSampleBuffer sampleBuffer: CMSampleBuffer, of type: SCStreamOutputType) {
            var (rate, channels) = (0, 0)
            if case .audio(let sound) = sampleBuffer { (rate, channels) = (sound.format.sampleRate, sound.format.channelCount) }
            let time = CMSampleBufferGetPresentationTimeStamp(sampleBuffer).seconds
            seen.withLock { $0[type, default: []].append((time, rate, channels)) }
        }
        func stream(_ stream: SCStream, didStopWithError error: any Error) { stopError.withLock { $0 = error } }
    }

    final class RecordingEvents: SCRecordingOutputDelegate {
        let finished = Locked(false), failure = Locked<(any Error)?>(nil)
        func recordingOutput(_ recordingOutput: SCRecordingOutput, didFailWithError error: any Error) { failure.withLock { $0 = error } }
        func recordingOutputDidFinishRecording(_ recordingOutput: SCRecordingOutput) { finished.withLock { $0 = true } }
    }

    private func displayFilter() async throws -> SCContentFilter {
        let content = try await SCShareableContent.content(xDisplay: s.xvfb.display)
        let display = try XCTUnwrap(content.displays.first)
        return try SCContentFilter(display: display, excludingWindows: [])
    }

    private func soundConfiguration() -> SCStreamConfiguration {
        let c = SCStreamConfiguration()
        (c.capturesAudio, c.captureMicrophone, c.excludesCurrentProcessAudio) = (true, true, true)
        (c.sampleRate, c.channelCount) = (44_100, 1)
        return c
    }

    /// Two seconds of the screen, the desktop's sound and the microphone: `.audio` and
    /// `.microphone` buffers at the configured rate and channels, on the pictures' clock;
    /// the recording output's file holds both as AAC tracks, each with its own tone.
    func testSoundReachesTheOutputsOnThePicturesClockAndTheRecording() async throws {
        let window = try X11AppWindow(display: s.xvfb.display, title: "sound", x: 0, y: 0, width: 200, height: 120)
        let stream = SCStream(filter: try await displayFilter(), configuration: soundConfiguration(), delegate: nil)
        let samples = Samples()
        for type in [SCStreamOutputType.screen, .audio, .microphone] { try stream.addStreamOutput(samples, type: type, sampleHandlerQueue: nil) }
        let recording = SCRecordingOutputConfiguration()
        recording.outputURL = URL(fileURLWithPath: path("sound.mp4"))
        recording.outputFileType = .mp4
        let events = RecordingEvents()
        try stream.addRecordingOutput(SCRecordingOutput(configuration: recording, delegate: events))
        let start = MonotonicClock().now().seconds
        try await stream.startCapture()
        for step in 0..<40 {
            try window.draw(step: step)
            try await Task.sleep(for: .milliseconds(50))
        }
        try await stream.stopCapture()
        let end = MonotonicClock().now().seconds
        XCTAssertTrue(events.finished.withLock { $0 }, "\(String(describing: events.failure.withLock { $0 }))")

        let seen = samples.seen.withLock { $0 }
        let screen = seen[.screen] ?? [], audio = seen[.audio] ?? [], mic = seen[.microphone] ?? []
        print("ScreenCaptureKitSoundTests: \(screen.count) pictures, \(audio.count) + \(mic.count) sound buffers")
        XCTAssertGreaterThan(screen.count, 20)
        for (name, sound) in [("audio", audio), ("microphone", mic)] {
            XCTAssertGreaterThan(sound.count, 50, "about 100 buffers a second of \(name)")
            XCTAssertTrue(sound.allSatisfy { $0.rate == 44_100 && $0.channels == 1 }, "sampleRate and channelCount: \(sound.prefix(3))")
            XCTAssertEqual(sound.map(\.time), sound.map(\.time).sorted(), name)
            // One clock: the sound's times lie where the pictures' do, within the capture.
            let first = try XCTUnwrap(sound.first?.time), last = try XCTUnwrap(sound.last?.time)
            XCTAssertEqual(first, try XCTUnwrap(screen.first?.time), accuracy: 0.5, name)
            XCTAssertEqual(last, try XCTUnwrap(screen.last?.time), accuracy: 0.5, name)
            XCTAssertTrue(first > start - 1 && last < end, "\(name) \(first)...\(last) in \(start)...\(end)")
        }

        let run = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels,duration:stream_tags=handler_name:format=duration",
                                           "-of", "json", path("sound.mp4")])
        XCTAssertTrue(run.succeeded, run.stderr)
        let probe = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let streams = try XCTUnwrap(probe["streams"] as? [[String: Any]], "\(probe)")
        XCTAssertEqual(streams.map { $0["codec_name"] as? String }, ["h264", "aac", "aac"], "\(streams)")
        XCTAssertEqual(streams.dropFirst().map { ($0["tags"] as? [String: Any])?["handler_name"] as? String }, ["Audio", "Microphone"])
        XCTAssertEqual(streams.dropFirst().map { $0["sample_rate"] as? String }, ["44100", "44100"])
        XCTAssertEqual(streams.dropFirst().map { $0["channels"] as? Int }, [1, 1])
        let duration = try XCTUnwrap(Double((probe["format"] as? [String: Any])?["duration"] as? String ?? ""), "\(probe)")
        XCTAssertEqual(duration, 2, accuracy: 0.6)
        for stream in streams {
            XCTAssertEqual(Double(stream["duration"] as? String ?? "") ?? 0, duration, accuracy: 0.3, "every track runs the whole recording: \(stream)")
        }
        let desktop = try AudioCheck.decode(path("sound.mp4"), rate: 44_100, track: 0), microphone = try AudioCheck.decode(path("sound.mp4"), rate: 44_100, track: 1)
        let middle = { (pcm: [Float]) in pcm[min(pcm.count, 22_050)..<min(pcm.count, 66_150)] }
        XCTAssertGreaterThan(AudioCheck.medianToneShare(middle(desktop), frequency: 1000, rate: 44_100), 0.8)
        XCTAssertLessThan(AudioCheck.medianToneShare(middle(desktop), frequency: 440, rate: 44_100), 0.1)
        XCTAssertGreaterThan(AudioCheck.medianToneShare(middle(microphone), frequency: 440, rate: 44_100), 0.8)
        XCTAssertLessThan(AudioCheck.medianToneShare(middle(microphone), frequency: 1000, rate: 44_100), 0.1)
        withExtendedLifetime(window) {}
    }

    /// No server, a missing microphone: `startCapture` throws naming the setting and the cause.
    func testMissingServerOrMicrophoneThrowsNamingTheCause() async throws {
        let filter = try await displayFilter()
        let c = soundConfiguration()
        c.microphoneCaptureDeviceID = "no-such-microphone"
        do {
            try await SCStream(filter: filter, configuration: c, delegate: nil).startCapture()
            XCTFail("a missing microphone was accepted")
        } catch {
            XCTAssertTrue("\(error)".contains("captureMicrophone") && "\(error)".contains("no-such-microphone"), "\(error)")
        }
        setenv("PULSE_SERVER", "unix:" + path("no-server"), 1)
        defer { setenv("PULSE_SERVER", s.pulse.address, 1) }
        do {
            try await SCStream(filter: filter, configuration: soundConfiguration(), delegate: nil).startCapture()
            XCTFail("a stream without a sound server started")
        } catch {
            XCTAssertTrue("\(error)".contains("capturesAudio") && "\(error)".contains("PulseAudio"), "\(error)")
        }
    }

    /// `excludesCurrentProcessAudio` while this process plays: refused at the start; and a
    /// stream running when it starts to play stops with an error, never recording it.
    func testExcludingThisProcessesSoundFailsWhileItPlays() async throws {
        let filter = try await displayFilter()
        let samples = Samples()
        let running = SCStream(filter: filter, configuration: soundConfiguration(), delegate: samples)
        try await running.startCapture()
        let player = try PulseClickPlayer(toneFrequency: 660, sink: "test", name: "ScreenCaptureKitSoundTests")
        defer { player.stop() }
        for _ in 0..<30 where samples.stopError.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(100)) }
        let error = try XCTUnwrap(samples.stopError.withLock { $0 }, "the stream went on while this process played")
        XCTAssertTrue("\(error)".contains("excludesCurrentProcessAudio"), "\(error)")
        do {
            try await SCStream(filter: filter, configuration: soundConfiguration(), delegate: nil).startCapture()
            XCTFail("excludesCurrentProcessAudio was accepted while this process plays")
        } catch {
            XCTAssertTrue("\(error)".contains("this process plays 1 PulseAudio stream"), "\(error)")
        }
    }
}

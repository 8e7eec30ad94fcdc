import Foundation
import SwiftRecord
import TestSupport
import XCTest

final class CaptureSessionTests: XCTestCase {
    func makeSession(_ url: URL, size: VideoSize, fps: Rational, preset: String, duration: MediaTime,
                     log: TimingLog? = nil) throws -> (CaptureSession, AssetWriter) {
        let source = try SyntheticSource(options: CaptureSourceOptions(size: size, frameRate: fps, realtime: true))
        let settings = VideoSettings(codec: .h264, width: size.width, height: size.height, rateControl: .averageBitRate(2_000_000),
                                     expectedSourceFrameRate: fps, profile: "high", preset: preset)
        let writer = try AssetWriter(outputURL: url)
        let input = AssetWriterInput(outputSettings: settings)
        input.expectsMediaDataInRealTime = true
        let adaptor = PixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes:
            PixelBufferAttributes(width: size.width, height: size.height, pixelFormat: source.pixelFormat))
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        return (CaptureSession(source: source, writer: writer, adaptor: adaptor, frameRate: fps,
                               limit: CaptureLimit(duration: duration), timingLog: log), writer)
    }

    /// Two sound sources (AVCaptureSession's several inputs): one titled track each,
    /// both as long as the pictures, per-track statistics (checked with ffprobe).
    func testTwoSoundSourcesAreTwoTitledTracks() async throws {
        try XCTSkipUnless(FF.available, "ffprobe not installed")
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("two.mkv")
        let size = VideoSize(width: 160, height: 120), fps = Rational(30)!
        let source = try SyntheticSource(options: CaptureSourceOptions(size: size, frameRate: fps, realtime: true))
        let writer = try AssetWriter(outputURL: url)
        let video = AssetWriterInput(outputSettings: VideoSettings(width: size.width, height: size.height, expectedSourceFrameRate: fps, preset: "ultrafast"))
        video.expectsMediaDataInRealTime = true
        let adaptor = PixelBufferAdaptor(assetWriterInput: video, sourcePixelBufferAttributes:
            PixelBufferAttributes(width: size.width, height: size.height, pixelFormat: source.pixelFormat))
        try writer.add(video)
        var captures: [AudioCapture] = []
        for title in ["Desktop", "Microphone"] {
            let input = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings())
            input.expectsMediaDataInRealTime = true
            input.metadata = AssetMetadata(title: title)
            try writer.add(input)
            captures.append(AudioCapture(source: try SyntheticAudioSource(options: AudioSourceOptions(frameRate: fps, realtime: true)), input: input))
        }
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let session = CaptureSession(source: source, writer: writer, adaptor: adaptor, frameRate: fps,
                                     limit: CaptureLimit(duration: MediaTime(seconds: 2)), audioCaptures: captures)
        let stats = try await session.run()
        try await writer.finishWriting()
        XCTAssertEqual(stats.audioTracks.count, 2)
        for track in stats.audioTracks { XCTAssertEqual(track.seconds, 2, accuracy: 0.1) }
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream=codec_name:stream_tags=title",
                                         "-of", "csv=p=0", url.path], timeout: 60)
        XCTAssertEqual(r.stdout.split(separator: "\n").map(String.init), ["aac,Desktop", "aac,Microphone"], r.stderr)
    }

    func testLiveSessionWritesOneFramePerTick() async throws {
        try XCTSkipUnless(FF.available, "ffprobe not installed")
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("live.mp4")
        let (session, writer) = try makeSession(url, size: VideoSize(width: 320, height: 240), fps: Rational(30)!,
                                                preset: "ultrafast", duration: MediaTime(seconds: 1))
        let stats = try await session.run()
        try await writer.finishWriting()
        XCTAssertEqual(stats.framesWritten, 30)
        XCTAssertEqual(stats.framesCaptured + stats.framesRepeated, 30)
        let (s, f) = try FF.probe(url.path)
        XCTAssertEqual(int(s["nb_read_frames"]), 30)
        XCTAssertEqual(try XCTUnwrap(double(f["duration"])), 1.0, accuracy: 0.001)
    }

    func testAnEncoderThatFallsBehindFillsTicksUpToTheBoundThenLeavesAGap() async throws {
        try XCTSkipUnless(FF.available, "ffprobe not installed")
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("behind.mp4")
        let logPath = dir.appendingPathComponent("timing.csv").path
        // 240 frames a second of 720p through x264's "medium": far more than it can take.
        let fps = Rational(240)!
        let (session, writer) = try makeSession(url, size: VideoSize(width: 1280, height: 720), fps: fps, preset: "medium",
                                                duration: MediaTime(seconds: 1), log: try TimingLog(path: logPath))
        session.maximumFill = .milliseconds(100)   // 24 ticks may wait for room
        let stats = try await session.run()
        try await writer.finishWriting()
        XCTAssertGreaterThan(stats.ticksFilled, 0, "ticks the encoder could not take at once were written late")
        XCTAssertGreaterThan(stats.ticksInGaps, 0, "past the bound, the oldest waiting tick is left as a gap")
        // Every tick is accounted for: written, left as a gap, or closed while the source was
        // still in its last grab when the second ended (no picture to show: under a
        // sanitizer's load a 720p synthetic picture can take longer than a 4-ms tick).
        let rows = TimingLogFile.rows(logPath)
        let stuck = rows.filter { $0.reason == "missed-source-stuck" }.count
        XCTAssertEqual(stuck, stats.ticksMissed - stats.framesRepeated, "ticks without a picture: counted and logged alike")
        XCTAssertEqual(stats.framesWritten + stats.ticksInGaps + stuck, 240)
        // The capture thread never waited for the encoder: the session ended on time plus the
        // bounded backlog, not when an unbounded one drained (a generous bound; not a speed test).
        XCTAssertLessThan(stats.elapsedSeconds, 10)
        let (s, _) = try FF.probe(url.path)
        XCTAssertEqual(int(s["nb_read_frames"]), stats.framesWritten)
        XCTAssertEqual(rows.filter { $0.reason == "gap" }.count, stats.ticksInGaps)
        XCTAssertEqual(rows.filter { $0.reason == "filled" }.count, stats.ticksFilled)
        // The file's frames are in tick order: a waiting tick is never overtaken.
        let written = rows.filter { ["captured", "repeated", "filled"].contains($0.reason) }.compactMap(\.frame)
        XCTAssertEqual(written, written.sorted())
    }
}

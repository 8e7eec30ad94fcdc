import Foundation
import Logging
import SwiftRecord
import TestSupport
import XCTest

/// What Apple's code does not expect to go silently: an input that never received a
/// sample, and an audio source read before it was started, are said at warning level.
final class ApplePortingWarningsTests: XCTestCase {
    func testFinishingWithAnInputThatReceivedNoSampleWarnsNamingIt() async throws {
        let logs = CapturedLogs.shared
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let writer = AssetWriter(outputURL: dir.appendingPathComponent("one-track.mp4"), fileType: .mp4)
        let video = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 64, expectedSourceFrameRate: Rational(30), preset: "ultrafast"))
        let sound = AssetWriterInput(outputSettings: AudioSettings(codec: .aac))
        sound.metadata.title = "Microphone"
        try writer.add(video)
        try writer.add(sound)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        for i in 0..<5 {
            try await video.append(SampleBuffer(pixelBuffer: try PixelBuffer(width: 64, height: 64, pixelFormat: .yuv420p), presentationTimeStamp: MediaTime(value: Int64(i), timescale: 30)))
        }
        try await writer.finishWriting()
        let warnings = logs.all().filter { $0.label == "swift-record.writer" && $0.level == .warning && $0.message.contains("received no sample") }
        XCTAssertTrue(warnings.contains { $0.message.contains("audio input 2 of 2") && $0.message.contains("Microphone") }, "\(logs.all())")
        XCTAssertFalse(warnings.contains { $0.message.contains("video input 1") }, "the video input received samples")
    }

    func testAnAudioSourceReadBeforeStartWarnsOnce() throws {
        let logs = CapturedLogs.shared
        let source = try SyntheticAudioSource(options: AudioSourceOptions())
        XCTAssertNil(try source.nextChunk())
        XCTAssertNil(try source.nextChunk())
        let warnings = logs.all().filter { $0.label == "swift-record.capture" && $0.level == .warning && $0.message.contains("before start()") }
        XCTAssertEqual(warnings.count, 1, "\(logs.all())")
        try source.start()
        XCTAssertNotNil(try source.nextChunk(), "once started, it gives samples")
    }
}

import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// A key frame at most every N frames and every T seconds (Apple's
/// `AVVideoMaxKeyFrameIntervalKey` beside `AVVideoMaxKeyFrameIntervalDurationKey`), with
/// capture times that jitter around the frame grid, as a screen or a camera gives them.
final class KeyFrameRuleTests: XCTestCase {
    /// The encoder makes every 10th frame a key frame itself; the 10th frame's time is 3 ms
    /// short of the 2 s since the last key, so the frame after it is the first 2 s past it.
    /// That one must not be forced to be a key frame as well (the encoder's own has not come
    /// out of its look-ahead yet): ten key frames for 100 frames, not nineteen.
    func testTheEncodersOwnKeyFramesCountAsTheyAreSent() async throws {
        try XCTSkipUnless(FF.available, "ffmpeg/ffprobe not installed; run scripts/install-deps.sh")
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("keys.mp4")
        let writer = try AssetWriter(outputURL: url)
        var settings = VideoSettings(codec: .h264, width: 320, height: 240, rateControl: .averageBitRate(500_000),
                                     maxKeyFrameInterval: 10, expectedSourceFrameRate: Rational(5), preset: "veryfast")
        settings.maxKeyFrameIntervalDuration = 2
        settings.encoderOptions["threads"] = "1"
        let input = AssetWriterInput(outputSettings: settings)
        input.expectsMediaDataInRealTime = true
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        // Frame k at 1 + 0.2 k s, every 10th 3 ms early.
        func time(_ k: Int) -> MediaTime {
            MediaTime(value: 1_000_000_000 + Int64(k) * 200_000_000 - (k > 0 && k % 10 == 0 ? 3_000_000 : 0), timescale: 1_000_000_000)
        }
        try writer.startSession(atSourceTime: time(0))
        let scene = try SyntheticScene(width: 320, height: 240)
        let pool = try XCTUnwrap(adaptor.pixelBufferPool)
        for k in 0..<100 {
            let buffer = try pool.makePixelBuffer()
            try scene.render(frame: k, into: buffer, flash: false)
            try await adaptor.append(buffer, withPresentationTime: time(k))
        }
        input.markAsFinished()
        try await writer.finishWriting()
        let packets = try FF.videoPackets(url.path)
        XCTAssertEqual(packets.count, 100)
        let keys = packets.enumerated().filter(\.element.key).map(\.offset)
        XCTAssertEqual(keys, Array(stride(from: 0, to: 100, by: 10)), "key frames at these frames")
    }
}

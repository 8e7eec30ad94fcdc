import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// A writer whose inputs are not real time (a conversion, the synthetic scene without
/// --realtime) makes its live outputs wait for room instead of dropping frames: an HLS
/// playlist of an offline recording holds every frame, however slowly its thread writes
/// (issue 37, 31: 8 of 60 frames through an HLS playlist under AddressSanitizer, exit 0).
final class OfflineLiveOutputTests: FileTestCase {
    func testAnOfflineWriterKeepsEveryFrameInItsHLSOutput() async throws {
        let settings = VideoSettings(width: 64, height: 48, maxKeyFrameInterval: 30, expectedSourceFrameRate: Rational(30),
                                     preset: "ultrafast", threads: 1)
        let writer = AssetWriter(outputURL: URL(fileURLWithPath: path("a.mp4")), fileType: .mp4)
        let hls = try LiveOutput(url: URL(fileURLWithPath: path("live.m3u8")))
        // A queue of one millisecond: any packet beyond the first would be congestion.
        hls.maximumQueueDuration = MediaTime(value: 1, timescale: 1000)
        let input = AssetWriterInput(outputSettings: settings)
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.add(hls)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        for i in 0..<60 {
            let b = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
            fill(b, seed: UInt64(i + 1))
            try syncAppend(adaptor, b, MediaTime(value: Int64(i), timescale: 30))
        }
        input.markAsFinished()
        try await writer.finishWriting()
        XCTAssertEqual(writer.status, .completed)
        XCTAssertEqual(hls.status, .completed, "\(String(describing: hls.error))")
        XCTAssertEqual(hls.statistics.videoFramesDropped, 0)
        XCTAssertEqual(hls.statistics.videoFramesLost, 0)
        XCTAssertEqual(hls.statistics.videoFramesSent, 60)
        XCTAssertEqual(int(try FF.probe(path("live.m3u8")).stream["nb_read_frames"]), 60)
        XCTAssertEqual(int(try FF.probe(path("a.mp4")).stream["nb_read_frames"]), 60)
    }
}

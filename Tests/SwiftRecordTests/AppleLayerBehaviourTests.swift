import AVFoundation
import Foundation
import TestSupport
import XCTest

/// The Apple-spelled layer says why a call could not do what was asked (`false`, a
/// `CVReturn`, `status` and `error`), where Apple's raises or returns an error code, and
/// never crashes on bad input.
final class AppleLayerBehaviourTests: XCTestCase {
    func testSettingsApplesWouldRaiseForFailTheWriterWithTheirReason() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let writer = try AVAssetWriter(outputURL: dir.appendingPathComponent("bad.mov"), fileType: .mov)
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: [AVVideoCodecKey: AVVideoCodecType.h264, "AVVideoWidthKeyy": 640])
        XCTAssertNotNil(input.setupError)
        XCTAssertNil(input.assetWriterInput)
        XCTAssertFalse(input.isReadyForMoreMediaData)
        XCTAssertFalse(writer.canAdd(input))
        writer.add(input)
        XCTAssertEqual(writer.status, .failed)
        XCTAssertFalse(writer.startWriting())
        let error = try XCTUnwrap(writer.error as? SwiftRecordError)
        XCTAssertTrue(error.message.contains("AVVideoWidthKeyy"), error.message)
        let finished = expectation(description: "completion handler")
        writer.finishWriting { finished.fulfill() }
        wait(for: [finished], timeout: 10)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("bad.mov").path))
    }

    func testStartWritingReturnsFalseOverAnExistingFile() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("taken.mp4")
        try Data("keep me".utf8).write(to: url)
        let writer = try AVAssetWriter(url: url, fileType: .mp4)
        writer.add(AVAssetWriterInput(mediaType: .video, outputSettings: [AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 64, AVVideoHeightKey: 64]))
        XCTAssertFalse(writer.startWriting())
        XCTAssertEqual(writer.status, .failed)
        XCTAssertEqual((writer.error as? SwiftRecordError)?.kind, .fileAlreadyExists)
        XCTAssertEqual(try String(contentsOf: url, encoding: .utf8), "keep me")
        XCTAssertThrowsError(try AVAssetWriter(outputURL: dir.appendingPathComponent("a.mkv"), fileType: .mp4), "an .mkv name for an MP4")
    }

    func testARefusedAppendReturnsFalseAndTheWriterGoesOn() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let writer = try AVAssetWriter(outputURL: dir.appendingPathComponent("times.mp4"), fileType: .mp4)
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: [AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 64, AVVideoHeightKey: 64])
        let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: nil)
        writer.add(input)
        XCTAssertNil(adaptor.pixelBufferPool, "nil until startWriting(), as Apple's")
        XCTAssertTrue(writer.startWriting())
        writer.startSession(atSourceTime: kCMTimeZero)
        let pool = try XCTUnwrap(adaptor.pixelBufferPool)
        var pixelBuffer: CVPixelBuffer?
        XCTAssertEqual(CVPixelBufferPoolCreatePixelBuffer(nil, pool, &pixelBuffer), kCVReturnSuccess)
        let picture = try XCTUnwrap(pixelBuffer)
        XCTAssertTrue(adaptor.append(picture, withPresentationTime: CMTimeMake(value: 1, timescale: 30)))
        XCTAssertFalse(adaptor.append(picture, withPresentationTime: CMTimeMake(value: 1, timescale: 30)), "a time that does not increase")
        XCTAssertEqual(writer.status, .writing)
        XCTAssertTrue(adaptor.append(picture, withPresentationTime: CMTimeMake(value: 2, timescale: 30)))
        input.markAsFinished()
        await writer.finishWriting()
        XCTAssertEqual(writer.status, .completed)
    }

    func testCoreVideoSaysWhatItCannotDoWithCVReturn() throws {
        var pixelBuffer: CVPixelBuffer?
        XCTAssertEqual(CVPixelBufferCreate(nil, 64, 64, 0x6162_6364, nil, &pixelBuffer), kCVReturnInvalidPixelFormat)
        XCTAssertNil(pixelBuffer)
        XCTAssertEqual(CVPixelBufferCreate(nil, 0, 64, kCVPixelFormatType_32BGRA, nil, &pixelBuffer), kCVReturnInvalidSize)
        var pool: CVPixelBufferPool?
        XCTAssertEqual(CVPixelBufferPoolCreate(nil, nil, [kCVPixelBufferWidthKey as String: 64] as CFDictionary, &pool), kCVReturnInvalidPixelBufferAttributes)
        XCTAssertEqual(CVPixelBufferPoolCreate(nil, nil, [kCVPixelBufferPixelFormatTypeKey as String: [kCVPixelFormatType_420YpCbCr8BiPlanarFullRange],
                                                          kCVPixelBufferWidthKey as String: 64, kCVPixelBufferHeightKey as String: NSNumber(value: 48)] as CFDictionary, &pool),
                       kCVReturnSuccess)
        let made = try XCTUnwrap(pool)
        var held: [CVPixelBuffer] = []
        var status = kCVReturnSuccess
        while status == kCVReturnSuccess, held.count < 100 {
            status = CVPixelBufferPoolCreatePixelBuffer(nil, made, &pixelBuffer)
            if status == kCVReturnSuccess, let pixelBuffer { held.append(pixelBuffer) }
        }
        XCTAssertEqual(status, kCVReturnWouldExceedAllocationThreshold)
        let buffer = try XCTUnwrap(held.first)
        XCTAssertEqual(CVPixelBufferGetPixelFormatType(buffer), kCVPixelFormatType_420YpCbCr8BiPlanarFullRange)
        XCTAssertEqual(CVPixelBufferGetPlaneCount(buffer), 2)
        XCTAssertEqual(CVPixelBufferGetWidthOfPlane(buffer, 1), 32)
        XCTAssertEqual(CVPixelBufferGetHeightOfPlane(buffer, 1), 24)
        XCTAssertEqual(CVPixelBufferGetBytesPerRowOfPlane(buffer, 5), 0)
        XCTAssertNil(CVPixelBufferGetBaseAddress(buffer), "nil unless locked")
        XCTAssertNotEqual(CVPixelBufferUnlockBaseAddress(buffer, []), kCVReturnSuccess, "unlocking what is not locked")
        XCTAssertEqual(CVPixelBufferLockBaseAddress(buffer, .readOnly), kCVReturnSuccess)
        XCTAssertNotNil(CVPixelBufferGetBaseAddressOfPlane(buffer, 1))
        XCTAssertEqual(CVPixelBufferUnlockBaseAddress(buffer, .readOnly), kCVReturnSuccess)
        // An adaptor declared with a format this layer does not know lends nothing and takes nothing.
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: [AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 64, AVVideoHeightKey: 64])
        let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: [kCVPixelBufferPixelFormatTypeKey as String: 0x7878_7878])
        XCTAssertNil(adaptor.pixelBufferAdaptor)
        XCTAssertFalse(adaptor.append(buffer, withPresentationTime: .zero))
    }

    func testCoreMediaTimes() {
        XCTAssertEqual(CMTimeGetSeconds(CMTimeMake(value: 3, timescale: 2)), 1.5)
        XCTAssertEqual(CMTimeMakeWithSeconds(1.5, preferredTimescale: 600), CMTime(value: 900, timescale: 600))
        XCTAssertEqual(kCMTimeZero, CMTime.zero)
        XCTAssertEqual(CMTimeCompare(CMTimeMake(value: 1, timescale: 2), CMTimeMake(value: 2, timescale: 4)), 0)
        XCTAssertEqual(CMTimeCompare(kCMTimeInvalid, kCMTimeZero), -1)
        XCTAssertEqual(CMTimeAdd(CMTimeMake(value: 1, timescale: 30), CMTimeMake(value: 1, timescale: 20)), CMTimeMake(value: 5, timescale: 60))
        XCTAssertEqual(CMTimeSubtract(kCMTimeZero, CMTimeMake(value: 1, timescale: 30)), CMTimeMake(value: -1, timescale: 30))
        XCTAssertEqual(CMTimeMultiplyByRatio(CMTimeMake(value: 3, timescale: 30), multiplier: 1, divisor: 0), kCMTimeInvalid)
        XCTAssertEqual(CMTimeAbsoluteValue(CMTimeMake(value: -4, timescale: 2)), CMTimeMake(value: 2, timescale: 1))
        XCTAssertFalse(CMTIME_IS_NUMERIC(kCMTimePositiveInfinity))
    }
}

import Foundation
@testable import SwiftRecord
import TestSupport
import XCTest

/// The CMTime / CMTimeRange / CVPixelBuffer conveniences ported code expects.
final class PortingConveniencesTests: XCTestCase {
    func testSecondsWithPreferredTimescale() {
        let t = MediaTime(seconds: 73_512.345_678_912, preferredTimescale: 1_000_000_000)
        XCTAssertEqual(t.value, 73_512_345_678_912)
        XCTAssertEqual(t.timescale, 1_000_000_000)
        XCTAssertEqual(MediaTime(seconds: 2.5, preferredTimescale: 600), MediaTime(value: 1500, timescale: 600))
        XCTAssertEqual(MediaTime(seconds: 1.0 / 3, preferredTimescale: 30).value, 10, "rounded to the nearest")
        XCTAssertFalse(MediaTime(seconds: .nan, preferredTimescale: 600).isValid)
        XCTAssertFalse(MediaTime(seconds: 1, preferredTimescale: 0).isValid)
        XCTAssertTrue(MediaTime(seconds: .infinity, preferredTimescale: 600).isPositiveInfinity)
        XCTAssertTrue(MediaTime(seconds: -1e30, preferredTimescale: 600).isNegativeInfinity)
    }

    func testDivision() {
        XCTAssertEqual(MediaTime(seconds: 1) / 30, MediaTime(value: 0, timescale: 1), "whole seconds stay whole seconds, as CMTimeMultiplyByRatio")
        XCTAssertEqual(MediaTime(value: 1_000_000_000, timescale: 1_000_000_000) / 30, MediaTime(value: 33_333_333, timescale: 1_000_000_000))
        XCTAssertEqual(MediaTime(value: 600, timescale: 600) / 30, MediaTime(value: 20, timescale: 600))
        XCTAssertFalse((MediaTime(seconds: 1) / 0).isValid)
        XCTAssertEqual(MediaTime(value: 3, timescale: 1).multiplied(by: Rational(1, 30)!), MediaTime(value: 0, timescale: 1))
        XCTAssertEqual(MediaTime(value: 90, timescale: 30).multiplied(by: 2, dividedBy: 3), MediaTime(seconds: 2))
        XCTAssertEqual(MediaTime(seconds: 3) / MediaTime(value: 1, timescale: 30), 90)
        XCTAssertTrue((MediaTime(seconds: 3) / MediaTime.zero).isNaN)
    }

    func testInfinities() {
        let inf = MediaTime.positiveInfinity, ninf = MediaTime.negativeInfinity
        XCTAssertTrue(inf.isValid)
        XCTAssertFalse(inf.isNumeric)
        XCTAssertTrue(MediaTime(seconds: 5).isNumeric)
        XCTAssertFalse(MediaTime.invalid.isNumeric)
        XCTAssertLessThan(MediaTime.invalid, ninf)
        XCTAssertLessThan(ninf, MediaTime(value: Int64.min + 1, timescale: 1))
        XCTAssertLessThan(MediaTime(value: Int64.max, timescale: 1), inf)
        XCTAssertEqual(inf + MediaTime(seconds: 5), inf)
        XCTAssertEqual(MediaTime(seconds: 5) - inf, ninf)
        XCTAssertFalse((inf + ninf).isValid)
        XCTAssertEqual(inf * -2, ninf)
        XCTAssertEqual(-ninf, inf)
        XCTAssertEqual(inf.seconds, .infinity)
        XCTAssertEqual(inf.convertScale(600), inf)
        XCTAssertEqual(Set([inf, inf, ninf, .invalid]).count, 3)
        XCTAssertEqual(inf.description, "MediaTime.positiveInfinity")
        XCTAssertNotEqual(inf, MediaTime.invalid)
    }

    func testTimeRange() {
        let r = TimeRange(start: MediaTime(seconds: 1), duration: MediaTime(seconds: 2))
        XCTAssertEqual(r.end, MediaTime(seconds: 3))
        XCTAssertTrue(r.containsTime(MediaTime(seconds: 1)))
        XCTAssertFalse(r.containsTime(MediaTime(seconds: 3)), "the end is not in the range")
        let s = TimeRange(start: MediaTime(value: 5, timescale: 2), end: MediaTime(seconds: 4))
        XCTAssertEqual(r.intersection(s), TimeRange(start: MediaTime(value: 5, timescale: 2), end: MediaTime(seconds: 3)))
        XCTAssertEqual(r.union(s), TimeRange(start: MediaTime(seconds: 1), end: MediaTime(seconds: 4)))
        XCTAssertTrue(r.intersection(TimeRange(start: MediaTime(seconds: 9), duration: MediaTime(seconds: 1))).isEmpty)
        XCTAssertTrue(r.containsTimeRange(TimeRange(start: MediaTime(seconds: 2), duration: MediaTime(seconds: 1))))
        let forever = TimeRange(start: .zero, duration: .positiveInfinity)
        XCTAssertTrue(forever.isValid)
        XCTAssertTrue(forever.containsTime(MediaTime(seconds: 1_000_000)))
        XCTAssertEqual(forever.end, .positiveInfinity)
        XCTAssertFalse(TimeRange(start: .zero, duration: MediaTime(seconds: -1)).isValid)
        XCTAssertFalse(TimeRange.invalid.isValid)
        XCTAssertFalse(TimeRange.invalid.containsTime(.zero))
    }

    func testAppendRefusesInfiniteTimes() async throws {
        let dir = try makeTemporaryDirectory()
        let writer = try AssetWriter(outputURL: dir.appendingPathComponent("inf.mp4"))
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 64, preset: "ultrafast"))
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        XCTAssertThrowsError(try writer.startSession(atSourceTime: .positiveInfinity)) { error in
            XCTAssertTrue("\(error)".contains("infinite"), "\(error)")
        }
        try writer.startSession(atSourceTime: .zero)
        let buffer = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
        XCTAssertThrowsError(try syncAppend(adaptor, buffer, .positiveInfinity)) { error in
            XCTAssertEqual((error as? SwiftRecordError)?.kind, .invalidArgument)
        }
        writer.cancelWriting()
    }

    func testBytesPerRowIsAProperty() throws {
        let buffer = try PixelBuffer(width: 100, height: 10, pixelFormat: .bgra)
        let bpr: Int = buffer.bytesPerRow
        XCTAssertGreaterThanOrEqual(bpr, 400)
        XCTAssertEqual(bpr, buffer.bytesPerRow(ofPlane: 0))
        let yuv = try PixelBuffer(width: 100, height: 10, pixelFormat: .yuv420p)
        XCTAssertEqual(yuv.bytesPerRow, yuv.bytesPerRow(ofPlane: 0))
        XCTAssertEqual(yuv.bytesPerRow(ofPlane: 7), 0)
    }

    func testLockBaseAddressBridge() throws {
        let buffer = try PixelBuffer(width: 16, height: 4, pixelFormat: .bgra)
        XCTAssertNil(buffer.baseAddress, "no address while unlocked")
        try buffer.lockBaseAddress()
        let base = try XCTUnwrap(buffer.baseAddress)
        for row in 0..<4 { (base + row * buffer.bytesPerRow).initializeMemory(as: UInt8.self, repeating: UInt8(row + 1), count: 64) }
        try buffer.unlockBaseAddress()
        XCTAssertNil(buffer.baseAddress)
        buffer.withReadAccess { planes in
            XCTAssertEqual(planes[0].baseAddress.load(fromByteOffset: 3 * planes[0].bytesPerRow, as: UInt8.self), 4)
        }
        XCTAssertThrowsError(try buffer.unlockBaseAddress()) { error in
            XCTAssertEqual((error as? SwiftRecordError)?.kind, .invalidState)
        }
        try buffer.lockBaseAddress(.readOnly)
        try buffer.lockBaseAddress(.readOnly)
        XCTAssertThrowsError(try buffer.lockBaseAddress(), "no writing lock over a read-only one")
        XCTAssertThrowsError(try buffer.unlockBaseAddress(), "flags must match")
        try buffer.unlockBaseAddress(.readOnly)
        XCTAssertNotNil(buffer.baseAddress, "still locked once")
        try buffer.unlockBaseAddress(.readOnly)
        XCTAssertNil(buffer.baseAddress(ofPlane: 0))
        XCTAssertNil(buffer.baseAddress(ofPlane: 3))
    }

    /// A buffer locked for writing cannot be appended (the encoder would see it being
    /// drawn); a buffer the encoder holds gets its own storage when locked for writing.
    func testLockedBufferAndTheEncoder() throws {
        let dir = try makeTemporaryDirectory()
        let writer = try AssetWriter(outputURL: dir.appendingPathComponent("lock.mp4"))
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 64, preset: "ultrafast"))
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let buffer = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
        try buffer.lockBaseAddress()
        XCTAssertThrowsError(try syncAppend(adaptor, buffer, .zero)) { error in
            XCTAssertEqual((error as? SwiftRecordError)?.kind, .invalidState)
            XCTAssertTrue("\(error)".contains("unlockBaseAddress"), "\(error)")
        }
        try buffer.unlockBaseAddress()
        try syncAppend(adaptor, buffer, .zero)
        // A pin as the encoder's queue holds one (the encoder itself may be done with the
        // appended picture by now: on a busy machine it was, and nothing was there to copy).
        let held = try buffer.pin()
        let before = buffer.storageIdentity
        XCTAssertFalse(buffer.isUniquelyReferenced)
        try buffer.lockBaseAddress()
        XCTAssertNotEqual(buffer.storageIdentity, before, "a buffer another holder shares gets its own storage when locked for writing")
        XCTAssertEqual(held.storageIdentity, before, "the other holder keeps the picture it had")
        try buffer.unlockBaseAddress()
        held.unpin()
        writer.cancelWriting()
    }
}

import CX11
import Foundation
import SwiftRecord
@testable import SwiftRecordX11
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The X11 source in process, against a private Xvfb with known content drawn on it.
final class X11SourceTests: XvfbTestCase {
    /// In process: neither the built binary nor ffmpeg.
    override class var runsTheBinary: Bool { false }
    override class var checksWithFFmpeg: Bool { false }

    /// Colours of the test pattern: four quadrants of the 1280x720 screen.
    static let quadrants: [(x: Int, y: Int, rgb: UInt32)] = [
        (0, 0, 0xE02020), (640, 0, 0x20C040), (0, 360, 0x2040E0), (640, 360, 0xF0F0F0),
    ]

    func paintQuadrants() throws {
        let painter = try XPainter(server)
        for q in X11SourceTests.quadrants {
            painter.fill(x: q.x, y: q.y, width: 640, height: 360, rgb: q.rgb)
        }
        painter.movePointer(x: 1270, y: 710)
    }

    /// The BGRA pixel at (x, y) of a picture, as 0xRRGGBB.
    func pixel(_ buffer: PixelBuffer, _ x: Int, _ y: Int) -> UInt32 {
        buffer.withReadAccess { planes in
            let p = planes[0].baseAddress.assumingMemoryBound(to: UInt8.self) + y * planes[0].bytesPerRow + 4 * x
            return UInt32(p[2]) << 16 | UInt32(p[1]) << 8 | UInt32(p[0])
        }
    }

    func grab(_ source: X11Source) throws -> CapturedFrame {
        let pool = try PixelBufferPool(width: source.nativeSize.width, height: source.nativeSize.height, pixelFormat: .bgra, maximumBufferCount: 4)
        guard let frame = try source.nextFrame(from: pool) else { throw TestError.failed("the source ended") }
        return frame
    }

    func testGrabsTheWholeScreenThroughSharedMemory() throws {
        try paintQuadrants()
        let source = try X11Source(configuration: X11Source.Configuration(display: server.display, showsCursor: false))
        XCTAssertEqual(source.nativeSize, VideoSize(width: 1280, height: 720))
        XCTAssertEqual(source.pixelFormat, .bgra)
        XCTAssertTrue(source.isLive)
        try source.start()
        defer { source.stop() }
        XCTAssertTrue(source.usesSharedMemory)
        let before = MonotonicClock().now()
        let frame = try grab(source)
        XCTAssertGreaterThanOrEqual(frame.captureTime, before, "stamped with the monotonic capture time")
        XCTAssertLessThanOrEqual(frame.captureTime, MonotonicClock().now())
        for q in X11SourceTests.quadrants {
            XCTAssertEqual(pixel(frame.pixelBuffer, q.x + 320, q.y + 180), q.rgb)
            XCTAssertEqual(pixel(frame.pixelBuffer, q.x + 1, q.y + 1), q.rgb)
        }
        // The picture is the shared memory itself: no copy was made on our side.
        XCTAssertEqual(frame.pixelBuffer.bytesPerRow, 1280 * 4)
    }

    func testRingReusesSegmentsAndNeverHandsOutOneInUse() throws {
        let source = try X11Source(configuration: X11Source.Configuration(display: server.display, showsCursor: false))
        try source.start()
        defer { source.stop() }
        let pool = try PixelBufferPool(width: 1280, height: 720, pixelFormat: .bgra, maximumBufferCount: 1)
        var held: [PixelBuffer] = []
        for _ in 0..<X11Grabber.ringCapacity {
            held.append(try XCTUnwrap(try source.nextFrame(from: pool)).pixelBuffer)
        }
        XCTAssertEqual(Set(held.map(\.storageIdentity)).count, X11Grabber.ringCapacity, "each held picture has its own segment")
        XCTAssertThrowsError(try source.nextFrame(from: pool)) { error in
            XCTAssertEqual((error as? SwiftRecordError)?.kind, .poolExhausted)
        }
        let identities = Set(held.map(\.storageIdentity))
        held.removeAll()
        for _ in 0..<10 {
            let f = try XCTUnwrap(try source.nextFrame(from: pool))
            XCTAssertTrue(identities.contains(f.pixelBuffer.storageIdentity), "a released segment is reused")
        }
        // Steady grabbing needs one segment: the others are given back once idle.
        for _ in 0...X11Grabber.idleSegmentLifetime { _ = try source.nextFrame(from: pool) }
        XCTAssertEqual(source.sharedMemorySegmentIDs.count, 1)
    }

    func testRegionShowsThatPartOfTheScreen() throws {
        try paintQuadrants()
        let region = CaptureRect(x: 600, y: 340, width: 80, height: 40)
        let source = try X11Source(configuration: X11Source.Configuration(display: server.display, area: .region(region), showsCursor: false))
        XCTAssertEqual(source.nativeSize, VideoSize(width: 80, height: 40))
        try source.start()
        defer { source.stop() }
        let frame = try grab(source)
        XCTAssertEqual(pixel(frame.pixelBuffer, 0, 0), 0xE02020)
        XCTAssertEqual(pixel(frame.pixelBuffer, 79, 0), 0x20C040)
        XCTAssertEqual(pixel(frame.pixelBuffer, 0, 39), 0x2040E0)
        XCTAssertEqual(pixel(frame.pixelBuffer, 79, 39), 0xF0F0F0)
    }

    func testOddRegionGrowsToEvenSides() throws {
        let source = try X11Source(configuration: X11Source.Configuration(display: server.display, area: .region(CaptureRect(x: 10, y: 10, width: 321, height: 241))))
        XCTAssertEqual(source.requestedArea, CaptureRect(x: 10, y: 10, width: 321, height: 241))
        XCTAssertEqual(source.nativeSize, VideoSize(width: 322, height: 242))
        XCTAssertEqual(source.notices, ["capturing 10,10,322,242 instead of 10,10,321,241: 4:2:0 video needs even sides"])
        XCTAssertEqual(source.captureDescription, "region 10,10,321,241 of display \(server.display) at 322x242")
        // At the screen's right and bottom edges the area grows left and up instead.
        let edge = try X11Source(configuration: X11Source.Configuration(display: server.display, area: .region(CaptureRect(x: 1279, y: 719, width: 1, height: 1))))
        XCTAssertEqual(edge.initialCaptureArea, CaptureRect(x: 1278, y: 718, width: 2, height: 2))
        XCTAssertEqual(X11Source.evenArea(CaptureRect(x: 0, y: 0, width: 5, height: 3), screen: VideoSize(width: 5, height: 3)),
                       CaptureRect(x: 0, y: 0, width: 4, height: 2), "a screen with odd sides loses a pixel")
    }

    func testRegionOutsideTheScreenIsAClearError() throws {
        XCTAssertThrowsError(try X11Source(configuration: X11Source.Configuration(display: server.display, area: .region(CaptureRect(x: 1000, y: 600, width: 640, height: 360))))) { error in
            let e = error as? SwiftRecordError
            XCTAssertEqual(e?.kind, .invalidArgument)
            XCTAssertTrue(e?.message.contains("is not inside the 1280x720 screen") ?? false, "\(error)")
        }
    }

    func testMissingDisplayAndWindowAreClearErrors() throws {
        XCTAssertThrowsError(try X11Source(configuration: X11Source.Configuration(display: ":987"))) { error in
            XCTAssertTrue((error as? SwiftRecordError)?.message.contains("cannot open X display ':987'") ?? false, "\(error)")
        }
        XCTAssertThrowsError(try X11Source(configuration: X11Source.Configuration(display: server.display, area: .window(0x7777777)))) { error in
            XCTAssertTrue((error as? SwiftRecordError)?.message.contains("has no window 0x7777777") ?? false, "\(error)")
        }
    }

    func testWindowIsFollowedAsItMoves() throws {
        let painter = try XPainter(server)
        painter.fill(x: 0, y: 0, width: 1280, height: 720, rgb: 0x101010)
        painter.movePointer(x: 1270, y: 710)
        let window = painter.window(x: 50, y: 60, width: 200, height: 100, rgb: 0x30A0F0)
        defer { painter.destroy(window) }
        let source = try X11Source(configuration: X11Source.Configuration(display: server.display, area: .window(window), showsCursor: false))
        XCTAssertEqual(source.nativeSize, VideoSize(width: 200, height: 100))
        try source.start()
        defer { source.stop() }
        var frame = try grab(source)
        XCTAssertEqual(source.captureArea, CaptureRect(x: 50, y: 60, width: 200, height: 100))
        XCTAssertEqual(pixel(frame.pixelBuffer, 0, 0), 0x30A0F0)
        XCTAssertEqual(pixel(frame.pixelBuffer, 199, 99), 0x30A0F0)
        painter.move(window, x: 700, y: 500)
        frame = try grab(source)
        XCTAssertEqual(source.captureArea, CaptureRect(x: 700, y: 500, width: 200, height: 100))
        XCTAssertEqual(pixel(frame.pixelBuffer, 0, 0), 0x30A0F0)
        XCTAssertEqual(pixel(frame.pixelBuffer, 199, 99), 0x30A0F0)
        // Partly off screen: only the window's own pixels (80x40 of it are on the screen),
        // the rest black; never the neighbouring part of the screen.
        painter.move(window, x: 1200, y: 680)
        frame = try grab(source)
        XCTAssertEqual(source.captureArea, CaptureRect(x: 1200, y: 680, width: 200, height: 100))
        XCTAssertEqual(pixel(frame.pixelBuffer, 0, 0), 0x30A0F0)
        XCTAssertEqual(pixel(frame.pixelBuffer, 79, 39), 0x30A0F0)
        XCTAssertEqual(pixel(frame.pixelBuffer, 80, 0), 0x000000)
        XCTAssertEqual(pixel(frame.pixelBuffer, 0, 40), 0x000000)
        XCTAssertEqual(pixel(frame.pixelBuffer, 199, 99), 0x000000)
        var neighbours = 0
        for y in 0..<100 { for x in 0..<200 where pixel(frame.pixelBuffer, x, y) == 0x101010 { neighbours += 1 } }
        XCTAssertEqual(neighbours, 0, "pixels from outside the window")
        // Wholly off screen: black.
        painter.move(window, x: -400, y: 10)
        frame = try grab(source)
        XCTAssertEqual(pixel(frame.pixelBuffer, 100, 50), 0x000000)
        // Closed: a clear error.
        painter.destroy(window)
        XCTAssertThrowsError(try grab(source)) { error in
            XCTAssertTrue((error as? SwiftRecordError)?.message.contains("is gone") ?? false, "\(error)")
        }
    }

    func testCursorIsCompositedUnlessTurnedOff() throws {
        let painter = try XPainter(server)
        painter.fill(x: 0, y: 0, width: 1280, height: 720, rgb: 0x808080)
        painter.movePointer(x: 400, y: 300)
        func changedPixels(showsCursor: Bool) throws -> Int {
            let source = try X11Source(configuration: X11Source.Configuration(display: server.display, area: .region(CaptureRect(x: 360, y: 260, width: 80, height: 80)), showsCursor: showsCursor))
            try source.start()
            defer { source.stop() }
            let frame = try grab(source)
            var changed = 0
            for y in 0..<80 { for x in 0..<80 where pixel(frame.pixelBuffer, x, y) != 0x808080 { changed += 1 } }
            return changed
        }
        XCTAssertGreaterThan(try changedPixels(showsCursor: true), 20, "the cursor shows around the pointer")
        XCTAssertEqual(try changedPixels(showsCursor: false), 0)
        painter.movePointer(x: 1270, y: 710)
    }

    func testXGetImageFallbackGivesTheSamePictures() throws {
        try paintQuadrants()
        let source = try X11Source(configuration: X11Source.Configuration(display: server.display, showsCursor: false, allowsSharedMemory: false))
        try source.start()
        defer { source.stop() }
        XCTAssertFalse(source.usesSharedMemory)
        let frame = try grab(source)
        for q in X11SourceTests.quadrants { XCTAssertEqual(pixel(frame.pixelBuffer, q.x + 320, q.y + 180), q.rgb) }
    }

    func testServerWithoutMITSHMUsesXGetImage() throws {
        let plain = try XvfbServer(size: "320x240", extraArguments: ["-extension", "MIT-SHM"])
        defer { plain.stop() }
        do {
            let painter = try XPainter(plain)
            painter.fill(x: 0, y: 0, width: 320, height: 240, rgb: 0x123456)
        }
        let source = try X11Source(configuration: X11Source.Configuration(display: plain.display, showsCursor: false))
        try source.start()
        defer { source.stop() }
        XCTAssertFalse(source.usesSharedMemory)
        XCTAssertEqual(pixel(try grab(source).pixelBuffer, 100, 100), 0x123456)
    }

    func testDisplayGoingAwayIsAnErrorAndLeavesNoSharedMemory() throws {
        let doomed = try XvfbServer(size: "320x240")
        let source = try X11Source(configuration: X11Source.Configuration(display: doomed.display))
        try source.start()
        let pool = try PixelBufferPool(width: 320, height: 240, pixelFormat: .bgra, maximumBufferCount: 2)
        var held: CapturedFrame? = try source.nextFrame(from: pool)
        let segments = source.sharedMemorySegmentIDs
        XCTAssertFalse(segments.isEmpty)
        doomed.kill9()
        XCTAssertThrowsError(try source.nextFrame(from: pool)) { error in
            let e = error as? SwiftRecordError
            XCTAssertEqual(e?.kind, .io)
            XCTAssertTrue(e?.message.contains("lost the connection to X display") ?? false, "\(error)")
        }
        // Every later call says the same, and stopping does not hang.
        XCTAssertThrowsError(try source.nextFrame(from: pool))
        source.stop()
        source.stop()
        // A picture still held keeps its segment mapped; once it goes, the segment is gone.
        XCTAssertEqual(held?.pixelBuffer.width, 320)
        held = nil
        for id in segments {
            var ds = shmid_ds()
            XCTAssertEqual(shmctl(id, IPC_STAT, &ds), -1, "segment \(id) is gone")
        }
    }

    func testSegmentsAreRemovedOnStop() throws {
        let source = try X11Source(configuration: X11Source.Configuration(display: server.display))
        try source.start()
        let pool = try PixelBufferPool(width: 1280, height: 720, pixelFormat: .bgra, maximumBufferCount: 2)
        _ = try source.nextFrame(from: pool)
        let segments = source.sharedMemorySegmentIDs
        XCTAssertFalse(segments.isEmpty)
        for id in segments {
            // Marked for removal while in use: gone however the process ends.
            var ds = shmid_ds()
            XCTAssertEqual(shmctl(id, IPC_STAT, &ds), 0)
            XCTAssertNotEqual(Int32(ds.shm_perm.mode) & Int32(SHM_DEST), 0, "segment \(id) is marked IPC_RMID")
        }
        source.stop()
        for id in segments {
            var ds = shmid_ds()
            XCTAssertEqual(shmctl(id, IPC_STAT, &ds), -1, "segment \(id) is gone after stop()")
        }
    }

    func testPixelLayoutsOtherThanBGRAAreConverted() {
        // 24 bits per pixel, 0xRRGGBB little-endian (B, G, R in memory), and 16-bit 5-6-5.
        let rgb24 = X11PixelLayout(bitsPerPixel: 24, leastSignificantByteFirst: true, redMask: 0xFF0000, greenMask: 0xFF00, blueMask: 0xFF)
        XCTAssertFalse(rgb24.isBGRA)
        XCTAssertTrue(rgb24.isSupported)
        let src: [UInt8] = [0x10, 0x20, 0x30, 0xAA, 0xBB, 0xCC]
        var dst = [UInt8](repeating: 0, count: 8)
        src.withUnsafeBytes { s in
            dst.withUnsafeMutableBytes { d in
                rgb24.convert(from: s.baseAddress!, bytesPerRow: 6, into: d.baseAddress!, bytesPerRow: 8, width: 2, height: 1)
            }
        }
        XCTAssertEqual(dst, [0x10, 0x20, 0x30, 255, 0xAA, 0xBB, 0xCC, 255])
        let rgb565 = X11PixelLayout(bitsPerPixel: 16, leastSignificantByteFirst: true, redMask: 0xF800, greenMask: 0x07E0, blueMask: 0x001F)
        let white: [UInt8] = [0xFF, 0xFF]
        var out = [UInt8](repeating: 0, count: 4)
        white.withUnsafeBytes { s in
            out.withUnsafeMutableBytes { d in
                rgb565.convert(from: s.baseAddress!, bytesPerRow: 2, into: d.baseAddress!, bytesPerRow: 4, width: 1, height: 1)
            }
        }
        XCTAssertEqual(out, [255, 255, 255, 255])
        XCTAssertTrue(X11PixelLayout(bitsPerPixel: 32, leastSignificantByteFirst: true, redMask: 0xFF0000, greenMask: 0xFF00, blueMask: 0xFF).isBGRA)
    }
}

import SwiftRecord
import XCTest

final class PixelBufferPoolTests: XCTestCase {
    func testBuffersAreReusedAndSteadyStateAllocatesNothing() throws {
        let pool = try PixelBufferPool(width: 1280, height: 720, pixelFormat: .yuv420p, maximumBufferCount: 3)
        var first: UInt = 0
        do {
            let b = try pool.makePixelBuffer()
            first = b.storageIdentity
            XCTAssertEqual(pool.outstandingBufferCount, 1)
        }
        XCTAssertEqual(pool.outstandingBufferCount, 0)
        let again = try pool.makePixelBuffer()
        XCTAssertEqual(again.storageIdentity, first, "released storage comes back")
        _ = again
        let warm = pool.storageAllocationCount
        for _ in 0..<1000 {
            let a = try pool.makePixelBuffer()
            let b = try pool.makePixelBuffer()
            _ = (a, b)
        }
        XCTAssertEqual(pool.storageAllocationCount, max(warm, 3), "no new storage in steady state")
    }

    func testPoolIsBounded() throws {
        let pool = try PixelBufferPool(width: 64, height: 64, pixelFormat: .bgra, maximumBufferCount: 2)
        let a = try pool.makePixelBuffer(), b = try pool.makePixelBuffer()
        XCTAssertNil(pool.makePixelBufferIfAvailable())
        XCTAssertThrowsError(try pool.makePixelBuffer()) { e in
            XCTAssertEqual((e as? SwiftRecordError)?.kind, .poolExhausted)
        }
        _ = (a, b)
    }

    func testPlanesHaveStridesAndSizes() throws {
        let b = try PixelBuffer(width: 101, height: 51, pixelFormat: .yuv420p)
        XCTAssertEqual(b.planeCount, 3)
        b.withReadAccess { planes in
            XCTAssertEqual(planes[0].rowLength, 101)
            XCTAssertEqual(planes[1].rowLength, 51)
            XCTAssertEqual(planes[1].height, 26)
            XCTAssertGreaterThanOrEqual(planes[0].bytesPerRow, 101)
            XCTAssertEqual(planes[0].bytesPerRow % 64, 0, "rows aligned for SIMD")
        }
        let nv12 = try PixelBuffer(width: 64, height: 32, pixelFormat: .nv12)
        XCTAssertEqual(nv12.planeCount, 2)
        XCTAssertThrowsError(try PixelBuffer(width: 0, height: 10, pixelFormat: .bgra))
        XCTAssertThrowsError(try PixelBufferPool(width: 10, height: 10, pixelFormat: .bgra, maximumBufferCount: 0))
    }

    func testWriteAccessCopiesSharedStorage() throws {
        let pool = try PixelBufferPool(width: 32, height: 32, pixelFormat: .gray, maximumBufferCount: 2)
        let a = try pool.makePixelBuffer()
        _ = a.withWriteAccess { $0[0].baseAddress.initializeMemory(as: UInt8.self, repeating: 7, count: 32) }
        XCTAssertTrue(a.isUniquelyReferenced)
        let b = try pool.makePixelBuffer()
        try b.copyContents(from: a)
        b.withReadAccess { XCTAssertEqual($0[0].baseAddress.load(as: UInt8.self), 7) }
    }
}

import Foundation
@testable import SwiftRecord
import XCTest

/// Converting only changed rectangles gives, sample for sample, what converting the whole
/// picture gives (damage-driven capture relies on it).
final class RegionConverterTests: XCTestCase {
    func randomize(_ buffer: PixelBuffer, _ rect: PixelRegion, seed: UInt64) {
        var state = seed | 1
        buffer.withWriteAccess { planes in
            for row in rect.y..<(rect.y + rect.height) {
                let line = (planes[0].baseAddress + row * planes[0].bytesPerRow).assumingMemoryBound(to: UInt8.self)
                for i in (4 * rect.x)..<(4 * (rect.x + rect.width)) {
                    state ^= state << 13; state ^= state >> 7; state ^= state << 17
                    line[i] = UInt8(truncatingIfNeeded: state)
                }
            }
        }
    }

    func samples(_ b: PixelBuffer) -> [UInt8] {
        b.withReadAccess { planes in
            planes.flatMap { p in
                (0..<p.height).flatMap { row in Array(UnsafeRawBufferPointer(start: p.baseAddress + row * p.bytesPerRow, count: p.rowLength)) }
            }
        }
    }

    func testChangedRectanglesMatchAWholeConversion() throws {
        let (w, h) = (96, 50)
        let whole = PixelRegion(x: 0, y: 0, width: w, height: h)
        let converter = try RegionConverter(width: w, height: h, sourceFormat: .bgra, color: .bt709, convertsRegions: true)
        let source = try PixelBuffer(width: w, height: h, pixelFormat: .bgra)
        randomize(source, whole, seed: 1)
        let kept = try PixelBuffer(width: w, height: h, pixelFormat: .yuv420p)
        try converter.convert([whole], from: source, into: kept)
        // Odd corners and sides, overlapping, at the edges, one pixel wide.
        let changes = [PixelRegion(x: 3, y: 5, width: 17, height: 9), PixelRegion(x: 10, y: 7, width: 40, height: 1),
                       PixelRegion(x: 95, y: 49, width: 1, height: 1), PixelRegion(x: 0, y: 20, width: 96, height: 3),
                       PixelRegion(x: 61, y: 0, width: 1, height: 50)]
        for (i, r) in changes.enumerated() { randomize(source, r, seed: UInt64(i + 2)) }
        let reference = try PixelBuffer(width: w, height: h, pixelFormat: .yuv420p)
        try converter.convert([whole], from: source, into: reference)
        let converted = try converter.convert(changes, from: source, into: kept)
        XCTAssertEqual(samples(kept), samples(reference))
        XCTAssertLessThan(converted, w * h / 2, "only the rectangles are converted")
        XCTAssertNil(converter.aligned(PixelRegion(x: 96, y: 0, width: 4, height: 4)))
        XCTAssertEqual(converter.aligned(PixelRegion(x: 3, y: 5, width: 1, height: 1)), PixelRegion(x: 2, y: 4, width: 2, height: 2))
    }
}

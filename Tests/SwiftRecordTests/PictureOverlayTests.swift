// Issue 29: PictureOverlay, two pictures in and one out, on pictures of the test's own.
//
// Catalogue:
// - testScaledAndFittingOverlaysLandInTheirRectangle: a 64x48 yuv420p base (luma 50) with a
//   32x24 overlay (luma 200) scaled into the bottom-right 16x12 rectangle 4 pixels in, and a
//   16x12 overlay (luma 120) that already fits written as it is: the rectangle holds the
//   overlay's luma and chroma, every pixel outside it the base's; the base is untouched.
import SwiftRecord
import XCTest

final class PictureOverlayTests: XCTestCase {
    private func picture(_ width: Int, _ height: Int, luma: UInt8, chroma: UInt8) throws -> PixelBuffer {
        let p = try PixelBuffer(width: width, height: height, pixelFormat: .yuv420p)
        p.withWriteAccess { planes in
            for (i, plane) in planes.enumerated() {
                for row in 0..<plane.height {
                    (plane.baseAddress + row * plane.bytesPerRow).initializeMemory(as: UInt8.self, repeating: i == 0 ? luma : chroma, count: plane.rowLength)
                }
            }
        }
        return p
    }

    private func value(_ p: PixelBuffer, plane: Int, x: Int, y: Int) -> UInt8 {
        p.withReadAccess { planes in planes[plane].baseAddress.load(fromByteOffset: y * planes[plane].bytesPerRow + x, as: UInt8.self) }
    }

    func testScaledAndFittingOverlaysLandInTheirRectangle() throws {
        let base = try picture(64, 48, luma: 50, chroma: 128)
        let overlay = try PictureOverlay(corner: .bottomRight, size: VideoSize(width: 16, height: 12), margin: 4,
                                         baseSize: VideoSize(width: 64, height: 48), baseFormat: .yuv420p)
        XCTAssertEqual(overlay.rectangle, PixelRegion(x: 44, y: 32, width: 16, height: 12))
        for (size, luma, chroma) in [((32, 24), UInt8(200), UInt8(60)), ((16, 12), UInt8(120), UInt8(180))] {
            let camera = try picture(size.0, size.1, luma: luma, chroma: chroma)
            let out = try PixelBuffer(width: 64, height: 48, pixelFormat: .yuv420p)
            try overlay.compose(base, camera, into: out)
            for y in 0..<48 {
                for x in 0..<64 {
                    let inside = x >= 44 && x < 60 && y >= 32 && y < 44
                    XCTAssertEqual(Int(value(out, plane: 0, x: x, y: y)), Int(inside ? luma : 50), accuracy: 1, "\(size) luma at \(x),\(y)")
                }
            }
            for y in 0..<24 {
                for x in 0..<32 {
                    let inside = x >= 22 && x < 30 && y >= 16 && y < 22
                    XCTAssertEqual(Int(value(out, plane: 1, x: x, y: y)), Int(inside ? chroma : 128), accuracy: 1, "\(size) U at \(x),\(y)")
                }
            }
            XCTAssertEqual(value(base, plane: 0, x: 50, y: 40), 50, "the base is not written")
        }
    }
}

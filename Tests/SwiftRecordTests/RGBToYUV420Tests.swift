import Foundation
@testable import SwiftRecord
import XCTest

/// The one-pass RGB to 4:2:0 path against the exact formula, and against libswscale.
final class RGBToYUV420Tests: XCTestCase {
    /// Exact BT.709 limited range.
    func exact(_ r: Double, _ g: Double, _ b: Double) -> (y: Double, cb: Double, cr: Double) {
        let (kr, kb) = (0.2126, 0.0722)
        let y = kr * r + (1 - kr - kb) * g + kb * b
        return (16 + 219 * y / 255, 128 + 224 * (b - y) / (2 * (1 - kb)) / 255, 128 + 224 * (r - y) / (2 * (1 - kr)) / 255)
    }

    func bgra(width: Int, height: Int, seed: UInt64) throws -> PixelBuffer {
        let buffer = try PixelBuffer(width: width, height: height, pixelFormat: .bgra)
        var state = seed | 1
        buffer.withWriteAccess { planes in
            for row in 0..<height {
                let line = (planes[0].baseAddress + row * planes[0].bytesPerRow).assumingMemoryBound(to: UInt8.self)
                for i in 0..<(width * 4) {
                    state ^= state << 13; state ^= state >> 7; state ^= state << 17
                    line[i] = UInt8(truncatingIfNeeded: state)
                }
            }
        }
        return buffer
    }

    func pixel(_ b: PixelBuffer, _ x: Int, _ y: Int) -> (Double, Double, Double) {
        b.withReadAccess { p in
            let q = (p[0].baseAddress + y * p[0].bytesPerRow + 4 * x).assumingMemoryBound(to: UInt8.self)
            return (Double(q[2]), Double(q[1]), Double(q[0]))
        }
    }

    func testMatchesTheExactFormulaAtEvenAndOddSizes() throws {
        for (w, h) in [(64, 48), (37, 19), (1, 1), (18, 3)] {
            let src = try bgra(width: w, height: h, seed: UInt64(w * 1000 + h))
            let dst = try PixelBuffer(width: w, height: h, pixelFormat: .yuv420p)
            // Directly: debug builds' PixelConverter uses libswscale instead (see isFastInThisBuild).
            let converter = try XCTUnwrap(RGBToYUV420(source: .bgra, destination: .yuv420p, color: .bt709))
            src.withReadAccess { s in
                dst.withWriteAccess { d in
                    converter.convert(source: s[0], luma: d[0], cb: d[1], cr: d[2], width: w, height: h)
                }
            }
            dst.withReadAccess { planes in
                for y in 0..<h {
                    for x in 0..<w {
                        let (r, g, b) = pixel(src, x, y)
                        let got = Double(planes[0].baseAddress.load(fromByteOffset: y * planes[0].bytesPerRow + x, as: UInt8.self))
                        XCTAssertLessThanOrEqual(abs(got - exact(r, g, b).y), 1.5, "luma (\(x),\(y)) of \(w)x\(h)")
                    }
                }
                for cy in 0..<((h + 1) / 2) {
                    for cx in 0..<((w + 1) / 2) {
                        var sum = (0.0, 0.0, 0.0), n = 0.0
                        for y in (2 * cy)..<min(h, 2 * cy + 2) {
                            for x in (2 * cx)..<min(w, 2 * cx + 2) {
                                let p = pixel(src, x, y)
                                sum = (sum.0 + p.0, sum.1 + p.1, sum.2 + p.2)
                                n += 1
                            }
                        }
                        let want = exact(sum.0 / n, sum.1 / n, sum.2 / n)
                        let cb = Double(planes[1].baseAddress.load(fromByteOffset: cy * planes[1].bytesPerRow + cx, as: UInt8.self))
                        let cr = Double(planes[2].baseAddress.load(fromByteOffset: cy * planes[2].bytesPerRow + cx, as: UInt8.self))
                        XCTAssertLessThanOrEqual(abs(cb - want.cb), 2, "Cb (\(cx),\(cy)) of \(w)x\(h)")
                        XCTAssertLessThanOrEqual(abs(cr - want.cr), 2, "Cr (\(cx),\(cy)) of \(w)x\(h)")
                    }
                }
            }
        }
    }

    func testWhiteBlackAndGreyAreExact() throws {
        let c = try XCTUnwrap(RGBToYUV420(source: .bgra, destination: .yuv420p, color: .bt709))
        for (value, y) in [(UInt8(255), UInt8(235)), (0, 16), (128, 126)] {
            var src = [UInt8](repeating: value, count: 16 * 2 * 4)
            var planes = ([UInt8](repeating: 0, count: 32), [UInt8](repeating: 0, count: 8), [UInt8](repeating: 0, count: 8))
            src.withUnsafeMutableBytes { s in
                planes.0.withUnsafeMutableBytes { yp in
                    planes.1.withUnsafeMutableBytes { up in
                        planes.2.withUnsafeMutableBytes { vp in
                            c.convert(source: PixelPlane(baseAddress: s.baseAddress!, bytesPerRow: 64, rowLength: 64, height: 2),
                                      luma: PixelPlane(baseAddress: yp.baseAddress!, bytesPerRow: 16, rowLength: 16, height: 2),
                                      cb: PixelPlane(baseAddress: up.baseAddress!, bytesPerRow: 8, rowLength: 8, height: 1),
                                      cr: PixelPlane(baseAddress: vp.baseAddress!, bytesPerRow: 8, rowLength: 8, height: 1),
                                      width: 16, height: 2)
                        }
                    }
                }
            }
            XCTAssertEqual(Set(planes.0), [y], "luma of \(value)")
            XCTAssertEqual(Set(planes.1), [128])
            XCTAssertEqual(Set(planes.2), [128])
        }
        // Full range keeps 0…255, and only 32-bit RGB to yuv420p takes this path.
        XCTAssertNotNil(RGBToYUV420(source: .rgba, destination: .yuv420p, color: ColorProperties(fullRange: true)))
        XCTAssertNil(RGBToYUV420(source: .rgb24, destination: .yuv420p, color: .bt709))
        XCTAssertNil(RGBToYUV420(source: .bgra, destination: .nv12, color: .bt709))
    }
}

internal import CX11
import SwiftRecord

/// How an X server lays out the pixels of a ZPixmap image: bits per pixel, byte order
/// and the channel masks of its visual.
struct X11PixelLayout: Equatable, Sendable {
    let bitsPerPixel: Int
    let leastSignificantByteFirst: Bool
    let redMask: UInt32
    let greenMask: UInt32
    let blueMask: UInt32

    init(bitsPerPixel: Int, leastSignificantByteFirst: Bool, redMask: UInt32, greenMask: UInt32, blueMask: UInt32) {
        self.bitsPerPixel = bitsPerPixel
        self.leastSignificantByteFirst = leastSignificantByteFirst
        self.redMask = redMask
        self.greenMask = greenMask
        self.blueMask = blueMask
    }

    init(_ image: XImage) {
        self.init(bitsPerPixel: Int(image.bits_per_pixel), leastSignificantByteFirst: image.byte_order == LSBFirst,
                  redMask: UInt32(truncatingIfNeeded: image.red_mask), greenMask: UInt32(truncatingIfNeeded: image.green_mask),
                  blueMask: UInt32(truncatingIfNeeded: image.blue_mask))
    }

    /// 32 bits per pixel, little-endian, 0xRRGGBB: bytes B, G, R, X in memory — BGRA as it
    /// is, so the grabbed image is the pixel buffer (depth 24 and depth 32 visuals alike).
    var isBGRA: Bool {
        bitsPerPixel == 32 && leastSignificantByteFirst && redMask == 0xFF0000 && greenMask == 0xFF00 && blueMask == 0xFF
    }

    /// Layouts the generic converter handles: 16, 24 or 32 bits per pixel, true colour.
    var isSupported: Bool {
        [16, 24, 32].contains(bitsPerPixel) && redMask != 0 && greenMask != 0 && blueMask != 0
    }

    var description: String {
        "\(bitsPerPixel) bits per pixel, \(leastSignificantByteFirst ? "LSB" : "MSB") first, masks "
            + [redMask, greenMask, blueMask].map { "0x" + String($0, radix: 16) }.joined(separator: "/")
    }

    /// Copies `width`×`height` pixels in this layout (rows `bytesPerRow` apart) into the
    /// BGRA `buffer` with their top-left corner at (`x`, `y`), converting unless BGRA.
    func copy(from source: UnsafeRawPointer, bytesPerRow stride: Int, into buffer: PixelBuffer,
              atX x: Int, y: Int, width: Int, height: Int) {
        buffer.withWriteAccess { planes in
            let plane = planes[0]
            let origin = plane.baseAddress + y * plane.bytesPerRow + x * 4
            if isBGRA {
                for row in 0..<height {
                    (origin + row * plane.bytesPerRow).copyMemory(from: source + row * stride, byteCount: width * 4)
                }
            } else {
                convert(from: source, bytesPerRow: stride, into: origin, bytesPerRow: plane.bytesPerRow, width: width, height: height)
            }
        }
    }

    /// Converts rows of this layout into BGRA rows (the slow path for 24-bit and other
    /// layouts; 32-bit BGRA never comes here).
    func convert(from source: UnsafeRawPointer, bytesPerRow sourceStride: Int,
                 into destination: UnsafeMutableRawPointer, bytesPerRow destinationStride: Int, width: Int, height: Int) {
        let bytes = bitsPerPixel / 8
        let channels = [redMask, greenMask, blueMask].map { mask -> (shift: UInt32, max: UInt32) in
            let shift = UInt32(mask.trailingZeroBitCount)
            return (shift, mask >> shift)
        }
        for row in 0..<height {
            let s = source + row * sourceStride
            let d = (destination + row * destinationStride).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                var v: UInt32 = 0
                let p = s + x * bytes
                for i in 0..<bytes {
                    let b = UInt32(p.load(fromByteOffset: i, as: UInt8.self))
                    v |= leastSignificantByteFirst ? b << (8 * UInt32(i)) : b << (8 * UInt32(bytes - 1 - i))
                }
                let r = scale((v & redMask) >> channels[0].shift, channels[0].max)
                let g = scale((v & greenMask) >> channels[1].shift, channels[1].max)
                let b = scale((v & blueMask) >> channels[2].shift, channels[2].max)
                d[4 * x] = b
                d[4 * x + 1] = g
                d[4 * x + 2] = r
                d[4 * x + 3] = 255
            }
        }
    }

    @inline(__always)
    private func scale(_ value: UInt32, _ max: UInt32) -> UInt8 {
        max == 255 ? UInt8(truncatingIfNeeded: value) : UInt8(truncatingIfNeeded: (value * 255 + max / 2) / max)
    }
}

import SwiftRecord

extension PixelBuffer {
    /// A BGRA picture's pixels as packed RGB rows, as GStreamer's `format=RGB` writes them.
    var packedRGB: [UInt8] {
        withReadAccess { planes in
            let base = planes[0].baseAddress.assumingMemoryBound(to: UInt8.self)
            return (0..<height).flatMap { row in
                (0..<width).flatMap { column in
                    let p = base + row * planes[0].bytesPerRow + column * 4
                    return [p[2], p[1], p[0]]
                }
            }
        }
    }
}

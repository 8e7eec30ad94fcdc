/// The frame-number band's layout and drawing (`FrameIndexBand` in SwiftRecord reads it
/// back): 32 black/white blocks across the full width, blocks 0–1 a white/black sync pair,
/// 2–25 the frame index (24 bits, most significant first), 26–31 a 6-bit check. Without
/// FFmpeg or Foundation, so a broadcast sender draws the same band the recorder verifies.
package enum IndexBandDrawing {
    /// Blocks across the picture.
    package static let blockCount = 32
    package static let indexBits = 24
    /// Luma of a set bit and a clear bit (limited-range white and black).
    package static let white: UInt8 = 235
    package static let black: UInt8 = 16
    /// Frame indices wrap after 2^24.
    package static let indexModulus = 1 << indexBits

    /// Smallest picture that can carry a band: 2-pixel blocks, 8 rows.
    package static let minimumWidth = 64
    package static let minimumHeight = 16

    /// Rows the band takes in a picture `height` rows high (even, at least 8).
    package static func bandHeight(forPictureHeight height: Int) -> Int {
        max(8, (height / 24) & ~1)
    }

    /// The 6-bit check of a (wrapped) index.
    package static func check(_ index: Int) -> Int {
        (index ^ (index >> 6) ^ (index >> 12) ^ (index >> 18) ^ 0b101010) & 63
    }

    /// Block `block`'s bit for `index` (already wrapped to `indexModulus`), its check `check`.
    static func bit(_ block: Int, index: Int, check: Int) -> Bool {
        switch block {
        case 0: return true
        case 1: return false
        case 2..<(2 + indexBits): return (index >> (1 + indexBits - block)) & 1 == 1
        default: return (check >> (blockCount - 1 - block)) & 1 == 1
        }
    }

    /// Draws the band for `index` into a luma plane (neutral chroma under it is the caller's);
    /// nothing in a picture smaller than the minimum. Allocates nothing.
    package static func draw(index: Int, luma: UnsafeMutablePointer<UInt8>, bytesPerRow: Int, width: Int, height: Int) {
        guard width >= minimumWidth, height >= minimumHeight else { return }
        let blockWidth = width / blockCount
        let rows = bandHeight(forPictureHeight: height)
        let wrapped = index % indexModulus
        let c = check(wrapped)
        for row in 0..<rows {
            let line = luma + row * bytesPerRow
            for b in 0..<blockCount {
                (line + b * blockWidth).update(repeating: bit(b, index: wrapped, check: c) ? white : black, count: blockWidth)
            }
            let rest = width - blockCount * blockWidth
            if rest > 0 { (line + blockCount * blockWidth).update(repeating: black, count: rest) }
        }
    }
}

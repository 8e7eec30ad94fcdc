import SwiftRecordScene

/// A machine-readable frame number drawn into the top rows of a picture: 32 black/white
/// blocks across the full width. Blocks 0–1 are a white/black sync pair, 2–25 the frame
/// index (24 bits, most significant first), 26–31 a 6-bit check. Blocks are W/32 pixels
/// wide and H/24 rows high, large enough to survive lossy H.264 at 500 kbit/s, so a
/// decoded recording proves which frames it holds: none dropped, repeated or reordered.
/// SwiftRecordScene draws it (`SyntheticScene`, a broadcast sender); this reads it.
public enum FrameIndexBand {
    /// Blocks across the picture.
    public static let blockCount = IndexBandDrawing.blockCount
    /// Frame indices wrap after 2^24 (about 6 days at 30 fps).
    public static let indexModulus = IndexBandDrawing.indexModulus

    /// Smallest picture that can carry a band: 2-pixel blocks, 8 rows.
    public static let minimumWidth = IndexBandDrawing.minimumWidth
    public static let minimumHeight = IndexBandDrawing.minimumHeight

    /// Rows the band takes in a picture `height` rows high (even, at least 8).
    public static func bandHeight(forPictureHeight height: Int) -> Int {
        IndexBandDrawing.bandHeight(forPictureHeight: height)
    }

    /// Reads the frame index from a luma plane, or nil when no valid band is there.
    /// Each block is judged by the mean of its inner half, so ringing at block edges from
    /// lossy coding does not matter.
    public static func decode(luma: UnsafePointer<UInt8>, bytesPerRow: Int, width: Int, height: Int) -> Int? {
        guard width >= minimumWidth, height >= minimumHeight else { return nil }
        let blockWidth = width / blockCount
        let rows = bandHeight(forPictureHeight: height)
        let y0 = rows / 4, y1 = max(y0 + 1, rows - rows / 4)
        let x0 = blockWidth / 4, x1 = max(x0 + 1, blockWidth - blockWidth / 4)
        let threshold = (Int(IndexBandDrawing.white) + Int(IndexBandDrawing.black)) / 2
        var bits: [Bool] = []
        bits.reserveCapacity(blockCount)
        for b in 0..<blockCount {
            var sum = 0, n = 0
            for y in y0..<y1 {
                let line = luma + y * bytesPerRow + b * blockWidth
                for x in x0..<x1 { sum += Int(line[x]); n += 1 }
            }
            bits.append(sum / max(n, 1) > threshold)
        }
        guard bits[0], !bits[1] else { return nil }
        var index = 0
        for b in 2..<(2 + IndexBandDrawing.indexBits) { index = index << 1 | (bits[b] ? 1 : 0) }
        var c = 0
        for b in (2 + IndexBandDrawing.indexBits)..<blockCount { c = c << 1 | (bits[b] ? 1 : 0) }
        return c == IndexBandDrawing.check(index) ? index : nil
    }
}

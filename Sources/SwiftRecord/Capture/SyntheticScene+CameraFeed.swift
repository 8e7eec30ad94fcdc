extension SyntheticScene {
    /// Draws frame `index` as an AR app's picture: the scene's objects over a camera-like
    /// feed, that is, with sensor noise of ±`noiseLevel` luma steps that differs in every
    /// frame (deterministic: frame `n` is always the same picture). Real camera pictures
    /// keep an encoder busy in a way the clean scene does not, so bit-rate checks mean
    /// something at 2 Mbit/s.
    public func renderCameraFrame(_ index: Int, into buffer: PixelBuffer, noiseLevel: Int = 3) throws(SwiftRecordError) {
        try render(frame: index, into: buffer)
        let level = max(0, min(noiseLevel, 32))
        guard level > 0 else { return }
        buffer.withWriteAccess { planes in
            let luma = planes[0]
            var state = UInt64(truncatingIfNeeded: index + 1) &* 0x9E37_79B9_7F4A_7C15 | 1
            let span = UInt64(2 * level + 1)
            for row in 0..<luma.height {
                let line = (luma.baseAddress + row * luma.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                for x in 0..<luma.rowLength {
                    state ^= state << 13; state ^= state >> 7; state ^= state << 17
                    let v = Int(line[x]) + Int(state % span) - level
                    line[x] = UInt8(min(235, max(16, v)))
                }
            }
        }
    }
}

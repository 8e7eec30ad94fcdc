import Foundation

/// Renders a deterministic animated scene into I420 pixel buffers: a scrolling diagonal
/// gradient, bouncing discs and spinning squares, with the frame index band across the
/// top. Frame `n` is always the same picture, so recordings can be compared and decoded.
///
/// Rendering is scanline spans and row copies from precomputed ramps, so a 1080p frame
/// takes a few milliseconds and the scene is never what limits a recording.
///
/// The stand-in for an AR app's rendered scene (SceneKit/RealityKit frames) on a machine
/// without a GPU.
public final class SyntheticScene: Sendable {
    public let width: Int
    public let height: Int
    public let pixelFormat = PixelFormat.yuv420p

    /// Luma ramp: a triangle wave two diagonals long, so any row is one copy from it.
    private let lumaRamp: [UInt8]
    private let rampPeriod: Int
    /// Horizontal red-difference ramp for the chroma rows.
    private let chromaRamp: [UInt8]

    struct Disc { let radius: Double; let speedX: Double; let speedY: Double; let phase: Double; let y: UInt8; let u: UInt8; let v: UInt8 }
    struct Square { let size: Double; let orbit: Double; let spin: Double; let cx: Double; let cy: Double; let y: UInt8; let u: UInt8; let v: UInt8 }
    private let discs: [Disc]
    private let squares: [Square]

    public init(width: Int, height: Int) throws(SwiftRecordError) {
        guard width >= 2, height >= 2, width <= 16384, height <= 16384, width % 2 == 0, height % 2 == 0 else {
            throw SwiftRecordError(.invalidArgument, operation: "SyntheticScene",
                                   message: "size \(width)x\(height) is not usable; expected even width and height from 2 to 16384")
        }
        self.width = width
        self.height = height
        let period = 2 * (width + height)
        rampPeriod = period
        lumaRamp = (0..<(period + width)).map { i in
            let p = i % period
            let tri = p < period / 2 ? p : period - p       // 0 … period/2
            return UInt8(40 + tri * 120 / (period / 2))     // dark blue-grey to mid grey
        }
        let cw = (width + 1) / 2
        chromaRamp = (0..<cw).map { UInt8(118 + $0 * 30 / max(cw, 1)) }
        let s = Double(min(width, height))
        discs = [
            Disc(radius: s * 0.09, speedX: 0.0071, speedY: 0.0113, phase: 0.0, y: 200, u: 60, v: 150),   // warm yellow
            Disc(radius: s * 0.06, speedX: 0.0123, speedY: 0.0067, phase: 1.7, y: 110, u: 200, v: 100),  // blue
            Disc(radius: s * 0.075, speedX: 0.0091, speedY: 0.0149, phase: 3.1, y: 120, u: 90, v: 210),  // red
        ]
        squares = [
            Square(size: s * 0.16, orbit: s * 0.18, spin: 0.035, cx: 0.3, cy: 0.6, y: 170, u: 80, v: 80),   // green
            Square(size: s * 0.10, orbit: s * 0.12, spin: -0.061, cx: 0.72, cy: 0.4, y: 225, u: 128, v: 128), // white
        ]
    }

    /// Every this many frames the scene flashes (frames 0, 30, 60, …): a box in the
    /// bottom-right corner turns from black to white for one frame, where the synthetic
    /// audio source clicks, so A/V offsets can be measured from a file.
    public static let flashInterval = 30

    /// Whether frame `index` flashes.
    public static func flashes(frame index: Int) -> Bool { index % flashInterval == 0 }

    /// The flash box: bottom-right, 1/16 of each side (at least 16 pixels, even).
    public var flashBox: (x: Int, y: Int, width: Int, height: Int) {
        let w = min(width, max(16, width / 16) & ~1), h = min(height, max(16, height / 16) & ~1)
        return (width - w, height - h, w, h)
    }

    /// Draws frame `index` into `buffer` (which must be this scene's size, in yuv420p),
    /// flashing on every `flashInterval`th frame unless `flash` says otherwise.
    public func render(frame index: Int, into buffer: PixelBuffer, flash: Bool? = nil) throws(SwiftRecordError) {
        guard buffer.width == width, buffer.height == height, buffer.pixelFormat == .yuv420p else {
            throw SwiftRecordError(.pixelBufferMismatch, operation: "SyntheticScene.render",
                                   message: "buffer is \(buffer.width)x\(buffer.height) \(buffer.pixelFormat); expected \(width)x\(height) yuv420p")
        }
        buffer.withWriteAccess { planes in
            let y = planes[0], u = planes[1], v = planes[2]
            let t = Double(index)
            let shift = (index * 3) % rampPeriod
            lumaRamp.withUnsafeBufferPointer { ramp in
                guard let base = ramp.baseAddress else { return }
                for row in 0..<height {
                    let src = base + ((row + shift) % rampPeriod)
                    (y.baseAddress + row * y.bytesPerRow).copyMemory(from: src, byteCount: width)
                }
            }
            let ch = u.height
            chromaRamp.withUnsafeBufferPointer { ramp in
                guard let base = ramp.baseAddress else { return }
                for row in 0..<ch {
                    let uv = UInt8(128 + Int(22 * sin(Double(row) / Double(max(ch, 1)) * .pi * 2 + t * 0.02)))
                    (u.baseAddress + row * u.bytesPerRow).initializeMemory(as: UInt8.self, repeating: uv, count: u.rowLength)
                    (v.baseAddress + row * v.bytesPerRow).copyMemory(from: base, byteCount: v.rowLength)
                }
            }
            let planesY = y.baseAddress.assumingMemoryBound(to: UInt8.self)
            let planesU = u.baseAddress.assumingMemoryBound(to: UInt8.self)
            let planesV = v.baseAddress.assumingMemoryBound(to: UInt8.self)
            let w = Double(width), h = Double(height)
            for d in discs {
                let cx = d.radius + bounce(t * d.speedX + d.phase) * (w - 2 * d.radius)
                let cy = d.radius + bounce(t * d.speedY + d.phase * 0.7) * (h - 2 * d.radius)
                fillSpans(y0: cy - d.radius, y1: cy + d.radius, Y: planesY, U: planesU, V: planesV,
                          strideY: y.bytesPerRow, strideC: u.bytesPerRow, color: (d.y, d.u, d.v)) { py in
                    let dy = py - cy
                    let r2 = d.radius * d.radius - dy * dy
                    guard r2 > 0 else { return nil }
                    let half = r2.squareRoot()
                    return (cx - half, cx + half)
                }
            }
            for s in squares {
                let angle = t * s.spin
                let ox = w * s.cx + s.orbit * cos(t * 0.013), oy = h * s.cy + s.orbit * sin(t * 0.013)
                let corners = (0..<4).map { k -> (Double, Double) in
                    let a = angle + Double(k) * .pi / 2
                    return (ox + s.size * 0.7071 * cos(a), oy + s.size * 0.7071 * sin(a))
                }
                let minY = corners.map(\.1).min() ?? 0, maxY = corners.map(\.1).max() ?? 0
                fillSpans(y0: minY, y1: maxY, Y: planesY, U: planesU, V: planesV,
                          strideY: y.bytesPerRow, strideC: u.bytesPerRow, color: (s.y, s.u, s.v)) { py in
                    var lo = Double.infinity, hi = -Double.infinity
                    for k in 0..<4 {
                        let (ax, ay) = corners[k], (bx, by) = corners[(k + 1) % 4]
                        guard (ay <= py && py < by) || (by <= py && py < ay) else { continue }
                        let x = ax + (py - ay) * (bx - ax) / (by - ay)
                        lo = min(lo, x); hi = max(hi, x)
                    }
                    return lo <= hi ? (lo, hi) : nil
                }
            }
            // The band: neutral chroma under it, so it reads the same in any colour conversion.
            let band = FrameIndexBand.bandHeight(forPictureHeight: height)
            if width >= FrameIndexBand.minimumWidth && height >= FrameIndexBand.minimumHeight {
                for row in 0..<(band / 2) {
                    (u.baseAddress + row * u.bytesPerRow).initializeMemory(as: UInt8.self, repeating: 128, count: u.rowLength)
                    (v.baseAddress + row * v.bytesPerRow).initializeMemory(as: UInt8.self, repeating: 128, count: v.rowLength)
                }
                FrameIndexBand.draw(index: index, luma: planesY, bytesPerRow: y.bytesPerRow, width: width, height: height)
            }
            let box = flashBox
            let on = flash ?? SyntheticScene.flashes(frame: index)
            if box.y >= FrameIndexBand.bandHeight(forPictureHeight: height) {
                for row in box.y..<(box.y + box.height) {
                    (planesY + row * y.bytesPerRow + box.x).update(repeating: on ? 235 : 16, count: box.width)
                    if row & 1 == 0 {
                        (planesU + (row / 2) * u.bytesPerRow + box.x / 2).update(repeating: 128, count: box.width / 2)
                        (planesV + (row / 2) * v.bytesPerRow + box.x / 2).update(repeating: 128, count: box.width / 2)
                    }
                }
            }
        }
    }

    /// 0…1…0 triangle wave, period 2.
    private func bounce(_ x: Double) -> Double {
        let f = x.truncatingRemainder(dividingBy: 2)
        let p = f < 0 ? f + 2 : f
        return p < 1 ? p : 2 - p
    }

    /// Fills the shape whose horizontal extent at row centre `py` is `span(py)`, rows
    /// y0…y1, clipped to the picture and kept below the index band.
    private func fillSpans(y0: Double, y1: Double, Y: UnsafeMutablePointer<UInt8>, U: UnsafeMutablePointer<UInt8>, V: UnsafeMutablePointer<UInt8>,
                           strideY: Int, strideC: Int, color: (UInt8, UInt8, UInt8), span: (Double) -> (Double, Double)?) {
        let top = max(FrameIndexBand.bandHeight(forPictureHeight: height), Int(y0.rounded(.down)))
        let bottom = min(height - 1, Int(y1.rounded(.up)))
        guard top <= bottom else { return }
        for row in top...bottom {
            guard let (a, b) = span(Double(row) + 0.5) else { continue }
            let x0 = max(0, Int(a.rounded())), x1 = min(width, Int(b.rounded()))
            guard x0 < x1 else { continue }
            (Y + row * strideY + x0).update(repeating: color.0, count: x1 - x0)
            if row & 1 == 0 {
                let c0 = x0 / 2, c1 = (x1 + 1) / 2
                (U + (row / 2) * strideC + c0).update(repeating: color.1, count: c1 - c0)
                (V + (row / 2) * strideC + c0).update(repeating: color.2, count: c1 - c0)
            }
        }
    }
}

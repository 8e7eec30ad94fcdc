#if canImport(Glibc)
import Glibc
#endif

/// An I420 picture's three planes as raw pointers and row strides: a pixel buffer's, or a
/// broadcast sender's shared buffer.
package struct ScenePlanes {
    package var y, u, v: UnsafeMutablePointer<UInt8>
    package var yBytesPerRow, uBytesPerRow, vBytesPerRow: Int
    package init(y: UnsafeMutablePointer<UInt8>, u: UnsafeMutablePointer<UInt8>, v: UnsafeMutablePointer<UInt8>,
                 yBytesPerRow: Int, uBytesPerRow: Int, vBytesPerRow: Int) {
        (self.y, self.u, self.v) = (y, u, v)
        (self.yBytesPerRow, self.uBytesPerRow, self.vBytesPerRow) = (yBytesPerRow, uBytesPerRow, vBytesPerRow)
    }
}

/// The synthetic scene's drawing (`SyntheticScene` in SwiftRecord is its pixel-buffer face):
/// a scrolling diagonal gradient, bouncing discs and spinning squares, the frame-number band
/// across the top and the flash box, on raw I420 planes, without FFmpeg or Foundation, so a
/// broadcast sender draws exactly the pictures the recorder's checks expect.
///
/// Scanline spans and row copies from precomputed ramps; a frame allocates nothing.
package final class SceneDrawing: Sendable {
    package let width: Int
    package let height: Int

    /// Luma ramp: a triangle wave two diagonals long, so any row is one copy from it.
    private let lumaRamp: [UInt8]
    private let rampPeriod: Int
    /// Horizontal red-difference ramp for the chroma rows.
    private let chromaRamp: [UInt8]

    struct Disc { let radius: Double; let speedX: Double; let speedY: Double; let phase: Double; let y: UInt8; let u: UInt8; let v: UInt8 }
    struct Square { let size: Double; let orbit: Double; let spin: Double; let cx: Double; let cy: Double; let y: UInt8; let u: UInt8; let v: UInt8 }
    private let discs: [Disc]
    private let squares: [Square]

    /// What a usable size is (the reason `init` gives nil).
    package static let sizeRule = "expected even width and height from 2 to 16384"

    /// Every this many frames the scene flashes (frames 0, 30, 60, …).
    package static let flashInterval = 30

    /// Nil when the size breaks `sizeRule`.
    package init?(width: Int, height: Int) {
        guard width >= 2, height >= 2, width <= 16384, height <= 16384, width % 2 == 0, height % 2 == 0 else { return nil }
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

    /// Whether frame `index` flashes.
    package static func flashes(frame index: Int) -> Bool { index % flashInterval == 0 }

    /// The flash box: bottom-right, 1/16 of each side (at least 16 pixels, even).
    package var flashBox: (x: Int, y: Int, width: Int, height: Int) {
        let w = min(width, max(16, width / 16) & ~1), h = min(height, max(16, height / 16) & ~1)
        return (width - w, height - h, w, h)
    }

    /// Draws frame `index` into `planes` (this scene's size), the flash box white when `flash`.
    package func draw(frame index: Int, into planes: ScenePlanes, flash: Bool) {
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        let t = Double(index)
        let shift = (index * 3) % rampPeriod
        lumaRamp.withUnsafeBufferPointer { ramp in
            guard let base = ramp.baseAddress else { return }
            for row in 0..<height {
                (planes.y + row * planes.yBytesPerRow).update(from: base + ((row + shift) % rampPeriod), count: width)
            }
        }
        chromaRamp.withUnsafeBufferPointer { ramp in
            guard let base = ramp.baseAddress else { return }
            for row in 0..<chromaHeight {
                let uv = UInt8(128 + Int(22 * sin(Double(row) / Double(max(chromaHeight, 1)) * .pi * 2 + t * 0.02)))
                (planes.u + row * planes.uBytesPerRow).update(repeating: uv, count: chromaWidth)
                (planes.v + row * planes.vBytesPerRow).update(from: base, count: chromaWidth)
            }
        }
        let w = Double(width), h = Double(height)
        for d in discs {
            let cx = d.radius + bounce(t * d.speedX + d.phase) * (w - 2 * d.radius)
            let cy = d.radius + bounce(t * d.speedY + d.phase * 0.7) * (h - 2 * d.radius)
            fillSpans(y0: cy - d.radius, y1: cy + d.radius, planes, color: (d.y, d.u, d.v)) { py in
                let dy = py - cy
                let r2 = d.radius * d.radius - dy * dy
                guard r2 > 0 else { return nil }
                let half = r2.squareRoot()
                return (cx - half, cx + half)
            }
        }
        withUnsafeTemporaryAllocation(of: (Double, Double).self, capacity: 4) { corners in
            for s in squares {
                let angle = t * s.spin
                let ox = w * s.cx + s.orbit * cos(t * 0.013), oy = h * s.cy + s.orbit * sin(t * 0.013)
                var minY = Double.infinity, maxY = -Double.infinity
                for k in 0..<4 {
                    let a = angle + Double(k) * .pi / 2
                    corners[k] = (ox + s.size * 0.7071 * cos(a), oy + s.size * 0.7071 * sin(a))
                    minY = min(minY, corners[k].1); maxY = max(maxY, corners[k].1)
                }
                fillSpans(y0: minY, y1: maxY, planes, color: (s.y, s.u, s.v)) { py in
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
        }
        // The band: neutral chroma under it, so it reads the same in any colour conversion.
        let band = IndexBandDrawing.bandHeight(forPictureHeight: height)
        if width >= IndexBandDrawing.minimumWidth && height >= IndexBandDrawing.minimumHeight {
            for row in 0..<(band / 2) {
                (planes.u + row * planes.uBytesPerRow).update(repeating: 128, count: chromaWidth)
                (planes.v + row * planes.vBytesPerRow).update(repeating: 128, count: chromaWidth)
            }
            IndexBandDrawing.draw(index: index, luma: planes.y, bytesPerRow: planes.yBytesPerRow, width: width, height: height)
        }
        let box = flashBox
        if box.y >= band {
            for row in box.y..<(box.y + box.height) {
                (planes.y + row * planes.yBytesPerRow + box.x).update(repeating: flash ? 235 : 16, count: box.width)
                if row & 1 == 0 {
                    (planes.u + (row / 2) * planes.uBytesPerRow + box.x / 2).update(repeating: 128, count: box.width / 2)
                    (planes.v + (row / 2) * planes.vBytesPerRow + box.x / 2).update(repeating: 128, count: box.width / 2)
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
    private func fillSpans(y0: Double, y1: Double, _ planes: ScenePlanes, color: (UInt8, UInt8, UInt8), span: (Double) -> (Double, Double)?) {
        let top = max(IndexBandDrawing.bandHeight(forPictureHeight: height), Int(y0.rounded(.down)))
        let bottom = min(height - 1, Int(y1.rounded(.up)))
        guard top <= bottom else { return }
        for row in top...bottom {
            guard let (a, b) = span(Double(row) + 0.5) else { continue }
            let x0 = max(0, Int(a.rounded())), x1 = min(width, Int(b.rounded()))
            guard x0 < x1 else { continue }
            (planes.y + row * planes.yBytesPerRow + x0).update(repeating: color.0, count: x1 - x0)
            if row & 1 == 0 {
                let c0 = x0 / 2, c1 = (x1 + 1) / 2
                (planes.u + (row / 2) * planes.uBytesPerRow + c0).update(repeating: color.1, count: c1 - c0)
                (planes.v + (row / 2) * planes.vBytesPerRow + c0).update(repeating: color.2, count: c1 - c0)
            }
        }
    }
}

/// Packed 8-bit RGB (bgra, bgr0, rgba) to planar yuv420p at the same size, in one pass
/// over the picture, without libswscale: the conversion a screen recorder does on every
/// frame. libswscale has no direct path from 32-bit RGB to 4:2:0; its general scaler
/// takes several passes and, at 1080p, about three times as long as this.
///
/// Sixteen pixels at a time in 16-bit vector lanes (what SSE2, the baseline x86-64 the
/// binary is built for, multiplies natively): channels come out of the 32-bit pixels with
/// lane-wise shifts and masks, the weights have 8 fractional bits (every result within
/// one or two levels of the exact BT.709 / BT.601 / BT.2020 formula), and each chroma
/// sample is the average of its 2×2 block (at an odd edge, of the pixels there are).
/// The alpha byte is ignored.
struct RGBToYUV420: Sendable {
    /// Byte offsets of red, green and blue within a pixel.
    let red: Int, green: Int, blue: Int
    // Weights of R, G, B with 8 fractional bits; luma offset (16 or 0) with rounding.
    let yr: UInt16, yg: UInt16, yb: UInt16, yOffset: UInt16
    let ur: Int16, ug: Int16, ub: Int16
    let vr: Int16, vg: Int16, vb: Int16

    /// False in debug builds: unoptimised Swift runs SIMD code a lane at a time through
    /// generic calls (hundreds of milliseconds a frame), so they convert with libswscale.
    static var isFastInThisBuild: Bool {
        #if DEBUG
        return false
        #else
        return true
        #endif
    }

    /// A converter from `source` to yuv420p, or nil for pairs it does not handle.
    init?(source: PixelFormat, destination: PixelFormat, color: ColorProperties) {
        guard destination == .yuv420p else { return nil }
        switch source {
        case .bgra, .bgr0: (red, green, blue) = (2, 1, 0)
        case .rgba: (red, green, blue) = (0, 1, 2)
        default: return nil
        }
        let (kr, kb): (Double, Double)
        switch color.standard {
        case .bt709: (kr, kb) = (0.2126, 0.0722)
        case .bt601: (kr, kb) = (0.299, 0.114)
        case .bt2020: (kr, kb) = (0.2627, 0.0593)
        }
        // Limited range maps 0…255 to 16…235 (luma) and 16…240 (chroma).
        let yScale = color.fullRange ? 1.0 : 219.0 / 255.0
        let cScale = color.fullRange ? 1.0 : 224.0 / 255.0
        func q(_ v: Double) -> Int { Int((v * 256).rounded()) }
        // Luma weights sum to the scale exactly, so white is 235 (or 255).
        let (wr, wb) = (q(kr * yScale), q(kb * yScale))
        (yr, yb, yg) = (UInt16(wr), UInt16(wb), UInt16(q(yScale) - wr - wb))
        yOffset = UInt16((color.fullRange ? 0 : 16 * 256) + 128)
        // Cb = (B − Y) / (2 (1 − Kb)), Cr = (R − Y) / (2 (1 − Kr)); weights sum to zero, so grey stays 128.
        let (cbR, cbB) = (q(-kr / (2 * (1 - kb)) * cScale), q(0.5 * cScale))
        (ur, ub, ug) = (Int16(cbR), Int16(cbB), Int16(-cbR - cbB))
        let (crR, crB) = (q(0.5 * cScale), q(-kb / (2 * (1 - kr)) * cScale))
        (vr, vb, vg) = (Int16(crR), Int16(crB), Int16(-crR - crB))
    }

    /// Converts `width`×`height` pixels from `source` into the three planes.
    func convert(source: PixelPlane, luma: PixelPlane, cb: PixelPlane, cr: PixelPlane, width: Int, height: Int) {
        let src = UnsafeRawPointer(source.baseAddress)
        let yBase = luma.baseAddress.assumingMemoryBound(to: UInt8.self)
        let uBase = cb.baseAddress.assumingMemoryBound(to: UInt8.self)
        let vBase = cr.baseAddress.assumingMemoryBound(to: UInt8.self)
        var row = 0
        while row < height {
            let twoRows = row + 1 < height
            let s0 = (src + row * source.bytesPerRow).assumingMemoryBound(to: UInt8.self)
            let s1 = twoRows ? (src + (row + 1) * source.bytesPerRow).assumingMemoryBound(to: UInt8.self) : s0
            let y0 = yBase + row * luma.bytesPerRow
            let y1 = twoRows ? yBase + (row + 1) * luma.bytesPerRow : y0
            convertRowPair(s0, s1, y0, y1, uBase + (row / 2) * cb.bytesPerRow, vBase + (row / 2) * cr.bytesPerRow,
                           width: width, secondRow: twoRows)
            row += 2
        }
    }

    /// One chroma row from two picture rows (at an odd bottom edge `s1` is `s0`).
    private func convertRowPair(_ s0: UnsafePointer<UInt8>, _ s1: UnsafePointer<UInt8>,
                                _ y0: UnsafeMutablePointer<UInt8>, _ y1: UnsafeMutablePointer<UInt8>,
                                _ u: UnsafeMutablePointer<UInt8>, _ v: UnsafeMutablePointer<UInt8>,
                                width: Int, secondRow: Bool) {
        typealias Pixels = SIMD16<UInt32>
        typealias Wide = SIMD16<UInt16>
        typealias Half = SIMD8<Int16>
        let (ri, gi, bi) = (red, green, blue)
        let (rs, gs, bs) = (UInt32(8 * ri), UInt32(8 * gi), UInt32(8 * bi))
        let mask = Pixels(repeating: 0xFF)
        let (yrV, ygV, ybV, yoV) = (Wide(repeating: yr), Wide(repeating: yg), Wide(repeating: yb), Wide(repeating: yOffset))
        let (urV, ugV, ubV) = (Half(repeating: ur), Half(repeating: ug), Half(repeating: ub))
        let (vrV, vgV, vbV) = (Half(repeating: vr), Half(repeating: vg), Half(repeating: vb))
        let (c128, zero, top, two) = (Half(repeating: 128), Half(repeating: 0), Half(repeating: 255), SIMD8<UInt32>(repeating: 2))

        @inline(__always) func channels(_ px: Pixels) -> (Wide, Wide, Wide) {
            (Wide(truncatingIfNeeded: (px &>> rs) & mask), Wide(truncatingIfNeeded: (px &>> gs) & mask),
             Wide(truncatingIfNeeded: (px &>> bs) & mask))
        }
        @inline(__always) func lumaRow(_ c: (Wide, Wide, Wide)) -> SIMD16<UInt8> {
            SIMD16<UInt8>(truncatingIfNeeded: (yrV &* c.0 &+ ygV &* c.1 &+ ybV &* c.2 &+ yoV) &>> 8)
        }
        // The average of each horizontal pair of two rows' samples: the 2×2 block.
        @inline(__always) func blockAverage(_ a: Wide, _ b: Wide) -> Half {
            let v = unsafeBitCast(a &+ b, to: SIMD8<UInt32>.self)
            return Half(truncatingIfNeeded: ((v & 0xFFFF) &+ (v &>> 16) &+ two) &>> 2)
        }

        let pairs = width / 2
        var p = 0
        while p + 8 <= pairs {
            let c0 = channels(UnsafeRawPointer(s0 + 8 * p).loadUnaligned(as: Pixels.self))
            let c1 = channels(UnsafeRawPointer(s1 + 8 * p).loadUnaligned(as: Pixels.self))
            UnsafeMutableRawPointer(y0 + 2 * p).storeBytes(of: lumaRow(c0), as: SIMD16<UInt8>.self)
            if secondRow {
                UnsafeMutableRawPointer(y1 + 2 * p).storeBytes(of: lumaRow(c1), as: SIMD16<UInt8>.self)
            }
            let r = blockAverage(c0.0, c1.0), g = blockAverage(c0.1, c1.1), b = blockAverage(c0.2, c1.2)
            let cbV = ((urV &* r &+ ugV &* g &+ ubV &* b &+ c128) &>> 8 &+ c128).clamped(lowerBound: zero, upperBound: top)
            let crV = ((vrV &* r &+ vgV &* g &+ vbV &* b &+ c128) &>> 8 &+ c128).clamped(lowerBound: zero, upperBound: top)
            UnsafeMutableRawPointer(u + p).storeBytes(of: SIMD8<UInt8>(truncatingIfNeeded: cbV), as: SIMD8<UInt8>.self)
            UnsafeMutableRawPointer(v + p).storeBytes(of: SIMD8<UInt8>(truncatingIfNeeded: crV), as: SIMD8<UInt8>.self)
            p += 8
        }

        // The rest of the row one block at a time, with the same arithmetic.
        @inline(__always) func lumaOf(_ px: UnsafePointer<UInt8>) -> UInt8 {
            let sum = Int(yr) * Int(px[ri]) + Int(yg) * Int(px[gi]) + Int(yb) * Int(px[bi]) + Int(yOffset)
            return UInt8(truncatingIfNeeded: sum >> 8)
        }
        @inline(__always) func chroma(_ wr: Int16, _ wg: Int16, _ wb: Int16, _ r: Int, _ g: Int, _ b: Int) -> UInt8 {
            let c = ((Int(wr) * r + Int(wg) * g + Int(wb) * b + 128) >> 8) + 128
            return UInt8(truncatingIfNeeded: max(0, min(255, c)))
        }
        while p * 2 < width {
            let x = 2 * p
            let last = x + 1 >= width
            let a = s0 + 4 * x, c = s1 + 4 * x
            let b = last ? a : a + 4, d = last ? c : c + 4
            y0[x] = lumaOf(a)
            if !last { y0[x + 1] = lumaOf(b) }
            if secondRow {
                y1[x] = lumaOf(c)
                if !last { y1[x + 1] = lumaOf(d) }
            }
            func average(_ i: Int) -> Int { (Int(a[i]) + Int(b[i]) + Int(c[i]) + Int(d[i]) + 2) >> 2 }
            let (r, g, bl) = (average(ri), average(gi), average(bi))
            u[p] = chroma(ur, ug, ub, r, g, bl)
            v[p] = chroma(vr, vg, vb, r, g, bl)
            p += 1
        }
    }
}

/// Places one picture over another: the overlay scaled once (libswscale) to a rectangle of
/// the base picture and written there, in the base's own format (yuv420p, so a screen
/// recorded damage-driven is not converted again; or BGRA), the rest of the base as it is.
/// The speaker's camera in a corner of a screen recording, or any two pictures a library
/// user has.
///
/// Not `Sendable`: one compositing thread owns it (it keeps the scaled overlay and its
/// scaler between pictures).
public final class PictureOverlay {
    /// A corner of the base picture.
    public enum Corner: String, Sendable, CaseIterable {
        case topLeft = "top-left", topRight = "top-right", bottomLeft = "bottom-left", bottomRight = "bottom-right"
    }

    /// Where the overlay goes in a base of `baseSize`: even corner and sides.
    public let rectangle: PixelRegion
    public let baseSize: VideoSize
    public let baseFormat: PixelFormat

    private var scaled: PixelBuffer
    private var scaler: (key: VideoSize, format: PixelFormat, context: ScaleContext)?
    /// An overlay has been scaled: an unchanged one need not be again.
    private var hasScaled = false

    /// An overlay of `size` in `corner` of a base picture of `baseSize` in `baseFormat`
    /// (yuv420p or bgra), `margin` pixels from its edges; the overlay's sides are made even
    /// and kept inside the base.
    public convenience init(corner: Corner, size: VideoSize, margin: Int = 16, baseSize: VideoSize, baseFormat: PixelFormat) throws(SwiftRecordError) {
        let w = min(size.width, baseSize.width) & ~1, h = min(size.height, baseSize.height) & ~1
        let m = max(0, min(margin, (baseSize.width - w) / 2, (baseSize.height - h) / 2)) & ~1
        let x = corner == .topLeft || corner == .bottomLeft ? m : (baseSize.width - w - m) & ~1
        let y = corner == .topLeft || corner == .topRight ? m : (baseSize.height - h - m) & ~1
        try self.init(rectangle: PixelRegion(x: x, y: y, width: w, height: h), baseSize: baseSize, baseFormat: baseFormat)
    }

    /// An overlay filling `rectangle` (even corner and sides, inside the base).
    public init(rectangle: PixelRegion, baseSize: VideoSize, baseFormat: PixelFormat) throws(SwiftRecordError) {
        guard baseFormat == .yuv420p || baseFormat == .bgra else {
            throw SwiftRecordError(.unsupported, operation: "PictureOverlay", message: "a base picture in \(baseFormat); expected yuv420p or bgra")
        }
        guard rectangle.width >= 2, rectangle.height >= 2, rectangle.x >= 0, rectangle.y >= 0, rectangle.x % 2 == 0, rectangle.y % 2 == 0,
              rectangle.width % 2 == 0, rectangle.height % 2 == 0,
              rectangle.x + rectangle.width <= baseSize.width, rectangle.y + rectangle.height <= baseSize.height else {
            throw SwiftRecordError(.invalidArgument, operation: "PictureOverlay",
                                   message: "overlay rectangle \(rectangle) does not fit a \(baseSize) picture with even corner and sides")
        }
        self.rectangle = rectangle
        self.baseSize = baseSize
        self.baseFormat = baseFormat
        scaled = try PixelBuffer(width: rectangle.width, height: rectangle.height, pixelFormat: baseFormat)
    }

    /// Writes `base` with `overlay` over it into `output` (the base's size and format). When
    /// `output` already holds this base (`base` itself, or the previous call's output with
    /// `baseIsSame`), only the overlay's rectangle is written; `overlayIsSame` says the
    /// overlay has not changed since the last call, so it is not scaled again.
    public func compose(_ base: PixelBuffer, _ overlay: PixelBuffer, into output: PixelBuffer,
                        baseIsSame: Bool = false, overlayIsSame: Bool = false) throws(SwiftRecordError) {
        guard base.width == baseSize.width, base.height == baseSize.height, base.pixelFormat == baseFormat,
              output.width == baseSize.width, output.height == baseSize.height, output.pixelFormat == baseFormat else {
            throw SwiftRecordError(.pixelBufferMismatch, operation: "PictureOverlay",
                                   message: "base \(base.width)x\(base.height) \(base.pixelFormat) and output \(output.width)x\(output.height) \(output.pixelFormat); expected \(baseSize) \(baseFormat)")
        }
        // An overlay already of the rectangle's size and the base's format (a camera asked for
        // that size) is written as it is; any other is scaled first.
        let fits = overlay.width == rectangle.width && overlay.height == rectangle.height && overlay.pixelFormat == baseFormat
        if !fits, !(overlayIsSame && hasScaled) { try scale(overlay) }
        if output !== base && !baseIsSame { try output.copyContents(from: base) }
        let r = rectangle
        let source = fits ? overlay : scaled
        output.withWriteAccess { out in
            source.withReadAccess { src in
                for (plane, (d, s)) in zip(out, src).enumerated() {
                    // yuv420p: chroma planes at half the corner; bgra: 4 bytes a pixel.
                    let (shiftX, shiftY, bytes) = baseFormat == .bgra ? (0, 0, 4) : (plane == 0 ? (0, 0, 1) : (1, 1, 1))
                    let x = (r.x >> shiftX) * bytes, y = r.y >> shiftY
                    for row in 0..<s.height {
                        (d.baseAddress + (y + row) * d.bytesPerRow + x).copyMemory(from: s.baseAddress + row * s.bytesPerRow, byteCount: s.rowLength)
                    }
                }
            }
        }
    }

    /// Scales `overlay` to the rectangle's size and the base's format.
    private func scale(_ overlay: PixelBuffer) throws(SwiftRecordError) {
        let size = VideoSize(width: overlay.width, height: overlay.height)
        if scaler?.key != size || scaler?.format != overlay.pixelFormat {
            scaler = nil
            scaler = (size, overlay.pixelFormat, try ScaleContext(from: size, overlay.pixelFormat, to: rectangle.size, baseFormat))
        }
        guard let context = scaler?.context else { return }
        if !scaled.isUniquelyReferenced {
            scaled = try PixelBuffer(width: rectangle.width, height: rectangle.height, pixelFormat: baseFormat)
        }
        try overlay.withReadAccess { (src: [PixelPlane]) throws(SwiftRecordError) in
            try scaled.withWriteAccess { (dst: [PixelPlane]) throws(SwiftRecordError) in
                var sourcePlanes: [UnsafePointer<UInt8>?] = src.map { UnsafePointer($0.baseAddress.assumingMemoryBound(to: UInt8.self)) }
                var sourceStrides: [Int32] = src.map { Int32($0.bytesPerRow) }
                var destinationPlanes: [UnsafeMutablePointer<UInt8>?] = dst.map { $0.baseAddress.assumingMemoryBound(to: UInt8.self) }
                var destinationStrides: [Int32] = dst.map { Int32($0.bytesPerRow) }
                while sourcePlanes.count < 4 { sourcePlanes.append(nil); sourceStrides.append(0) }
                while destinationPlanes.count < 4 { destinationPlanes.append(nil); destinationStrides.append(0) }
                try context.scale(&sourcePlanes, &sourceStrides, height: size.height, into: &destinationPlanes, &destinationStrides)
            }
        }
        hasScaled = true
    }
}

import SwiftRecordScene

/// Renders a deterministic animated scene into I420 pixel buffers: a scrolling diagonal
/// gradient, bouncing discs and spinning squares, with the frame index band across the
/// top. Frame `n` is always the same picture, so recordings can be compared and decoded.
///
/// Rendering is scanline spans and row copies from precomputed ramps, so a 1080p frame
/// takes a few milliseconds and the scene is never what limits a recording. The drawing is
/// SwiftRecordScene's (no FFmpeg, no Foundation), which a broadcast sender draws with too.
///
/// The stand-in for an AR app's rendered scene (SceneKit/RealityKit frames) on a machine
/// without a GPU.
public final class SyntheticScene: Sendable {
    public let width: Int
    public let height: Int
    public let pixelFormat = PixelFormat.yuv420p
    private let drawing: SceneDrawing

    public init(width: Int, height: Int) throws(SwiftRecordError) {
        guard let drawing = SceneDrawing(width: width, height: height) else {
            throw SwiftRecordError(.invalidArgument, operation: "SyntheticScene",
                                   message: "size \(width)x\(height) is not usable; \(SceneDrawing.sizeRule)")
        }
        (self.width, self.height, self.drawing) = (width, height, drawing)
    }

    /// Every this many frames the scene flashes (frames 0, 30, 60, …): a box in the
    /// bottom-right corner turns from black to white for one frame, where the synthetic
    /// audio source clicks, so A/V offsets can be measured from a file.
    public static let flashInterval = SceneDrawing.flashInterval

    /// Whether frame `index` flashes.
    public static func flashes(frame index: Int) -> Bool { SceneDrawing.flashes(frame: index) }

    /// The flash box: bottom-right, 1/16 of each side (at least 16 pixels, even).
    public var flashBox: (x: Int, y: Int, width: Int, height: Int) { drawing.flashBox }

    /// Draws frame `index` into `buffer` (which must be this scene's size, in yuv420p),
    /// flashing on every `flashInterval`th frame unless `flash` says otherwise.
    public func render(frame index: Int, into buffer: PixelBuffer, flash: Bool? = nil) throws(SwiftRecordError) {
        guard buffer.width == width, buffer.height == height, buffer.pixelFormat == .yuv420p else {
            throw SwiftRecordError(.pixelBufferMismatch, operation: "SyntheticScene.render",
                                   message: "buffer is \(buffer.width)x\(buffer.height) \(buffer.pixelFormat); expected \(width)x\(height) yuv420p")
        }
        buffer.withWriteAccess { planes in
            let (y, u, v) = (planes[0], planes[1], planes[2])
            drawing.draw(frame: index, into: ScenePlanes(y: y.baseAddress.assumingMemoryBound(to: UInt8.self), u: u.baseAddress.assumingMemoryBound(to: UInt8.self),
                                                         v: v.baseAddress.assumingMemoryBound(to: UInt8.self),
                                                         yBytesPerRow: y.bytesPerRow, uBytesPerRow: u.bytesPerRow, vBytesPerRow: v.bytesPerRow),
                         flash: flash ?? SyntheticScene.flashes(frame: index))
        }
    }
}

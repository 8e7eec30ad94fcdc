import Foundation

// Core Video's Swift types of 2025 (iOS/macOS 26): pixel buffers that say by their type
// whether they may be written, made from typed creation attributes. Thin wrappers over
// SwiftRecord's `PixelBuffer` and `PixelBufferPool`.

/// A pixel format (`CVPixelFormatType`), made from its four-character code:
/// `CVPixelFormatType(rawValue: kCVPixelFormatType_32BGRA)`.
public struct CVPixelFormatType: RawRepresentable, Sendable, Hashable {
    public let rawValue: OSType
    public init(rawValue: OSType) { self.rawValue = rawValue }
}

/// A picture's size in pixels (`CVImageSize`).
public struct CVImageSize: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// What a pixel buffer is made with (`CVPixelBufferCreationAttributes`): its format and size.
public struct CVPixelBufferCreationAttributes: Sendable, Hashable {
    /// The format of the buffer's bytes (`pixelFormatType`).
    public var pixelFormatType: CVPixelFormatType
    /// Width and height (`size`).
    public var size: CVImageSize

    public init(pixelFormatType: CVPixelFormatType, size: CVImageSize) {
        self.pixelFormatType = pixelFormatType
        self.size = size
    }

    /// The format as SwiftRecord names it, or a `CVReturn`-style error naming the code.
    package func native(_ operation: String) throws(SwiftRecordError) -> (format: PixelFormat, fullRange: Bool) {
        guard let native = FourCC.format(pixelFormatType.rawValue) else {
            throw SwiftRecordError(.unsupported, operation: operation,
                                   message: "pixel format \(FourCC.name(pixelFormatType.rawValue)) is not supported here; use kCVPixelFormatType_32BGRA, _32ARGB, _420YpCbCr8BiPlanarVideoRange or FullRange, or _420YpCbCr8Planar")
        }
        return native
    }
}

/// One plane of a buffer being written (`CVPixelBufferPlaneProperties`).
public struct CVPixelBufferPlaneProperties: Sendable, Hashable {
    /// Rows (`height`), visible bytes in a row (`rowLength`, not Apple's) and the distance
    /// from one row to the next (`bytesPerRow`).
    public let height: Int, rowLength: Int, bytesPerRow: Int
}

/// A pixel buffer its one owner may write (`CVMutablePixelBuffer`): not copyable, as
/// Apple's; `CVReadOnlyPixelBuffer(consuming:)` hands it on for appending.
public struct CVMutablePixelBuffer: ~Copyable, Sendable {
    package let buffer: PixelBuffer

    package init(buffer: PixelBuffer) { self.buffer = buffer }

    /// A new buffer as `attributes` describe it (`init(_:)`).
    public init(_ attributes: CVPixelBufferCreationAttributes) throws {
        let (format, fullRange) = try attributes.native("CVMutablePixelBuffer")
        buffer = try PixelBuffer(width: attributes.size.width, height: attributes.size.height, pixelFormat: format, isFullRange: fullRange)
    }

    /// Takes over `unsafeBuffer` (`init(unsafeBuffer:)`): it must not be written elsewhere afterwards.
    public init(unsafeBuffer: CVPixelBuffer) { buffer = unsafeBuffer }

    /// The buffer's format (`pixelFormatType`).
    public var pixelFormatType: CVPixelFormatType { CVPixelFormatType(rawValue: FourCC.code(buffer.pixelFormat, fullRange: buffer.isFullRange)) }
    /// Its size (`size`).
    public var size: CVImageSize { CVImageSize(width: buffer.width, height: buffer.height) }

    /// Lends the planes' bytes, locked for writing, to `block` (`accessUnsafeMutableRawPlaneBytes(_:)`).
    public mutating func accessUnsafeMutableRawPlaneBytes<R>(
        _ block: ([(properties: CVPixelBufferPlaneProperties, bytes: UnsafeMutableRawBufferPointer)]) throws -> R) rethrows -> R {
        try buffer.withWriteAccess { (planes: [PixelPlane]) throws -> R in
            try block(planes.map { plane in
                (CVPixelBufferPlaneProperties(height: plane.height, rowLength: plane.rowLength, bytesPerRow: plane.bytesPerRow),
                 UnsafeMutableRawBufferPointer(start: plane.baseAddress, count: plane.bytesPerRow * plane.height))
            })
        }
    }

    /// The `CVPixelBuffer` underneath, for the C-style functions (`withUnsafeBuffer(_:)`).
    public func withUnsafeBuffer<R>(_ body: (CVPixelBuffer) throws -> R) rethrows -> R { try body(buffer) }
}

extension CVMutablePixelBuffer {
    /// Buffers of one kind, reused (`CVMutablePixelBuffer.Pool`).
    public final class Pool: Sendable {
        package let pool: PixelBufferPool
        /// What its buffers are made with (`pixelBufferAttributes`).
        public let pixelBufferAttributes: CVPixelBufferCreationAttributes

        package init(pool: PixelBufferPool) {
            self.pool = pool
            pixelBufferAttributes = CVPixelBufferCreationAttributes(
                pixelFormatType: CVPixelFormatType(rawValue: FourCC.code(pool.pixelFormat, fullRange: pool.isFullRange)),
                size: CVImageSize(width: pool.width, height: pool.height))
        }

        /// A pool of buffers as `attributes` describe them (`init(pixelBufferAttributes:)`).
        public convenience init(pixelBufferAttributes attributes: CVPixelBufferCreationAttributes) throws {
            let (format, fullRange) = try attributes.native("CVMutablePixelBuffer.Pool")
            self.init(pool: try PixelBufferPool(width: attributes.size.width, height: attributes.size.height, pixelFormat: format,
                                                isFullRange: fullRange))
        }

        /// A buffer of the pool's (`makeMutablePixelBuffer()`); throws when every buffer is in use.
        public func makeMutablePixelBuffer() throws -> CVMutablePixelBuffer {
            CVMutablePixelBuffer(buffer: try pool.makePixelBuffer())
        }
    }
}

/// A pixel buffer no one writes any more (`CVReadOnlyPixelBuffer`): what the 2025
/// receivers append.
public final class CVReadOnlyPixelBuffer: Sendable {
    package let buffer: PixelBuffer

    /// Takes over a mutable buffer (`init(_:)`), which cannot be used afterwards.
    public init(_ mutableBuffer: consuming CVMutablePixelBuffer) { buffer = mutableBuffer.buffer }

    /// Takes over `unsafeBuffer` (`init(unsafeBuffer:)`): it must not be written afterwards.
    public init(unsafeBuffer: CVPixelBuffer) { buffer = unsafeBuffer }

    /// The `CVPixelBuffer` underneath (`withUnsafeBuffer(_:)`), to be read only.
    public func withUnsafeBuffer<R>(_ body: (CVPixelBuffer) throws -> R) rethrows -> R { try body(buffer) }
}

// Core Video's names as Apple spells them, over SwiftRecord's pixel buffers. A port keeps
// `import CoreVideo`; nothing here is a second implementation (PortingFromAVFoundation.md).
@_exported import SwiftRecord

/// A four-character code (`OSType`): the type of the `kCVPixelFormatType_…` constants.
public typealias OSType = UInt32
/// Core Video's result codes (`CVReturn`); ``kCVReturnSuccess`` is 0.
public typealias CVReturn = Int32
/// Option bits (`CVOptionFlags`).
public typealias CVOptionFlags = UInt64

/// A picture in memory (`CVPixelBuffer`): SwiftRecord's `PixelBuffer`.
public typealias CVPixelBuffer = PixelBuffer
/// Core Video's image buffer (`CVImageBuffer`); here every image buffer is a pixel buffer.
public typealias CVImageBuffer = PixelBuffer
/// A bounded pool of pixel buffers (`CVPixelBufferPool`): SwiftRecord's `PixelBufferPool`.
public typealias CVPixelBufferPool = PixelBufferPool
/// `CVPixelBufferLockBaseAddress`'s flags (`.readOnly`).
public typealias CVPixelBufferLockFlags = PixelBufferLockFlags

/// Core Foundation's allocator, as the first argument of Core Video's functions take it.
/// Linux has no Core Foundation allocators: pass `nil` or ``kCFAllocatorDefault``.
public final class CFAllocator: Sendable {
    private init() {}
}
/// The default allocator (`kCFAllocatorDefault`): nil, as on Apple platforms.
public let kCFAllocatorDefault: CFAllocator? = nil
/// Core Foundation's dictionary, as attribute dictionaries are passed (`attributes as
/// CFDictionary`): a Swift dictionary keyed by the `kCVPixelBuffer…Key` strings.
public typealias CFDictionary = [String: Any]
/// Core Foundation's string, as the `kCVPixelBuffer…Key` constants are typed (`as String`).
public typealias CFString = String

public let kCVReturnSuccess: CVReturn = 0
public let kCVReturnError: CVReturn = -6660
public let kCVReturnInvalidArgument: CVReturn = -6661
public let kCVReturnAllocationFailed: CVReturn = -6662
public let kCVReturnUnsupported: CVReturn = -6663
public let kCVReturnInvalidPixelFormat: CVReturn = -6680
public let kCVReturnInvalidSize: CVReturn = -6681
public let kCVReturnInvalidPixelBufferAttributes: CVReturn = -6682
public let kCVReturnPoolAllocationFailed: CVReturn = -6690
public let kCVReturnWouldExceedAllocationThreshold: CVReturn = -6689

// Attribute keys (`kCVPixelBuffer…Key`), with Apple's values.
public let kCVPixelBufferPixelFormatTypeKey: CFString = "PixelFormatType"
public let kCVPixelBufferWidthKey: CFString = "Width"
public let kCVPixelBufferHeightKey: CFString = "Height"
/// Accepted and without effect: every buffer here is plain memory.
public let kCVPixelBufferIOSurfacePropertiesKey: CFString = "IOSurfaceProperties"
/// Accepted and without effect.
public let kCVPixelBufferCGImageCompatibilityKey: CFString = "CGImageCompatibility"
/// Accepted and without effect.
public let kCVPixelBufferCGBitmapContextCompatibilityKey: CFString = "CGBitmapContextCompatibility"
/// Accepted and without effect.
public let kCVPixelBufferMetalCompatibilityKey: CFString = "MetalCompatibility"
/// Accepted and without effect.
public let kCVPixelBufferOpenGLESCompatibilityKey: CFString = "OpenGLESCompatibility"
/// Accepted and without effect: rows are aligned for SIMD already.
public let kCVPixelBufferBytesPerRowAlignmentKey: CFString = "BytesPerRowAlignment"
/// A pool's most buffers out at once (`kCVPixelBufferPoolMinimumBufferCountKey` is the
/// closest Apple key; pools here are always bounded).
public let kCVPixelBufferPoolMinimumBufferCountKey: CFString = "MinimumBufferCount"

// Pixel formats (`kCVPixelFormatType_…`), Apple's four-character codes.
public let kCVPixelFormatType_32ARGB: OSType = 0x0000_0020
public let kCVPixelFormatType_24RGB: OSType = 0x0000_0018
public let kCVPixelFormatType_32BGRA: OSType = 0x4247_5241           // 'BGRA'
public let kCVPixelFormatType_32RGBA: OSType = 0x5247_4241           // 'RGBA'
public let kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange: OSType = 0x3432_3076   // '420v'
public let kCVPixelFormatType_420YpCbCr8BiPlanarFullRange: OSType = 0x3432_3066    // '420f'
public let kCVPixelFormatType_420YpCbCr8Planar: OSType = 0x7934_3230               // 'y420'
public let kCVPixelFormatType_420YpCbCr8PlanarFullRange: OSType = 0x6634_3230      // 'f420'
public let kCVPixelFormatType_422YpCbCr8: OSType = 0x3276_7579                     // '2vuy'
public let kCVPixelFormatType_422YpCbCr8_yuvs: OSType = 0x7975_7673                // 'yuvs'
public let kCVPixelFormatType_OneComponent8: OSType = 0x4C30_3038                  // 'L008'

/// Between Apple's four-character codes and SwiftRecord's formats and ranges.
package enum FourCC {
    static let table: [(OSType, PixelFormat, Bool)] = [
        (kCVPixelFormatType_32ARGB, .argb, true), (kCVPixelFormatType_24RGB, .rgb24, true),
        (kCVPixelFormatType_32BGRA, .bgra, true), (kCVPixelFormatType_32RGBA, .rgba, true),
        (kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange, .nv12, false),
        (kCVPixelFormatType_420YpCbCr8BiPlanarFullRange, .nv12, true),
        (kCVPixelFormatType_420YpCbCr8Planar, .yuv420p, false),
        (kCVPixelFormatType_420YpCbCr8PlanarFullRange, .yuv420p, true),
        (kCVPixelFormatType_422YpCbCr8, .uyvy422, false), (kCVPixelFormatType_422YpCbCr8_yuvs, .yuyv422, false),
        (kCVPixelFormatType_OneComponent8, .gray, true),
    ]

    /// The format and range of `code`; nil for a code this layer does not know.
    package static func format(_ code: OSType) -> (format: PixelFormat, fullRange: Bool)? {
        table.first { $0.0 == code }.map { ($0.1, $0.1.isRGB ? false : $0.2) }
    }

    /// The code of a buffer's format and range; 0 for a format Apple has no code for.
    package static func code(_ format: PixelFormat, fullRange: Bool) -> OSType {
        let yuvFull = format.isRGB || format == .gray ? true : fullRange
        return table.first { $0.1 == format && $0.2 == yuvFull }?.0 ?? table.first { $0.1 == format }?.0 ?? 0
    }

    /// A four-character code as text ("420f"), or its number.
    package static func name(_ code: OSType) -> String {
        let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: code >> $0) }
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return "\(code)" }
        return "'" + String(decoding: bytes, as: UTF8.self) + "'"
    }
}

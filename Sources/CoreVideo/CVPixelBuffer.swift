import Foundation
import Logging

// Core Video's C-style functions over `PixelBuffer` and `PixelBufferPool`: each says what
// went wrong with a `CVReturn` (and the `swift-record.corevideo` log), never by crashing.

let log = Logger(label: "swift-record.corevideo")

/// What an attribute dictionary asks for: `kCVPixelBufferPixelFormatTypeKey`,
/// `kCVPixelBufferWidthKey`, `kCVPixelBufferHeightKey` (other keys are accepted and ignored).
package struct PixelBufferAttributeValues {
    package var formatCode: OSType?
    package var width: Int?
    package var height: Int?
    /// Whether a dictionary was given at all.
    package var wasGiven = false

    /// Reads `attributes`.
    package init(_ attributes: [String: Any]?) {
        guard let attributes else { return }
        wasGiven = true
        formatCode = Self.integer(attributes[kCVPixelBufferPixelFormatTypeKey]).map { OSType(truncatingIfNeeded: $0) }
        // Apple also takes an array of formats; the first is the one buffers are made in.
        if formatCode == nil, let list = attributes[kCVPixelBufferPixelFormatTypeKey] as? [Any] {
            formatCode = list.lazy.compactMap(Self.integer).first.map { OSType(truncatingIfNeeded: $0) }
        }
        width = Self.integer(attributes[kCVPixelBufferWidthKey])
        height = Self.integer(attributes[kCVPixelBufferHeightKey])
    }

    /// An integer given as any of the ways Swift code writes one into a dictionary.
    package static func integer(_ value: Any?) -> Int? {
        switch value {
        case let v as Int: v
        case let v as UInt32: Int(v)
        case let v as Int32: Int(v)
        case let v as Int64: Int(exactly: v)
        case let v as UInt: Int(exactly: v)
        case let v as NSNumber: v.intValue
        case let v as Double: Int(exactly: v)
        default: nil
        }
    }
}

/// A stand-alone pixel buffer (`CVPixelBufferCreate`). `attributes` may be nil.
@discardableResult
public func CVPixelBufferCreate(_ allocator: CFAllocator?, _ width: Int, _ height: Int, _ pixelFormatType: OSType,
                                _ pixelBufferAttributes: CFDictionary?, _ pixelBufferOut: UnsafeMutablePointer<CVPixelBuffer?>) -> CVReturn {
    pixelBufferOut.pointee = nil
    guard let (format, fullRange) = FourCC.format(pixelFormatType) else {
        log.error("CVPixelBufferCreate: pixel format \(FourCC.name(pixelFormatType)) is not supported here")
        return kCVReturnInvalidPixelFormat
    }
    do {
        pixelBufferOut.pointee = try PixelBuffer(width: width, height: height, pixelFormat: format, isFullRange: fullRange)
        return kCVReturnSuccess
    } catch {
        log.error("CVPixelBufferCreate: \(error.message)")
        return error.kind == .invalidArgument ? kCVReturnInvalidSize : kCVReturnAllocationFailed
    }
}

/// A pool of buffers as `pixelBufferAttributes` describe them (`CVPixelBufferPoolCreate`):
/// the pixel format, width and height keys are required.
@discardableResult
public func CVPixelBufferPoolCreate(_ allocator: CFAllocator?, _ poolAttributes: CFDictionary?, _ pixelBufferAttributes: CFDictionary?,
                                    _ poolOut: UnsafeMutablePointer<CVPixelBufferPool?>) -> CVReturn {
    poolOut.pointee = nil
    let values = PixelBufferAttributeValues(pixelBufferAttributes)
    guard let code = values.formatCode, let width = values.width, let height = values.height else {
        log.error("CVPixelBufferPoolCreate: the pixel buffer attributes need kCVPixelBufferPixelFormatTypeKey, kCVPixelBufferWidthKey and kCVPixelBufferHeightKey")
        return kCVReturnInvalidPixelBufferAttributes
    }
    guard let (format, fullRange) = FourCC.format(code) else {
        log.error("CVPixelBufferPoolCreate: pixel format \(FourCC.name(code)) is not supported here")
        return kCVReturnInvalidPixelFormat
    }
    let count = PixelBufferAttributeValues.integer(poolAttributes?[kCVPixelBufferPoolMinimumBufferCountKey]).map { max($0, 16) } ?? 16
    do {
        poolOut.pointee = try PixelBufferPool(width: width, height: height, pixelFormat: format, isFullRange: fullRange, maximumBufferCount: count)
        return kCVReturnSuccess
    } catch {
        log.error("CVPixelBufferPoolCreate: \(error.message)")
        return kCVReturnInvalidArgument
    }
}

/// A buffer from `pool` (`CVPixelBufferPoolCreatePixelBuffer`);
/// `kCVReturnWouldExceedAllocationThreshold` when every buffer of the pool is out.
@discardableResult
public func CVPixelBufferPoolCreatePixelBuffer(_ allocator: CFAllocator?, _ pixelBufferPool: CVPixelBufferPool,
                                               _ pixelBufferOut: UnsafeMutablePointer<CVPixelBuffer?>) -> CVReturn {
    do {
        pixelBufferOut.pointee = try pixelBufferPool.makePixelBuffer()
        return kCVReturnSuccess
    } catch {
        pixelBufferOut.pointee = nil
        return error.kind == .poolExhausted ? kCVReturnWouldExceedAllocationThreshold : kCVReturnPoolAllocationFailed
    }
}

/// Locks the planes for the CPU (`CVPixelBufferLockBaseAddress`); pair it with an unlock.
@discardableResult
public func CVPixelBufferLockBaseAddress(_ pixelBuffer: CVPixelBuffer, _ lockFlags: CVPixelBufferLockFlags) -> CVReturn {
    do {
        try pixelBuffer.lockBaseAddress(lockFlags)
        return kCVReturnSuccess
    } catch {
        log.error("CVPixelBufferLockBaseAddress: \(error.message)")
        return kCVReturnError
    }
}

/// Ends a lock (`CVPixelBufferUnlockBaseAddress`), with the flags it was taken with.
@discardableResult
public func CVPixelBufferUnlockBaseAddress(_ pixelBuffer: CVPixelBuffer, _ unlockFlags: CVPixelBufferLockFlags) -> CVReturn {
    do {
        try pixelBuffer.unlockBaseAddress(unlockFlags)
        return kCVReturnSuccess
    } catch {
        log.error("CVPixelBufferUnlockBaseAddress: \(error.message)")
        return kCVReturnInvalidArgument
    }
}

/// The first plane's address while locked, else nil (`CVPixelBufferGetBaseAddress`).
public func CVPixelBufferGetBaseAddress(_ pixelBuffer: CVPixelBuffer) -> UnsafeMutableRawPointer? { pixelBuffer.baseAddress }
/// A plane's address while locked, else nil (`CVPixelBufferGetBaseAddressOfPlane`).
public func CVPixelBufferGetBaseAddressOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int) -> UnsafeMutableRawPointer? {
    pixelBuffer.baseAddress(ofPlane: planeIndex)
}
/// The first plane's row stride (`CVPixelBufferGetBytesPerRow`).
public func CVPixelBufferGetBytesPerRow(_ pixelBuffer: CVPixelBuffer) -> Int { pixelBuffer.bytesPerRow }
/// A plane's row stride (`CVPixelBufferGetBytesPerRowOfPlane`); 0 past the last plane.
public func CVPixelBufferGetBytesPerRowOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int) -> Int {
    (0..<pixelBuffer.planeCount).contains(planeIndex) ? pixelBuffer.bytesPerRow(ofPlane: planeIndex) : 0
}
/// Width in pixels (`CVPixelBufferGetWidth`).
public func CVPixelBufferGetWidth(_ pixelBuffer: CVPixelBuffer) -> Int { pixelBuffer.width }
/// Height in pixels (`CVPixelBufferGetHeight`).
public func CVPixelBufferGetHeight(_ pixelBuffer: CVPixelBuffer) -> Int { pixelBuffer.height }
/// A plane's width in samples (`CVPixelBufferGetWidthOfPlane`); 0 past the last plane.
public func CVPixelBufferGetWidthOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int) -> Int {
    guard (0..<pixelBuffer.planeCount).contains(planeIndex) else { return 0 }
    let shift = planeIndex == 0 ? 0 : pixelBuffer.pixelFormat.chromaShift.x
    return (pixelBuffer.width + (1 << shift) - 1) >> shift
}
/// A plane's height in rows (`CVPixelBufferGetHeightOfPlane`); 0 past the last plane.
public func CVPixelBufferGetHeightOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int) -> Int {
    guard (0..<pixelBuffer.planeCount).contains(planeIndex) else { return 0 }
    return pixelBuffer.pixelFormat.planeHeight(pixelBuffer.height, plane: planeIndex)
}
/// Planes of a planar buffer, 0 for a packed one, as Apple counts (`CVPixelBufferGetPlaneCount`).
public func CVPixelBufferGetPlaneCount(_ pixelBuffer: CVPixelBuffer) -> Int {
    pixelBuffer.planeCount > 1 ? pixelBuffer.planeCount : 0
}
/// Whether the buffer has planes (`CVPixelBufferIsPlanar`).
public func CVPixelBufferIsPlanar(_ pixelBuffer: CVPixelBuffer) -> Bool { pixelBuffer.planeCount > 1 }
/// The buffer's four-character format code (`CVPixelBufferGetPixelFormatType`); a
/// full-range buffer gives the full-range code ('420f').
public func CVPixelBufferGetPixelFormatType(_ pixelBuffer: CVPixelBuffer) -> OSType {
    FourCC.code(pixelBuffer.pixelFormat, fullRange: pixelBuffer.isFullRange)
}

internal import CFFmpeg

/// How a pixel buffer's base address is locked (`CVPixelBufferLockFlags`).
public struct PixelBufferLockFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// The samples are only read while locked (`.readOnly`).
    public static let readOnly = PixelBufferLockFlags(rawValue: 1)
}

/// What a base-address lock holds: a reference to the picture's storage, so the pointers
/// handed out stay valid until the unlock whatever happens to the buffer meanwhile.
struct BaseAddressLock {
    /// A frame referencing the locked storage (`av_frame_ref`); its data pointers are the
    /// ones lent. Freed, and the storage let go, when the last unlock drops the lock.
    let pin: Frame
    let readOnly: Bool
    var count: Int
}

/// A bridge for code written against `CVPixelBufferLockBaseAddress` /
/// `CVPixelBufferGetBaseAddress` / `CVPixelBufferUnlockBaseAddress`, so a ported render
/// loop keeps its shape:
///
/// ```swift
/// try buffer.lockBaseAddress()
/// if let base = buffer.baseAddress { draw(into: base, bytesPerRow: buffer.bytesPerRow) }
/// try buffer.unlockBaseAddress()
/// ```
///
/// New code should prefer `withWriteAccess { planes in … }` / `withReadAccess`, which
/// cannot forget the unlock. The pointers are valid from the lock to the matching unlock
/// only. Locking for writing first gives the buffer storage of its own if an encoder
/// still holds the picture (copy on write), and while it stays locked for writing it
/// cannot be appended (the append throws `.invalidState`): the encoder never sees a
/// picture being drawn. A read-only lock keeps the storage it saw alive until unlocked.
extension PixelBuffer {
    /// Locks the samples for access through `baseAddress` (`CVPixelBufferLockBaseAddress`).
    /// Locks nest; each needs its unlock with the same flags. Throws `.invalidState` for a
    /// writing lock while the buffer is locked read-only.
    public func lockBaseAddress(_ flags: PixelBufferLockFlags = []) throws(SwiftRecordError) {
        let readOnly = flags.contains(.readOnly)
        try storage.withLock { (handle: inout sending FrameHandle) throws(SwiftRecordError) in
            if var lock = handle.baseAddressLock {
                guard readOnly || !lock.readOnly else {
                    throw SwiftRecordError(.invalidState, operation: "lockBaseAddress",
                                           message: "the buffer is locked read-only; unlock it (unlockBaseAddress(.readOnly)) before locking it for writing")
                }
                lock.count += 1
                handle.baseAddressLock = lock
                return
            }
            if !readOnly { handle.prepareForWriting(allocator) }
            let pin = try Frame()
            try check(av_frame_ref(pin.pointer, handle.frame), "av_frame_ref")
            handle.baseAddressLock = BaseAddressLock(pin: pin, readOnly: readOnly, count: 1)
        }
    }

    /// Ends a `lockBaseAddress` with the same flags (`CVPixelBufferUnlockBaseAddress`).
    /// Throws `.invalidState` when the buffer is not locked, or was locked with other flags.
    public func unlockBaseAddress(_ flags: PixelBufferLockFlags = []) throws(SwiftRecordError) {
        try storage.withLock { (handle: inout sending FrameHandle) throws(SwiftRecordError) in
            guard var lock = handle.baseAddressLock else {
                throw SwiftRecordError(.invalidState, operation: "unlockBaseAddress",
                                       message: "the buffer is not locked; call lockBaseAddress() first")
            }
            guard lock.readOnly == flags.contains(.readOnly) else {
                throw SwiftRecordError(.invalidState, operation: "unlockBaseAddress",
                                       message: "the buffer was locked \(lock.readOnly ? "read-only" : "for writing"); unlock it with the same flags")
            }
            lock.count -= 1
            if lock.count > 0 {
                handle.baseAddressLock = lock
            } else {
                handle.baseAddressLock = nil
            }
        }
    }

    /// The first plane's samples while locked, nil otherwise (`CVPixelBufferGetBaseAddress`).
    public var baseAddress: UnsafeMutableRawPointer? { baseAddress(ofPlane: 0) }

    /// Plane `plane`'s samples while locked, nil otherwise or for a plane the format does
    /// not have (`CVPixelBufferGetBaseAddressOfPlane`). Rows are `bytesPerRow(ofPlane:)` apart.
    public func baseAddress(ofPlane plane: Int) -> UnsafeMutableRawPointer? {
        guard plane >= 0, plane < planeCount else { return nil }
        return storage.withLock { handle in
            handle.baseAddressLock.flatMap { UnsafeMutableRawPointer(sr_frame_data($0.pin.pointer, Int32(plane))) }
        }
    }

}

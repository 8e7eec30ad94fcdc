/// A queued append's hold on a pixel buffer's picture as it was appended: the buffer
/// itself and the frame it had then (both retained), which no one writes while the pin
/// lasts (a write moves the buffer to a new frame first, `FrameHandle.prepareForWriting`).
/// Taking and ending one allocates nothing; a queue of them costs two retains per picture.
///
/// `@unchecked Sendable`: the frame is only handed out by `PixelBuffer.pin()` and is
/// read-only for as long as the pin lasts (above); the buffer stops holding a frame it
/// moved away from only when its last pin ends.
struct PinnedPicture: @unchecked Sendable {
    let buffer: PixelBuffer
    /// The picture's frame, to read (its planes, or a reference an encoder takes) while
    /// the pin lasts. Not to be written or kept.
    let pinnedFrame: Frame

    fileprivate init(buffer: PixelBuffer, frame: Frame) {
        self.buffer = buffer
        pinnedFrame = frame
    }

    /// The pinned picture's planes, to read while the pin lasts.
    var planes: [PixelPlane] { buffer.planes(of: pinnedFrame.pointer) }

    /// An identifier of the pinned picture's storage (`PixelBuffer.storageIdentity`).
    var storageIdentity: UInt { PixelBuffer.storageIdentity(of: pinnedFrame.pointer) }

    /// Ends the pin (once per `pin()`): the buffer may be written in place again once no
    /// other append holds it.
    func unpin() {
        buffer.storage.withLock { handle in
            if handle.owner === pinnedFrame {
                handle.pins = max(0, handle.pins - 1)
                return
            }
            guard let i = handle.retired.firstIndex(where: { $0.owner === pinnedFrame }) else { return }
            handle.retired[i].pins -= 1
            // A frame the buffer moved away from leaves it with its last pin; it is freed
            // when this pin's last copy goes (never under the lock: the pin holds it here).
            if handle.retired[i].pins <= 0 { handle.retired.remove(at: i) }
        }
    }
}

extension PixelBuffer {
    /// Pins the picture as it is now for a queued append: no copy and no reference
    /// object (writing to the buffer afterwards moves it to new storage, so the queued
    /// picture stays as it was appended). Throws when the buffer is locked for writing.
    func pin() throws(SwiftRecordError) -> PinnedPicture {
        let frame = try storage.withLock { (handle: inout sending FrameHandle) throws(SwiftRecordError) -> Frame in
            try PixelBuffer.checkNotLockedForWriting(handle)
            handle.pins += 1
            return handle.owner
        }
        return PinnedPicture(buffer: self, frame: frame)
    }

    /// Throws when the buffer is locked for writing (`lockBaseAddress()` without
    /// `.readOnly`): it is being drawn, so no append may take it, converted or not.
    func checkAppendable() throws(SwiftRecordError) {
        try storage.withLock { (handle: inout sending FrameHandle) throws(SwiftRecordError) in
            try PixelBuffer.checkNotLockedForWriting(handle)
        }
    }

    private static func checkNotLockedForWriting(_ handle: FrameHandle) throws(SwiftRecordError) {
        if let lock = handle.baseAddressLock, !lock.readOnly {
            throw SwiftRecordError(.invalidState, operation: "append",
                                   message: "the pixel buffer is locked for writing (lockBaseAddress); call unlockBaseAddress() before appending it")
        }
    }
}

internal import CFFmpeg

/// A queued append's hold on a pixel buffer's picture as it was appended: the buffer
/// itself (retained) and the frame it had then, which no one writes while the pin lasts
/// (a write moves the buffer to a new frame first, `FrameHandle.prepareForWriting`).
/// Taking and ending one allocates nothing; a queue of them costs a retain per picture.
///
/// `@unchecked Sendable`: the frame pointer is only handed out by `PixelBuffer.pin()`,
/// is read-only for as long as the pin lasts (above), and stays allocated until
/// `unpin()` (the buffer frees a frame it moved away from only when its last pin ends).
struct PinnedPicture: @unchecked Sendable {
    let buffer: PixelBuffer
    private let frame: UnsafeMutablePointer<AVFrame>

    fileprivate init(buffer: PixelBuffer, frame: UnsafeMutablePointer<AVFrame>) {
        self.buffer = buffer
        self.frame = frame
    }

    /// The picture's frame, to read (its planes, or a reference an encoder takes) while
    /// the pin lasts. Not to be written or kept.
    var pinnedFrame: UnsafePointer<AVFrame> { UnsafePointer(frame) }

    /// The pinned picture's planes, to read while the pin lasts.
    var planes: [PixelPlane] { buffer.planes(of: frame) }

    /// An identifier of the pinned picture's storage (`PixelBuffer.storageIdentity`).
    var storageIdentity: UInt { UInt(bitPattern: sr_frame_data(frame, 0)) }

    /// Ends the pin (once per `pin()`): the buffer may be written in place again once no
    /// other append holds it.
    func unpin() {
        let done = buffer.storage.withLock { handle -> FrameHandle? in
            if handle.frame == frame {
                handle.pins = max(0, handle.pins - 1)
                return nil
            }
            guard let i = handle.retired.firstIndex(where: { $0.owner.pointer == frame }) else { return nil }
            handle.retired[i].pins -= 1
            guard handle.retired[i].pins <= 0 else { return nil }
            return FrameHandle(owner: handle.retired.remove(at: i).owner)
        }
        // The retired frame, if this was its last pin, is freed here, outside the lock.
        _ = done
    }
}

extension PixelBuffer {
    /// Pins the picture as it is now for a queued append: no copy and no reference
    /// object (writing to the buffer afterwards moves it to new storage, so the queued
    /// picture stays as it was appended). Throws when the buffer is locked for writing.
    func pin() throws(SwiftRecordError) -> PinnedPicture {
        let frame = try storage.withLock { (handle: inout sending FrameHandle) throws(SwiftRecordError) -> UnsafeMutablePointer<AVFrame> in
            try PixelBuffer.checkNotLockedForWriting(handle)
            handle.pins += 1
            return handle.frame
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

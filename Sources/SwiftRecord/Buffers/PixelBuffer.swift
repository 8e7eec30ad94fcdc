internal import CFFmpeg

/// One plane of a pixel buffer while it is locked for access: where its first row
/// starts, how many bytes each row takes in memory (larger than the visible width
/// when rows are padded), and how many rows and visible bytes per row it has.
public struct PixelPlane {
    /// Where the plane's first row starts.
    public let baseAddress: UnsafeMutableRawPointer
    /// Distance in bytes from one row to the next (`CVPixelBufferGetBytesPerRowOfPlane`).
    public let bytesPerRow: Int
    /// Visible bytes in a row (≤ `bytesPerRow`).
    public let rowLength: Int
    /// Rows in this plane.
    public let height: Int
}

/// A picture in memory: width, height, pixel format and one or more planes of samples.
/// It may come from a `PixelBufferPool`, in which case its storage goes back to the
/// pool when the last reference to it goes away.
///
/// Access to the samples is scoped, as with `CVPixelBufferLockBaseAddress` /
/// `CVPixelBufferUnlockBaseAddress`: `withReadAccess` and `withWriteAccess` lend the
/// planes to a closure. Writing to a buffer that an encoder still holds is safe: the
/// buffer first gets storage of its own (copy on write), so the encoder's picture is
/// never changed under it.
///
/// A buffer may be used from several threads (a capture thread fills it, an encoder's
/// queue takes a reference): every look at its frame, and every access to its planes,
/// happens with the buffer's lock held. So do not touch the same buffer again from inside
/// `withReadAccess` / `withWriteAccess`.
///
/// The counterpart of `CVPixelBuffer` on Apple platforms.
public final class PixelBuffer: Sendable {
    /// Width of the picture in pixels (`CVPixelBufferGetWidth`).
    public let width: Int
    /// Height of the picture in pixels (`CVPixelBufferGetHeight`).
    public let height: Int
    /// The layout of the samples (`CVPixelBufferGetPixelFormatType`).
    public let pixelFormat: PixelFormat
    /// Whether the YUV samples span the full 0–255 range (`420f`) rather than video range,
    /// 16–235 (`420v`, the default). A pixel buffer adaptor reads the picture so; RGB is
    /// always full range and ignores it.
    public let isFullRange: Bool
    /// The frame holding this buffer's storage; owned by this object, reached only with the lock held.
    let storage: Locked<FrameHandle>
    /// Where replacement storage comes from (copy on write); shared with the pool.
    let allocator: PlaneAllocator
    private let recycle: (@Sendable (Frame) -> Void)?

    init(frame: Frame, width: Int, height: Int, pixelFormat: PixelFormat, isFullRange: Bool = false,
         allocator: PlaneAllocator, recycle: (@Sendable (Frame) -> Void)?) {
        self.isFullRange = isFullRange
        self.storage = Locked(FrameHandle(owner: frame))
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.allocator = allocator
        self.recycle = recycle
    }

    /// A buffer over memory that something else owns (a shared-memory segment a display
    /// server writes into, a mapped device buffer), without copying it
    /// (`CVPixelBufferCreateWithBytes`). Packed (one-plane) formats only.
    ///
    /// `release` runs exactly once, on whichever thread lets go last, when neither this
    /// buffer nor an encoder holds the picture any longer; the memory must stay valid
    /// until then. If the initializer throws, `release` is not called.
    public convenience init(wrapping baseAddress: UnsafeMutableRawPointer, width: Int, height: Int, bytesPerRow: Int,
                            pixelFormat: PixelFormat, release: @escaping @Sendable () -> Void) throws(SwiftRecordError) {
        guard pixelFormat.planeCount == 1 else {
            throw SwiftRecordError(.unsupported, operation: "PixelBuffer(wrapping:)",
                                   message: "\(pixelFormat) has \(pixelFormat.planeCount) planes; only packed (one-plane) formats can be wrapped")
        }
        // Validates the size; also lends private storage if the buffer is written while shared.
        let allocator = try PlaneAllocator(width: width, height: height, pixelFormat: pixelFormat)
        let minimum = pixelFormat.tightBytesPerRow(width: width, plane: 0)
        guard bytesPerRow >= minimum, bytesPerRow <= Int(Int32.max), bytesPerRow.multipliedReportingOverflow(by: height).overflow == false else {
            throw SwiftRecordError(.invalidArgument, operation: "PixelBuffer(wrapping:)",
                                   message: "bytesPerRow \(bytesPerRow) is out of range for \(width)x\(height) \(pixelFormat); expected at least \(minimum)")
        }
        let owner = try Frame()
        let frame = owner.pointer
        let action = Unmanaged.passRetained(ReleaseAction(release))
        guard let storage = av_buffer_create(baseAddress.assumingMemoryBound(to: UInt8.self), bytesPerRow * height, { opaque, _ in
            if let opaque { Unmanaged<ReleaseAction>.fromOpaque(opaque).takeRetainedValue().run() }
        }, action.toOpaque(), 0) else {
            action.release()
            throw SwiftRecordError(.ffmpeg, operation: "av_buffer_create", message: "out of memory")
        }
        sr_frame_set_buf(frame, 0, storage)
        sr_frame_data_array(frame)[0] = baseAddress.assumingMemoryBound(to: UInt8.self)
        sr_frame_linesize_array(frame)[0] = Int32(bytesPerRow)
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        frame.pointee.format = pixelFormat.av.rawValue
        self.init(frame: owner, width: width, height: height, pixelFormat: pixelFormat, allocator: allocator, recycle: nil)
    }

    deinit {
        let last = storage.withLock { handle in
            handle.baseAddressLock = nil
            // (No pinned append outlives the buffer: each holds it. Earlier frames left here
            // would be ones a dropped append never unpinned.)
            handle.retired.removeAll()
            return handle
        }
        // Back to the pool, or freed as the last reference goes.
        recycle?(last.owner)
    }

    /// Runs `body` with the frame, the buffer's lock held: the one way to the `AVFrame`
    /// (to take a reference to it, or to hand its planes to swscale).
    func withFrame<R, E: Error>(_ body: (UnsafeMutablePointer<AVFrame>) throws(E) -> R) throws(E) -> R {
        try storage.withLock { (handle: inout sending FrameHandle) throws(E) -> R in try body(handle.frame) }
    }

    /// Like `withFrame`, after giving the frame storage of its own if it shares it (copy on write).
    func withWritableFrame<R, E: Error>(_ body: (UnsafeMutablePointer<AVFrame>) throws(E) -> R) throws(E) -> R {
        try storage.withLock { (handle: inout sending FrameHandle) throws(E) -> R in
            // Locked for writing with lockBaseAddress(): the other reference is the lock's
            // own, and the locked pointers must stay this frame's (nothing is pinned: appends
            // are refused while the lock lasts).
            if handle.baseAddressLock?.readOnly != false {
                handle.prepareForWriting(allocator)
            }
            return try body(handle.frame)
        }
    }


    /// Number of planes (`CVPixelBufferGetPlaneCount`, but 1 for packed formats).
    public var planeCount: Int { pixelFormat.planeCount }

    /// Bytes from one row to the next in the first plane, the only one of a packed format
    /// (`CVPixelBufferGetBytesPerRow`).
    public var bytesPerRow: Int { bytesPerRow(ofPlane: 0) }

    /// Bytes from one row to the next in `plane` (`CVPixelBufferGetBytesPerRowOfPlane`); 0 for a plane the format does not have.
    public func bytesPerRow(ofPlane plane: Int) -> Int {
        guard plane >= 0, plane < planeCount else { return 0 }
        return withFrame { Int(sr_frame_linesize($0, Int32(plane))) }
    }

    /// An identifier of the storage behind plane 0, to tell whether a pool handed the
    /// same memory back. Not a pointer to use.
    public var storageIdentity: UInt {
        withFrame { PixelBuffer.storageIdentity(of: $0) }
    }

    static func storageIdentity(of frame: UnsafeMutablePointer<AVFrame>) -> UInt { UInt(bitPattern: sr_frame_data(frame, 0)) }

    /// True when no one else (an encoder, a queued append) shares this buffer's storage.
    public var isUniquelyReferenced: Bool {
        storage.withLock { handle in handle.pins == 0 && av_frame_is_writable(handle.frame) != 0 }
    }

    func planes(of frame: UnsafeMutablePointer<AVFrame>) -> [PixelPlane] {
        (0..<planeCount).map { p in
            PixelPlane(baseAddress: UnsafeMutableRawPointer(sr_frame_data(frame, Int32(p))),
                       bytesPerRow: Int(sr_frame_linesize(frame, Int32(p))),
                       rowLength: pixelFormat.tightBytesPerRow(width: width, plane: p),
                       height: pixelFormat.planeHeight(height, plane: p))
        }
    }

    /// Lends the planes for reading. Do not write through them, and do not keep the
    /// pointers past the closure.
    public func withReadAccess<R, E: Error>(_ body: ([PixelPlane]) throws(E) -> R) throws(E) -> R {
        try withFrame { (frame) throws(E) -> R in try body(planes(of: frame)) }
    }

    /// Lends the planes for writing. If the storage is shared (an encoder still holds
    /// this picture) the buffer first moves to storage of its own, copying the samples,
    /// so the writes never reach the shared picture.
    public func withWriteAccess<R, E: Error>(_ body: ([PixelPlane]) throws(E) -> R) throws(E) -> R {
        try withWritableFrame { (frame) throws(E) -> R in try body(planes(of: frame)) }
    }

    /// Copies the visible samples of `other` (same size and format) into this buffer.
    public func copyContents(from other: PixelBuffer) throws(SwiftRecordError) {
        guard other.width == width, other.height == height, other.pixelFormat == pixelFormat else {
            throw SwiftRecordError(.pixelBufferMismatch, operation: "PixelBuffer.copyContents",
                                   message: "source is \(other.width)x\(other.height) \(other.pixelFormat), expected \(width)x\(height) \(pixelFormat)")
        }
        guard other !== self else { return }
        withWriteAccess { dst in
            other.withReadAccess { src in
                for (d, s) in zip(dst, src) {
                    for row in 0..<d.height {
                        (d.baseAddress + row * d.bytesPerRow).copyMemory(from: s.baseAddress + row * s.bytesPerRow, byteCount: d.rowLength)
                    }
                }
            }
        }
    }
}

/// Allocates picture storage for one size and format from an `AVBufferPool`, so that
/// storage comes back for reuse only once every reference (ours and the encoder's) is gone.
/// One allocation holds all planes; rows are aligned for SIMD.
final class PlaneAllocator: Sendable {
    let width: Int
    let height: Int
    let pixelFormat: PixelFormat
    let bufferSize: Int
    /// Row alignment: 64 bytes suits AVX-512 and every encoder's SIMD loads.
    static let alignment: Int32 = 64
    /// The `AVBufferPool`, reached only with the lock held.
    private let pool: Locked<OpaquePointer>
    /// Counts fresh storage allocations (pool statistics); the C allocation callback reaches it.
    private let counter = Locked(0)

    init(width: Int, height: Int, pixelFormat: PixelFormat) throws(SwiftRecordError) {
        guard width > 0, height > 0, width <= 16384, height <= 16384 else {
            throw SwiftRecordError(.invalidArgument, operation: "PixelBuffer",
                                   message: "size \(width)x\(height) is out of range; expected 1…16384 by 1…16384")
        }
        _ = FFmpegLog.configure
        let size = av_image_get_buffer_size(pixelFormat.av, Int32(width), Int32(height), PlaneAllocator.alignment)
        try check(size, "av_image_get_buffer_size(\(width)x\(height) \(pixelFormat))", kind: .invalidArgument)
        // Padding past the end: SIMD readers (swscale, x264) may read a little beyond the last row.
        let padded = Int(size) + 64 * 4
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.bufferSize = padded
        // The pool's opaque pointer is the counter (kept alive by this allocator),
        // so the C callback can count fresh allocations without capturing context.
        let opaque = Unmanaged.passUnretained(counter).toOpaque()
        guard let pool = av_buffer_pool_init2(padded, opaque, { opaque, size in
            if let opaque { Unmanaged<Locked<Int>>.fromOpaque(opaque).takeUnretainedValue().withLock { $0 += 1 } }
            return av_buffer_alloc(size)
        }, nil) else {
            throw SwiftRecordError(.ffmpeg, operation: "av_buffer_pool_init", message: "out of memory")
        }
        self.pool = Locked(pool)
    }

    deinit {
        var p: OpaquePointer? = pool.withLock { $0 }
        av_buffer_pool_uninit(&p)
    }

    /// How many times fresh storage was allocated rather than recycled.
    var storageAllocations: Int { counter.withLock { $0 } }

    /// Fills `frame` with fresh or recycled storage.
    func attachStorage(_ frame: UnsafeMutablePointer<AVFrame>) throws(SwiftRecordError) {
        guard let buf = pool.withLock({ av_buffer_pool_get($0) }) else {
            throw SwiftRecordError(.ffmpeg, operation: "av_buffer_pool_get", message: "out of memory")
        }
        sr_frame_set_buf(frame, 0, buf)
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        frame.pointee.format = pixelFormat.av.rawValue
        try check(av_image_fill_arrays(sr_frame_data_array(frame), sr_frame_linesize_array(frame), buf.pointee.data,
                                       pixelFormat.av, Int32(width), Int32(height), PlaneAllocator.alignment),
                  "av_image_fill_arrays")
    }

    /// A new frame with fresh or recycled storage.
    func makeFrame() throws(SwiftRecordError) -> Frame {
        let frame = try Frame()
        try attachStorage(frame.pointer)
        return frame
    }

    /// Copies the samples of `source` into `destination` (both of this size and format).
    func copySamples(from source: UnsafeMutablePointer<AVFrame>, to destination: UnsafeMutablePointer<AVFrame>) {
        av_image_copy(sr_frame_data_array(destination), sr_frame_linesize_array(destination),
                      sr_frame_data_array(source).withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 4) { $0 },
                      sr_frame_linesize_array(source), pixelFormat.av, Int32(width), Int32(height))
    }

    /// Copy on write: gives `frame` storage of its own with the same samples.
    func moveToPrivateStorage(_ frame: UnsafeMutablePointer<AVFrame>) {
        guard let owner = try? Frame() else { return }
        defer { withExtendedLifetime(owner) {} }
        let tmp = owner.pointer
        guard (try? attachStorage(tmp)) != nil else { return }
        copySamples(from: frame, to: tmp)
        let pts = frame.pointee.pts
        av_frame_unref(frame)
        av_frame_move_ref(frame, tmp)
        frame.pointee.pts = pts
    }
}

/// The `Frame` a pixel buffer holds or a pool keeps for reuse. `@unchecked` because
/// the compiler cannot see what makes it safe: it is only ever stored inside a `Locked`
/// (the buffer's, the pool's), so the frame is only reached with that lock held — except
/// by a queued append's `PinnedPicture`, which only reads a frame no one writes while it
/// is pinned (`prepareForWriting` moves the buffer to a new frame instead).
struct FrameHandle: @unchecked Sendable {
    /// The frame holding the buffer's storage now.
    var owner: Frame
    /// Held by `lockBaseAddress` until the matching `unlockBaseAddress`.
    var baseAddressLock: BaseAddressLock? = nil
    /// Queued appends holding `frame` as it is (`PixelBuffer.pin`).
    var pins = 0
    /// Frames this buffer moved away from while appends still held them, with how many
    /// still do; each is freed when its last append is done.
    var retired: [(owner: Frame, pins: Int)] = []

    init(owner: Frame) {
        self.owner = owner
    }

    /// `owner`'s frame.
    var frame: UnsafeMutablePointer<AVFrame> { owner.pointer }

    /// Makes `frame` safe to write: when a queued append holds it, the buffer moves to a
    /// new frame with a copy of the samples (the old one stays as it was for the append);
    /// when only an encoder shares its storage, the frame gets storage of its own (copy
    /// on write). If memory runs out the frame is left as it is.
    mutating func prepareForWriting(_ allocator: PlaneAllocator) {
        if pins > 0 {
            guard let fresh = try? allocator.makeFrame() else { return }
            allocator.copySamples(from: frame, to: fresh.pointer)
            fresh.pointer.pointee.pts = frame.pointee.pts
            retired.append((owner, pins))
            owner = fresh
            pins = 0
        } else if av_frame_is_writable(frame) == 0 {
            allocator.moveToPrivateStorage(frame)
        }
    }
}

/// The owner's release of wrapped memory, carried through FFmpeg's free callback.
final class ReleaseAction: Sendable {
    private let action: @Sendable () -> Void
    init(_ action: @escaping @Sendable () -> Void) { self.action = action }
    func run() { action() }
}

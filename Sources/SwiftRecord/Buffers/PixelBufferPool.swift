internal import CFFmpeg

/// Hands out pixel buffers of one size and format and takes them back when they are
/// released, so a steady stream of frames allocates no new picture storage.
///
/// The pool is bounded: at most `maximumBufferCount` buffers may be out at once, and
/// asking for another then throws `.poolExhausted` (or returns nil from
/// `makePixelBufferIfAvailable()`), the signal to drop a frame rather than grow.
/// Storage an encoder still holds is not handed out again until the encoder lets go.
///
/// The counterpart of `CVPixelBufferPool` on Apple platforms.
public final class PixelBufferPool: @unchecked Sendable {
    public let width: Int
    public let height: Int
    public let pixelFormat: PixelFormat
    /// The most buffers that may be out at once (`kCVPixelBufferPoolAllocationThresholdKey`).
    public let maximumBufferCount: Int

    let allocator: PlaneAllocator
    private let lock = Lock()
    /// Frame structs of returned buffers, kept for reuse (their storage is released).
    private var spareFrames: [UnsafeMutablePointer<AVFrame>] = []
    private var outstanding = 0

    /// A pool of `width`×`height` buffers in `pixelFormat` (`CVPixelBufferPoolCreate`).
    public init(width: Int, height: Int, pixelFormat: PixelFormat, maximumBufferCount: Int = 16) throws(SwiftRecordError) {
        guard maximumBufferCount > 0 else {
            throw SwiftRecordError(.invalidArgument, operation: "PixelBufferPool",
                                   message: "maximumBufferCount is \(maximumBufferCount); expected at least 1")
        }
        allocator = try PlaneAllocator(width: width, height: height, pixelFormat: pixelFormat)
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.maximumBufferCount = maximumBufferCount
        spareFrames.reserveCapacity(maximumBufferCount)
    }

    deinit {
        for var f in spareFrames.map(Optional.some) { av_frame_free(&f) }
    }

    /// Buffers handed out and not yet released.
    public var outstandingBufferCount: Int { lock.withLock { outstanding } }

    /// How many times the pool had to allocate fresh picture storage; constant in steady state.
    public var storageAllocationCount: Int { allocator.storageAllocations }

    /// A buffer from the pool (`CVPixelBufferPoolCreatePixelBuffer`). Its contents are
    /// whatever the storage last held. Throws `.poolExhausted` when
    /// `maximumBufferCount` buffers are already out.
    public func makePixelBuffer() throws(SwiftRecordError) -> PixelBuffer {
        let reused: UnsafeMutablePointer<AVFrame>? = try lock.withLock { () throws(SwiftRecordError) -> UnsafeMutablePointer<AVFrame>? in
            guard outstanding < maximumBufferCount else {
                throw SwiftRecordError(.poolExhausted, operation: "PixelBufferPool.makePixelBuffer",
                                       message: "all \(maximumBufferCount) buffers of the \(width)x\(height) \(pixelFormat) pool are in use; release one or drop this frame")
            }
            outstanding += 1
            return spareFrames.popLast()
        }
        let frame: UnsafeMutablePointer<AVFrame>
        do throws(SwiftRecordError) {
            if let reused {
                guard allocator.attachStorage(reused) else {
                    throw SwiftRecordError(.ffmpeg, operation: "av_buffer_pool_get", message: "out of memory")
                }
                frame = reused
            } else {
                frame = try allocator.makeFrame()
            }
        } catch {
            lock.withLock { outstanding -= 1 }
            throw error
        }
        return PixelBuffer(frame: frame, width: width, height: height, pixelFormat: pixelFormat,
                           allocator: allocator, recycle: { [weak self] frame in
            guard let self else {
                var f: UnsafeMutablePointer<AVFrame>? = frame
                av_frame_free(&f)
                return
            }
            self.giveBack(frame)
        })
    }

    /// A buffer, or nil when the pool is exhausted (the real-time path: drop the frame).
    public func makePixelBufferIfAvailable() -> PixelBuffer? {
        try? makePixelBuffer()
    }

    private func giveBack(_ frame: UnsafeMutablePointer<AVFrame>) {
        // Drops our reference to the storage; it returns to the AVBufferPool once
        // the encoder has dropped its own.
        av_frame_unref(frame)
        lock.withLock {
            outstanding -= 1
            spareFrames.append(frame)
        }
    }
}

/// Hands out pixel buffers of one size and format and takes them back when they are
/// released, so a steady stream of frames allocates no new picture storage.
///
/// The pool is bounded: at most `maximumBufferCount` buffers may be out at once, and
/// asking for another then throws `.poolExhausted` (or returns nil from
/// `makePixelBufferIfAvailable()`), the signal to drop a frame rather than grow.
/// Storage an encoder still holds is not handed out again until the encoder lets go.
///
/// A buffer appended to a writer counts as out until the writer's queue is done with it
/// (the input holds the buffer itself, pinned, not a copy), as a `CVPixelBuffer` an
/// `AVAssetWriterInput` retains does: a pool that feeds a writer needs the input's
/// `queueDepth` plus the buffers its producer holds at once.
///
/// The counterpart of `CVPixelBufferPool` on Apple platforms.
public final class PixelBufferPool: Sendable {
    /// Width of the buffers in pixels.
    public let width: Int
    /// Height of the buffers in pixels.
    public let height: Int
    /// Pixel format of the buffers.
    public let pixelFormat: PixelFormat
    /// The most buffers that may be out at once (`kCVPixelBufferPoolAllocationThresholdKey`).
    public let maximumBufferCount: Int
    /// Whether the buffers' YUV samples are full range (``PixelBuffer/isFullRange``).
    public let isFullRange: Bool

    let allocator: PlaneAllocator

    private struct State {
        /// Frame structs of returned buffers, kept for reuse (their storage is released).
        var spareFrames: [FrameHandle] = []
        var outstanding = 0
    }
    private let state: Locked<State>

    /// A pool of `width`×`height` buffers in `pixelFormat` (`CVPixelBufferPoolCreate`).
    public convenience init(width: Int, height: Int, pixelFormat: PixelFormat, maximumBufferCount: Int = 16) throws(SwiftRecordError) {
        try self.init(width: width, height: height, pixelFormat: pixelFormat, isFullRange: false, maximumBufferCount: maximumBufferCount)
    }

    /// A pool whose buffers hold full-range YUV when `isFullRange` (`420f`).
    public init(width: Int, height: Int, pixelFormat: PixelFormat, isFullRange: Bool, maximumBufferCount: Int = 16) throws(SwiftRecordError) {
        guard maximumBufferCount > 0 else {
            throw SwiftRecordError(.invalidArgument, operation: "PixelBufferPool",
                                   message: "maximumBufferCount is \(maximumBufferCount); expected at least 1")
        }
        allocator = try PlaneAllocator(width: width, height: height, pixelFormat: pixelFormat)
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.maximumBufferCount = maximumBufferCount
        self.isFullRange = isFullRange
        var initial = State()
        initial.spareFrames.reserveCapacity(maximumBufferCount)
        state = Locked(initial)
    }

    /// Buffers handed out and not yet released.
    public var outstandingBufferCount: Int { state.withLock { $0.outstanding } }

    /// How many times the pool had to allocate fresh picture storage; constant in steady state.
    public var storageAllocationCount: Int { allocator.storageAllocations }

    /// A buffer from the pool (`CVPixelBufferPoolCreatePixelBuffer`). Its contents are
    /// whatever the storage last held. Throws `.poolExhausted` when
    /// `maximumBufferCount` buffers are already out.
    public func makePixelBuffer() throws(SwiftRecordError) -> PixelBuffer {
        let spare = try state.withLock { (s: inout sending State) throws(SwiftRecordError) -> FrameHandle? in
            guard s.outstanding < maximumBufferCount else {
                throw SwiftRecordError(.poolExhausted, operation: "PixelBufferPool.makePixelBuffer",
                                       message: "all \(maximumBufferCount) buffers of the \(width)x\(height) \(pixelFormat) pool are in use; release one or drop this frame")
            }
            s.outstanding += 1
            return s.spareFrames.popLast()
        }
        let frame: Frame
        do throws(SwiftRecordError) {
            if let spare {
                let reused = spare.owner
                do {
                    try allocator.attachStorage(reused.pointer)
                } catch {
                    state.withLock { $0.spareFrames.append(spare) }
                    throw error
                }
                frame = reused
            } else {
                frame = try allocator.makeFrame()
            }
        } catch {
            state.withLock { $0.outstanding -= 1 }
            throw error
        }
        return PixelBuffer(frame: frame, width: width, height: height, pixelFormat: pixelFormat, isFullRange: isFullRange,
                           allocator: allocator, recycle: { [weak self] frame in
            // (With the pool gone, the frame is freed as it goes.)
            self?.giveBack(frame)
        })
    }

    /// A buffer, or nil when the pool is exhausted (the real-time path: drop the frame).
    public func makePixelBufferIfAvailable() -> PixelBuffer? {
        try? makePixelBuffer()
    }

    private func giveBack(_ frame: Frame) {
        // Drops our reference to the storage; it returns to the AVBufferPool once
        // the encoder has dropped its own.
        frame.unref()
        let spare = FrameHandle(owner: frame)
        state.withLock { s in
            s.outstanding -= 1
            s.spareFrames.append(spare)
        }
    }
}

internal import CFFmpeg
import Foundation

/// Where a writer's in-memory segments are cut (`AssetWriter.flushSegment()`,
/// `preferredOutputSegmentInterval`). Cuts are decided as the segment track's samples are
/// admitted (under its input's lock, in the order they reach the pipeline), and used on the
/// pipeline's thread: the picture at a cut is encoded as a key frame, and the segment is
/// closed before the first key packet at or after it. The lock is a leaf: nothing else is
/// taken while it is held.
final class SegmentCuts: Sendable {
    private struct State {
        /// Nil: indefinite, cuts only where `flushSegment()` asks.
        var interval: MediaTime?
        var origin: MediaTime?
        var nextBoundary: MediaTime?
        var flushRequested = false
        /// Cut points in the segment track's ticks, increasing.
        var pending: [Int64] = []
        var sessionStart: MediaTime?
        var any = false
    }
    private let state: Locked<State>

    init(interval: MediaTime?, origin: MediaTime?) {
        state = Locked(State(interval: interval, origin: origin))
    }

    /// The next sample of the segment track starts a segment.
    func requestFlush() { state.withLock { $0.flushRequested = true } }

    /// The session's start, once known: where the segments' 0 is in source time.
    var sessionStart: MediaTime? { state[\.sessionStart] }

    /// What `plan` decided for one sample: whether a segment starts at it, and the state
    /// to keep once the sample is queued.
    struct Decision {
        let ticks: Int64
        let cut: Bool
        let usedFlush: Bool
        let boundary: MediaTime?
    }

    /// The segment track is about to queue a sample at `time` (`ticks` on the session's
    /// timeline): whether a segment starts at it (the first sample starts the first one).
    /// A cut is registered at once, before the sample reaches the pipeline; `commit` once
    /// it is queued, `retract` when it was not.
    func plan(time: MediaTime, ticks: Int64, sessionStart: MediaTime) -> Decision {
        state.withLock { s in
            s.sessionStart = sessionStart
            var cut = s.flushRequested && s.any
            var boundary = s.nextBoundary
            if let interval = s.interval {
                if boundary == nil { boundary = (s.origin ?? sessionStart) + interval }
                if var b = boundary, time >= b {
                    cut = cut || s.any
                    while b <= time { b = b + interval }
                    boundary = b
                }
            }
            if cut { s.pending.append(ticks) }
            return Decision(ticks: ticks, cut: cut, usedFlush: s.flushRequested, boundary: boundary)
        }
    }

    /// The sample `decision` was made for was queued.
    func commit(_ decision: Decision) {
        state.withLock { s in
            if decision.usedFlush { s.flushRequested = false }
            s.nextBoundary = decision.boundary
            s.any = true
        }
    }

    /// The sample `decision` was made for was not queued.
    func retract(_ decision: Decision) {
        guard decision.cut else { return }
        state.withLock { s in s.pending.removeAll { $0 == decision.ticks } }
    }

    /// Whether the picture at `ticks` starts a segment (and so must be a key frame).
    func startsSegment(ticks: Int64) -> Bool {
        state.withLock { $0.pending.contains(ticks) }
    }

    /// A key packet of the segment track at `pts` ticks: true when a segment ends before it.
    func cutBefore(keyPacketAt pts: Int64) -> Bool {
        state.withLock { s in
            guard let first = s.pending.first, pts >= first else { return false }
            s.pending.removeAll { $0 <= pts }
            return true
        }
    }
}

/// One writer's segments in memory: owns the AVIOContext libavformat's mp4 muxer writes
/// into (its `opaque` is this object, unretained: the `Muxer` keeps this object as its
/// `callbackOwner` until its context is freed) and collects the bytes written since the last
/// segment was handed over. Used on the writing pipeline's thread only; not `Sendable`.
final class SegmentOutput {
    let io: UnsafeMutablePointer<AVIOContext>
    private var bytes = Data()
    /// Hands a finished segment over (the writer's delegate), on the pipeline's thread.
    let deliver: @Sendable (Data, AssetSegmentType, AssetSegmentReport?) -> Void

    init(deliver: @escaping @Sendable (Data, AssetSegmentType, AssetSegmentReport?) -> Void) throws(SwiftRecordError) {
        self.deliver = deliver
        let size: Int32 = 1 << 16
        guard let buffer = av_malloc(Int(size)) else {
            throw SwiftRecordError(.ffmpeg, operation: "av_malloc", message: "out of memory")
        }
        // `self` is not complete yet: the opaque is set once it is.
        guard let context = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), size, 1, nil, nil, { opaque, data, count in
            guard let opaque, let data, count >= 0 else { return sr_error_from_errno(EINVAL) }
            Unmanaged<SegmentOutput>.fromOpaque(opaque).takeUnretainedValue().bytes.append(data, count: Int(count))
            return count
        }, nil) else {
            var b: UnsafeMutableRawPointer? = buffer
            av_freep(&b)
            throw SwiftRecordError(.ffmpeg, operation: "avio_alloc_context", message: "out of memory")
        }
        io = context
        io.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        var context: UnsafeMutablePointer<AVIOContext>? = io
        av_freep(&context!.pointee.buffer)
        avio_context_free(&context)
    }

    /// The bytes written since the last call (after `avio_flush`).
    func take() -> Data {
        defer { bytes = Data() }
        return bytes
    }

    /// Whether the initialization segment has been handed over.
    private var initializationDelivered = false

    /// Hands `data` over as a media segment. The first one begins with the initialization
    /// segment (ftyp and moov: libavformat writes the moov with the first fragment), which
    /// is handed over first, by itself.
    func deliverSegment(_ data: Data, report: AssetSegmentReport?) {
        var media = data
        if !initializationDelivered {
            let split = SegmentOutput.firstMovieFragment(in: data) ?? data.count
            if split > 0 {
                initializationDelivered = true
                deliver(Data(data.prefix(split)), .initialization, nil)
            }
            media = Data(data.dropFirst(split))
        }
        if !media.isEmpty { deliver(media, .separable, report) }
    }

    /// Where the first top-level `moof` box of `data` begins, if it has one.
    static func firstMovieFragment(in data: Data) -> Int? {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int? in
            func word(_ at: Int, _ count: Int) -> UInt64 { (at..<(at + count)).reduce(0) { $0 << 8 | UInt64(raw[$1]) } }
            var offset = 0
            while offset + 8 <= raw.count {
                if raw[offset + 4] == 0x6D, raw[offset + 5] == 0x6F, raw[offset + 6] == 0x6F, raw[offset + 7] == 0x66 { return offset }  // "moof"
                var size = word(offset, 4)
                if size == 1 {
                    guard offset + 16 <= raw.count else { return nil }
                    size = word(offset + 8, 8)
                }
                // A box to the end of the data (0), or one that cannot be: no moof follows.
                guard size >= 8, size <= UInt64(raw.count - offset) else { return nil }
                offset += Int(size)
            }
            return nil
        }
    }
}

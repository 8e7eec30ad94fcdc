internal import CFFmpeg
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// The kind of media an input carries (`AVMediaType`). Audio comes later.
public enum MediaType: String, Sendable {
    case video
}

/// One track of an `AssetWriter`: takes pictures with presentation times, encodes them
/// with the codec its `VideoSettings` name, and hands the packets to the writer's muxer.
///
/// Appends are queued (a few samples deep) and encoded on the writer's serial queue,
/// so a capture thread never waits for the encoder. `isReadyForMoreMediaData` is false
/// while the queue is full: a real-time source should then drop the frame; the
/// synchronous `append` waits for room, the `async` one suspends.
///
/// The counterpart of `AVAssetWriterInput` on Apple platforms.
public final class AssetWriterInput: @unchecked Sendable {
    public let mediaType: MediaType
    public let outputSettings: VideoSettings

    /// Tune for a live source: a shorter queue, so lateness shows at once as
    /// `isReadyForMoreMediaData == false` (`expectsMediaDataInRealTime`). Set before `startWriting()`.
    public var expectsMediaDataInRealTime: Bool {
        get { lock.withLock { realTime } }
        set { lock.withLock { realTime = newValue } }
    }

    /// Rotation applied on display (`transform`), written as display-matrix side data. Set before `startWriting()`.
    public var transform: VideoTransform {
        get { lock.withLock { storedTransform } }
        set { lock.withLock { storedTransform = newValue } }
    }

    /// Samples dropped because their time was before the session start or at/after its end.
    public var droppedSampleCount: Int { lock.withLock { dropped } }
    /// Samples accepted for encoding.
    public var appendedSampleCount: Int { lock.withLock { appended } }

    /// Queue depth for a live source: deep enough to absorb one slow encode, shallow enough
    /// that a lagging encoder shows within ~100 ms at 30 fps.
    static let realTimeQueueDepth = 3
    /// Queue depth otherwise: keeps the encoder busy while the producer prepares the next frames.
    static let offlineQueueDepth = 6

    // Guarded by `lock` (shared with the writer once added).
    private var realTime = false
    private var storedTransform = VideoTransform.identity
    private var dropped = 0
    private var appended = 0
    var queued = 0
    var finished = false
    var lastTicks: Int64?
    var roomWaiters: [CheckedContinuation<Void, Never>] = []
    var request: (queue: DispatchQueue, block: @Sendable () -> Void)?
    var requestScheduled = false
    var appendsSinceRequest = 0

    /// Set when added to a writer; the writer's condition guards the state above from then on.
    var lock: Condition
    weak var writer: AssetWriter?

    // Used only on the writer's queue.
    var encoder: VideoEncoder?
    var streamIndex: Int32 = -1
    private var submitted: [Int64] = []
    private var pending: [UnsafeMutablePointer<AVPacket>] = []
    private var sparePackets: [UnsafeMutablePointer<AVPacket>] = []
    var endTicks: Int64?

    /// A video input with typed settings (`init(mediaType:outputSettings:)`).
    public init(mediaType: MediaType = .video, outputSettings: VideoSettings) {
        self.mediaType = mediaType
        self.outputSettings = outputSettings
        self.lock = Condition()
    }

    deinit {
        for var p in (pending + sparePackets).map(Optional.some) { av_packet_free(&p) }
    }

    var queueDepth: Int { queueDepthOverride ?? (realTime ? AssetWriterInput.realTimeQueueDepth : AssetWriterInput.offlineQueueDepth) }
    /// A queue depth chosen by the library for a known producer (set before `startWriting()`).
    var queueDepthOverride: Int?

    /// True while the writer is writing, the input is not finished and its queue has room
    /// (`isReadyForMoreMediaData`).
    public var isReadyForMoreMediaData: Bool {
        guard let writer else { return false }
        return lock.withLock { writer.statusLocked == .writing && !finished && queued < queueDepth }
    }

    /// Appends a sample, waiting while the queue is full (`append(_:)`). Throws a
    /// `SwiftRecordError` for a wrong state, a buffer of the wrong size or format, or a
    /// time that does not increase; the writer keeps writing after such a rejection.
    public func append(_ sampleBuffer: SampleBuffer) throws(SwiftRecordError) {
        guard let writer else { throw AssetWriterInput.notAdded }
        try writer.enqueue(sampleBuffer.pixelBuffer, at: sampleBuffer.presentationTimeStamp, to: self, wait: .block)
    }

    /// Appends a sample, suspending while the queue is full.
    public func append(_ sampleBuffer: SampleBuffer) async throws(SwiftRecordError) {
        guard let writer else { throw AssetWriterInput.notAdded }
        try await writer.enqueueAsync(sampleBuffer.pixelBuffer, at: sampleBuffer.presentationTimeStamp, to: self)
    }

    /// No more samples will come (`markAsFinished()`). The encoder is flushed by `finishWriting()`.
    public func markAsFinished() {
        lock.withLock {
            finished = true
            request = nil
            lock.broadcast()
        }
        resumeWaiters()
    }

    /// Calls `block` on `queue` whenever the input can take more data, until the input
    /// is marked finished (`requestMediaDataWhenReady(on:using:)`). The block should append
    /// while `isReadyForMoreMediaData` is true, then return. It is called again once the
    /// queue has room, as long as it appended something last time.
    public func requestMediaDataWhenReady(on queue: DispatchQueue, using block: @escaping @Sendable () -> Void) {
        lock.withLock {
            request = (queue, block)
            requestScheduled = false
        }
        scheduleRequestIfReady()
    }

    // FAULT-INJECTION (tests only; set before startWriting()): each frame's encode on the
    // writer's queue sleeps `simulatedEncodeDelay` first; the Nth frame the queue encodes
    // (0-based) fails as an encoder error would, through the writer's failure path.
    package var simulatedEncodeDelay: Duration? {
        get { lock.withLock { faults.delay } }
        set { lock.withLock { faults.delay = newValue } }
    }
    package var simulatedEncodeFailureAtFrame: Int? {
        get { lock.withLock { faults.failAt } }
        set { lock.withLock { faults.failAt = newValue } }
    }
    private var faults: (delay: Duration?, failAt: Int?, encoded: Int) = (nil, nil, 0)

    /// FAULT-INJECTION: called on the writer's queue before each frame is encoded.
    func simulateEncodeFaults() throws(SwiftRecordError) {
        let (delay, failAt, n): (Duration?, Int?, Int) = lock.withLock {
            defer { faults.encoded += 1 }
            return (faults.delay, faults.failAt, faults.encoded)
        }
        if let delay {
            let (s, atto) = delay.components
            var ts = timespec(tv_sec: Int(s), tv_nsec: Int(atto / 1_000_000_000)), rest = timespec()
            while nanosleep(&ts, &rest) != 0 && errno == EINTR { ts = rest }
        }
        if failAt == n {
            throw SwiftRecordError(.ffmpeg, operation: "avcodec_send_frame(simulated)", message: "simulated encoder failure")
        }
    }

    static let notAdded = SwiftRecordError(.invalidState, operation: "append", message: "the input has not been added to an AssetWriter; call writer.add(input) before startWriting()")

    // MARK: - Writer side

    func scheduleRequestIfReady() {
        let toRun: (DispatchQueue, @Sendable () -> Void)? = lock.withLock {
            guard let r = request, !requestScheduled, !finished, let writer, writer.statusLocked == .writing,
                  queued < queueDepth else { return nil }
            requestScheduled = true
            appendsSinceRequest = 0
            return (r.queue, r.block)
        }
        guard let (queue, block) = toRun else { return }
        queue.async { [weak self] in
            block()
            guard let self else { return }
            let again: Bool = self.lock.withLock {
                self.requestScheduled = false
                return self.appendsSinceRequest > 0
            }
            if again { self.scheduleRequestIfReady() }
        }
    }

    func resumeWaiters() {
        let waiters: [CheckedContinuation<Void, Never>] = lock.withLock {
            let w = roomWaiters
            roomWaiters.removeAll()
            return w
        }
        for w in waiters { w.resume() }
    }

    /// Admission (lock held): drops samples outside the session, rejects times that do
    /// not increase, and returns the time in encoder ticks, or nil for a dropped sample.
    func admitLocked(_ time: MediaTime, sessionStart: MediaTime, sessionEnd: MediaTime?) throws(SwiftRecordError) -> Int64? {
        guard time.isValid else {
            throw SwiftRecordError(.invalidArgument, operation: "append", message: "presentation time is invalid; expected a valid MediaTime")
        }
        if time < sessionStart || (sessionEnd.map { time >= $0 } ?? false) {
            dropped += 1
            return nil
        }
        guard let encoder else { throw AssetWriterInput.notAdded }
        let ticks = AssetWriter.ticks(time - sessionStart, in: encoder.timeBase)
        guard let ticks else {
            throw SwiftRecordError(.invalidArgument, operation: "append", message: "presentation time \(time) is out of range")
        }
        if let last = lastTicks, ticks <= last {
            throw SwiftRecordError(.nonIncreasingTimestamp, operation: "append",
                                   message: "presentation time \(time) does not come after the previous sample's"
                                   + (encoder.nominalFrameDuration != nil ? " at the expected frame rate \(outputSettings.expectedSourceFrameRate.map(\.description) ?? "")" : "")
                                   + "; times must increase")
        }
        lastTicks = ticks
        appended += 1
        appendsSinceRequest += 1
        return ticks
    }

    // MARK: - Encoding (writer's queue only)

    private func packet() -> UnsafeMutablePointer<AVPacket>? {
        sparePackets.popLast() ?? av_packet_alloc()
    }

    /// Encodes one frame (pts in ticks) and writes what the encoder gives back.
    func encode(_ frame: UnsafeMutablePointer<AVFrame>?, muxer: Muxer) throws(SwiftRecordError) {
        guard let encoder else { throw AssetWriterInput.notAdded }
        if let frame {
            submitted.append(frame.pointee.pts)
            // Bound the history: no encoder holds back anywhere near this many frames.
            if submitted.count > 4096 { submitted.removeFirst(2048) }
        }
        var step = try encoder.send(frame)
        while true {
            try drain(encoder, muxer: muxer)
            if step != .again { break }
            step = try encoder.send(frame)
        }
        try writeResolved(muxer: muxer, final: frame == nil)
    }

    private func drain(_ encoder: VideoEncoder, muxer: Muxer) throws(SwiftRecordError) {
        while true {
            guard let pkt = packet() else {
                throw SwiftRecordError(.ffmpeg, operation: "av_packet_alloc", message: "out of memory")
            }
            let r: CodecStep
            do { r = try encoder.receive(pkt) } catch { sparePackets.append(pkt); throw error }
            guard r == .ok else { sparePackets.append(pkt); return }
            pending.append(pkt)
        }
    }

    /// Packets leave in decode order once their duration is known: the gap to the next
    /// submitted frame's time. libx264 leaves durations at 0, which would make a 60-frame
    /// 30 fps file last 1.967 s instead of 2.000 s.
    private func writeResolved(muxer: Muxer, final: Bool) throws(SwiftRecordError) {
        guard let encoder else { return }
        while let pkt = pending.first {
            let pts = pkt.pointee.pts
            var duration: Int64?
            if let next = nextSubmitted(after: pts) {
                duration = next - pts
            } else if final {
                if let end = endTicks, end > pts {
                    duration = end - pts
                } else if let nominal = encoder.nominalFrameDuration {
                    duration = nominal
                } else if submitted.count >= 2 {
                    duration = submitted[submitted.count - 1] - submitted[submitted.count - 2]
                } else {
                    duration = 1
                }
            }
            guard let duration else { return }
            pending.removeFirst()
            if let end = endTicks, pts >= end {
                av_packet_unref(pkt)
                sparePackets.append(pkt)
                continue
            }
            pkt.pointee.duration = duration
            do {
                try muxer.write(pkt, stream: streamIndex, from: encoder.timeBase)
            } catch {
                av_packet_unref(pkt)
                sparePackets.append(pkt)
                throw error
            }
            av_packet_unref(pkt)
            sparePackets.append(pkt)
        }
    }

    private func nextSubmitted(after pts: Int64) -> Int64? {
        var lo = 0, hi = submitted.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if submitted[mid] <= pts { lo = mid + 1 } else { hi = mid }
        }
        return lo < submitted.count ? submitted[lo] : nil
    }

    func releaseEncoder() {
        encoder = nil
        for p in pending { av_packet_unref(p); sparePackets.append(p) }
        pending.removeAll()
    }
}

internal import CFFmpeg
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Metadata written into the file's header (`AVAssetWriter.metadata`).
public struct AssetMetadata: Sendable, Hashable {
    /// The title (`AVMetadataCommonIdentifierTitle`).
    public var title: String?
    /// When the recording was made (`AVMetadataCommonIdentifierCreationDate`).
    public var creationDate: Date?
    /// Further container tags by FFmpeg's key names ("comment", "artist", …).
    public var custom: [String: String]

    public init(title: String? = nil, creationDate: Date? = nil, custom: [String: String] = [:]) {
        self.title = title
        self.creationDate = creationDate
        self.custom = custom
    }

    var dictionary: [String: String] {
        var d = custom
        if let title { d["title"] = title }
        if let creationDate {
            // ISO 8601 in UTC with microseconds, the form FFmpeg's muxers parse. Formatted by
            // hand: DateFormatter would load ICU, which costs more start-up time than encoding a frame.
            let seconds = creationDate.timeIntervalSince1970
            var whole = time_t(seconds.rounded(.down))
            let micros = Int(((seconds - Double(whole)) * 1_000_000).rounded(.down))
            var tm = Glibc.tm()
            gmtime_r(&whole, &tm)
            let pad = { (v: Int32, w: Int) in String(v).leftPadded(to: w) }
            d["creation_time"] = "\(pad(tm.tm_year + 1900, 4))-\(pad(tm.tm_mon + 1, 2))-\(pad(tm.tm_mday, 2))T"
                + "\(pad(tm.tm_hour, 2)):\(pad(tm.tm_min, 2)):\(pad(tm.tm_sec, 2)).\(String(micros).leftPadded(to: 6))Z"
        }
        return d
    }
}

/// Writes media to a file (or, later, a network URL): inputs are added, the writer
/// is started, a session is started at a source time, samples are appended, and
/// `finishWriting()` flushes the encoders and writes the index.
///
/// Lifecycle, as on Apple platforms: `canAdd(_:)` / `add(_:)` → `startWriting()` →
/// `startSession(atSourceTime:)` → append → `markAsFinished()` →
/// `endSession(atSourceTime:)` (optional) → `finishWriting()` or `cancelWriting()`.
///
/// One serial queue owns every encoder and the muxer; appends from any thread are
/// queued to it. A failure moves `status` to `.failed`, keeps the reason in `error`,
/// and finalises the file as far as it can so what was written stays playable.
///
/// The counterpart of `AVAssetWriter` on Apple platforms.
public final class AssetWriter: @unchecked Sendable {
    /// Where the writer is in its lifecycle (`AVAssetWriter.Status`).
    public enum Status: String, Sendable {
        case unknown, writing, completed, failed, cancelled
    }

    public let outputURL: URL
    public let fileType: FileType

    /// Guards the state below and every added input's counters.
    let cond = Condition()
    private var storedStatus = Status.unknown
    private var storedError: SwiftRecordError?
    private var storedInputs: [AssetWriterInput] = []
    private var sessionStart: MediaTime?
    private var sessionEnd: MediaTime?
    private var storedOptimize = false
    private var storedMetadata = AssetMetadata()
    private var storedFragmentInterval: MediaTime?
    private var storedInitialFragmentInterval: MediaTime?
    private var finishing = false
    /// Whether the open file is being written in fragments (decided at startWriting()).
    private var writingFragments = false

    /// The one serial place that owns the encoders and the muxer.
    private let queue = DispatchQueue(label: "swift-record.asset-writer", qos: .userInitiated)
    private var muxer: Muxer?

    /// A writer for `outputURL` in `fileType` (`init(outputURL:fileType:)`). Nothing is
    /// opened until `startWriting()`.
    public init(outputURL: URL, fileType: FileType) {
        self.outputURL = outputURL
        self.fileType = fileType
    }

    /// A writer whose type comes from the file's extension (.mp4, .mov, .mkv, .webm).
    public convenience init(outputURL: URL) throws(SwiftRecordError) {
        guard let type = FileType(pathExtension: outputURL.pathExtension) else {
            throw SwiftRecordError(.unsupported, operation: "AssetWriter",
                                   message: "cannot tell the container from '\(outputURL.lastPathComponent)'; expected an extension of .mp4, .mov, .mkv or .webm")
        }
        self.init(outputURL: outputURL, fileType: type)
    }

    public var status: Status { cond.withLock { storedStatus } }
    var statusLocked: Status { storedStatus }
    /// Why the writer failed, when `status == .failed` (`error`).
    public var error: SwiftRecordError? { cond.withLock { storedError } }
    public var inputs: [AssetWriterInput] { cond.withLock { storedInputs } }

    /// Put the index (moov) before the media data, so playback over a network can start
    /// before the whole file arrived (`shouldOptimizeForNetworkUse`). MP4 and MOV.
    public var shouldOptimizeForNetworkUse: Bool {
        get { cond.withLock { storedOptimize } }
        set { cond.withLock { storedOptimize = newValue } }
    }

    /// Title, creation date and other tags; set before `startWriting()` (`metadata`).
    public var metadata: AssetMetadata {
        get { cond.withLock { storedMetadata } }
        set { cond.withLock { storedMetadata = newValue } }
    }

    /// Write crash-safe: while recording, MP4 and MOV are written as a series of fragments
    /// this long (MKV closes a cluster at the same points), each flushed to the file, so
    /// if the process or the machine dies, everything up to the last completed fragment
    /// plays. On a normal finish the file is rewritten as an ordinary MP4/MOV (index at the
    /// front when `shouldOptimizeForNetworkUse`), so nobody sees the difference. Nil (the
    /// default) writes one index at the end. Set before `startWriting()` (`movieFragmentInterval`).
    public var movieFragmentInterval: MediaTime? {
        get { cond.withLock { storedFragmentInterval } }
        set { cond.withLock { storedFragmentInterval = newValue } }
    }

    /// Length of the first fragment, shorter so that a recording that dies early still
    /// has something (`initialMovieFragmentInterval`). Nil: the same as `movieFragmentInterval`.
    public var initialMovieFragmentInterval: MediaTime? {
        get { cond.withLock { storedInitialFragmentInterval } }
        set { cond.withLock { storedInitialFragmentInterval = newValue } }
    }

    /// Whether `input` can be added now (`canAdd(_:)`): the writer has not started, the
    /// input is not added elsewhere, and the container can carry its codec.
    public func canAdd(_ input: AssetWriterInput) -> Bool {
        (try? validateAdd(input)) != nil
    }

    private func validateAdd(_ input: AssetWriterInput) throws(SwiftRecordError) {
        try cond.withLock { () throws(SwiftRecordError) in
            guard storedStatus == .unknown else {
                throw SwiftRecordError(.invalidState, operation: "add", message: "inputs can only be added before startWriting(); the writer is \(storedStatus)")
            }
            guard input.writer == nil, !storedInputs.contains(where: { $0 === input }) else {
                throw SwiftRecordError(.invalidState, operation: "add", message: "the input is already added to a writer")
            }
        }
        guard fileType.supports(input.outputSettings.codec) else {
            throw SwiftRecordError(.unsupported, operation: "add",
                                   message: "a .\(fileType) file cannot carry \(input.outputSettings.codec); use "
                                   + FileType.allCases.filter { $0.supports(input.outputSettings.codec) }.map { ".\($0)" }.joined(separator: " or "))
        }
    }

    /// Adds an input (`add(_:)`). Throws where `canAdd(_:)` is false, saying why.
    public func add(_ input: AssetWriterInput) throws(SwiftRecordError) {
        try validateAdd(input)
        cond.withLock {
            input.lock = cond
            input.writer = self
            storedInputs.append(input)
        }
    }

    /// Opens the encoders and the output and writes the header (`startWriting()`).
    /// Throws (and moves to `.failed`) when a codec cannot be opened or the output
    /// cannot be written, before any sample is taken.
    public func startWriting() throws(SwiftRecordError) {
        let (inputs, optimize, meta, plan) = try cond.withLock { () throws(SwiftRecordError) in
            guard storedStatus == .unknown else {
                throw SwiftRecordError(.invalidState, operation: "startWriting", message: "the writer is already \(storedStatus)")
            }
            guard !storedInputs.isEmpty else {
                throw SwiftRecordError(.invalidState, operation: "startWriting", message: "no inputs; add an AssetWriterInput first")
            }
            var plan: Muxer.FragmentPlan?
            if let interval = storedFragmentInterval {
                let us = interval.convertScale(1_000_000).value
                let first = (storedInitialFragmentInterval ?? interval).convertScale(1_000_000).value
                guard interval.isValid, us > 0, first > 0 else {
                    throw SwiftRecordError(.invalidArgument, operation: "startWriting", message: "movieFragmentInterval must be a positive time")
                }
                plan = Muxer.FragmentPlan(initial: first, interval: us)
            }
            writingFragments = plan != nil
            return (storedInputs, storedOptimize, storedMetadata, plan)
        }
        let opened: Result<Void, SwiftRecordError> = queue.sync {
            Result { () throws(SwiftRecordError) in
                let muxer = try Muxer(url: outputURL.isFileURL ? outputURL.path : outputURL.absoluteString, fileType: fileType)
                for input in inputs {
                    let encoder = try VideoEncoder(settings: input.outputSettings, globalHeader: muxer.wantsGlobalHeader)
                    input.encoder = encoder
                    input.streamIndex = try muxer.addStream(for: encoder, transform: input.transform)
                }
                var options: [String: String] = [:]
                if optimize && plan == nil && (fileType == .mp4 || fileType == .mov) { options["movflags"] = "+faststart" }
                try muxer.writeHeader(metadata: meta.dictionary, options: options, fragments: plan)
                self.muxer = muxer
            }
        }
        if case .failure(let error) = opened {
            queue.sync {
                for input in inputs { input.releaseEncoder() }
                muxer = nil
            }
            removeOutputFile()
            cond.withLock {
                storedStatus = .failed
                storedError = error
            }
            throw error
        }
        cond.withLock { storedStatus = .writing }
        for input in inputs { input.scheduleRequestIfReady() }
    }

    /// Starts the timeline at `startTime` (`startSession(atSourceTime:)`): a sample at this
    /// time is at 0 in the file; samples before it are dropped.
    public func startSession(atSourceTime startTime: MediaTime) throws(SwiftRecordError) {
        try cond.withLock { () throws(SwiftRecordError) in
            guard storedStatus == .writing else {
                throw SwiftRecordError(.invalidState, operation: "startSession", message: "call startWriting() first; the writer is \(storedStatus)")
            }
            guard sessionStart == nil else {
                throw SwiftRecordError(.invalidState, operation: "startSession", message: "the session has already started")
            }
            guard startTime.isValid else {
                throw SwiftRecordError(.invalidArgument, operation: "startSession", message: "the start time is invalid")
            }
            sessionStart = startTime
        }
    }

    /// Ends the timeline at `endTime` (`endSession(atSourceTime:)`): samples at or after it
    /// are not written, and the last sample lasts until it. Call it before appending
    /// past the end or before `finishWriting()`; samples already written stay.
    public func endSession(atSourceTime endTime: MediaTime) throws(SwiftRecordError) {
        let ticks: [(AssetWriterInput, Int64)] = try cond.withLock { () throws(SwiftRecordError) in
            guard storedStatus == .writing, let start = sessionStart else {
                throw SwiftRecordError(.invalidState, operation: "endSession", message: "no session is running")
            }
            guard endTime.isValid, endTime > start else {
                throw SwiftRecordError(.invalidArgument, operation: "endSession", message: "end time \(endTime) must be after the session start \(start)")
            }
            sessionEnd = endTime
            return storedInputs.compactMap { input in
                input.encoder.flatMap { AssetWriter.ticks(endTime - start, in: $0.timeBase) }.map { (input, $0) }
            }
        }
        queue.async { for (input, t) in ticks { input.endTicks = t } }
    }

    enum Wait { case block, fail }

    /// What became of an append.
    enum Admission { case queued, dropped, full }

    /// Common admission for every append path: checks the buffer and the state, drops
    /// samples outside the session, waits for room (or reports `.full`), and queues a
    /// reference to the picture for the encoder, without copying it.
    @discardableResult
    func enqueue(_ buffer: PixelBuffer, at time: MediaTime, to input: AssetWriterInput, wait: Wait) throws(SwiftRecordError) -> Admission {
        let s = input.outputSettings
        guard buffer.width == s.width, buffer.height == s.height, buffer.pixelFormat == s.pixelFormat else {
            throw SwiftRecordError(.pixelBufferMismatch, operation: "append",
                                   message: "pixel buffer is \(buffer.width)x\(buffer.height) \(buffer.pixelFormat); this input encodes \(s.width)x\(s.height) \(s.pixelFormat) (use a PixelBufferAdaptor with sourcePixelBufferAttributes to convert)")
        }
        let outcome: (Admission, Int64?) = try cond.withLock { () throws(SwiftRecordError) -> (Admission, Int64?) in
            while true {
                try checkAppendableLocked(input)
                if input.queued < input.queueDepth { break }
                if wait == .fail { return (.full, nil) }
                cond.wait()
            }
            guard let ticks = try input.admitLocked(time, sessionStart: sessionStart ?? .invalid, sessionEnd: sessionEnd) else {
                return (.dropped, nil)
            }
            input.queued += 1
            return (.queued, ticks)
        }
        guard outcome.0 == .queued, let ticks = outcome.1 else { return outcome.0 }
        guard let ref = av_frame_alloc() else {
            releaseSlot(of: input)
            throw SwiftRecordError(.ffmpeg, operation: "av_frame_alloc", message: "out of memory")
        }
        let r = av_frame_ref(ref, buffer.frame)
        if r < 0 {
            var f: UnsafeMutablePointer<AVFrame>? = ref
            av_frame_free(&f)
            releaseSlot(of: input)
            throw SwiftRecordError(.ffmpeg, operation: "av_frame_ref", message: ffmpegErrorString(r), ffmpegCode: r)
        }
        ref.pointee.pts = ticks
        ref.pointee.pict_type = AV_PICTURE_TYPE_NONE
        let queued = QueuedFrame(frame: ref)
        queue.async { self.encodeQueued(queued.frame, for: input) }
        return .queued
    }

    /// The async append: suspends (without blocking a thread) while the queue is full.
    func enqueueAsync(_ buffer: PixelBuffer, at time: MediaTime, to input: AssetWriterInput) async throws(SwiftRecordError) {
        while try enqueue(buffer, at: time, to: input, wait: .fail) == .full {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now: Bool = cond.withLock {
                    if input.queued < input.queueDepth || storedStatus != .writing || input.finished || finishing {
                        return true
                    }
                    input.roomWaiters.append(c)
                    return false
                }
                if now { c.resume() }
            }
        }
    }

    /// Blocks until `input`'s queue has room, so a producer fills a buffer only when it can
    /// be queued at once (no filled buffer waits); throws why when appending is no longer possible.
    func waitForRoom(in input: AssetWriterInput) throws(SwiftRecordError) {
        try cond.withLock { () throws(SwiftRecordError) in
            while true {
                try checkAppendableLocked(input)
                if input.queued < input.queueDepth { return }
                cond.wait()
            }
        }
    }

    private func releaseSlot(of input: AssetWriterInput) {
        cond.withLock {
            input.queued -= 1
            cond.broadcast()
        }
        input.resumeWaiters()
        input.scheduleRequestIfReady()
    }

    /// Runs on the queue: encodes one queued picture and writes the packets.
    private func encodeQueued(_ frame: UnsafeMutablePointer<AVFrame>, for input: AssetWriterInput) {
        defer {
            var f: UnsafeMutablePointer<AVFrame>? = frame
            av_frame_free(&f)
            releaseSlot(of: input)
        }
        guard cond.withLock({ storedStatus == .writing }), let muxer else { return }
        do {
            try input.simulateEncodeFaults() // FAULT-INJECTION
            try input.encode(frame, muxer: muxer)
        } catch {
            failOnQueue(error)
        }
    }

    /// Runs on the queue: records the failure and finalises what was written.
    private func failOnQueue(_ error: SwiftRecordError) {
        cond.withLock {
            if storedStatus == .writing {
                storedStatus = .failed
                storedError = error
            }
            cond.broadcast()
        }
        try? muxer?.finish()
        muxer = nil
        let inputs = cond.withLock { storedInputs }
        for input in inputs {
            input.releaseEncoder()
            input.resumeWaiters()
        }
    }

    /// Marks every input finished, flushes the encoders, writes the trailer and closes
    /// the file (`finishWriting(completionHandler:)`, as `async throws`). Throws the
    /// writer's error if it failed; the file then holds what was written before the failure.
    public func finishWriting() async throws(SwiftRecordError) {
        let result: Result<Void, SwiftRecordError> = await withCheckedContinuation { c in
            finish { c.resume(returning: $0) }
        }
        try result.get()
    }

    /// The completion-handler form of `finishWriting()`; check `status` and `error` in the handler.
    public func finishWriting(completionHandler: @escaping @Sendable () -> Void) {
        finish { _ in completionHandler() }
    }

    private func finish(_ done: @escaping @Sendable (Result<Void, SwiftRecordError>) -> Void) {
        let inputs: [AssetWriterInput]
        do {
            inputs = try cond.withLock { () throws(SwiftRecordError) -> [AssetWriterInput] in
                switch storedStatus {
                case .writing where !finishing: break
                case .failed:
                    throw storedError ?? SwiftRecordError(.invalidState, operation: "finishWriting", message: "the writer has failed")
                default:
                    throw SwiftRecordError(.invalidState, operation: "finishWriting",
                                           message: finishing ? "finishWriting() was already called" : "the writer is \(storedStatus); call startWriting() first")
                }
                finishing = true
                for input in storedInputs { input.finished = true; input.request = nil }
                cond.broadcast()
                return storedInputs
            }
        } catch {
            done(.failure(error))
            return
        }
        for input in inputs { input.resumeWaiters() }
        queue.async {
            guard self.cond.withLock({ self.storedStatus == .writing }), let muxer = self.muxer else {
                let e = self.cond.withLock { self.storedError } ?? SwiftRecordError(.cancelled, operation: "finishWriting", message: "writing was cancelled")
                done(.failure(e))
                return
            }
            do throws(SwiftRecordError) {
                for input in inputs { try input.encode(nil, muxer: muxer) }
                try muxer.finish()
                self.muxer = nil
                self.defragmentIfNeeded()
                for input in inputs { input.releaseEncoder() }
                self.cond.withLock { self.storedStatus = .completed; self.cond.broadcast() }
                done(.success(()))
            } catch {
                self.failOnQueue(error)
                done(.failure(error))
            }
        }
    }

    /// A fragmented MP4/MOV, finished normally, becomes an ordinary one: same packets,
    /// one index (at the front when optimised for network use). If that rewrite cannot be
    /// done (the disk is too full for a second copy), the fragmented file stays: it is a
    /// complete, playable MP4 too, only less widely seekable.
    private func defragmentIfNeeded() {
        let (fragmented, optimize) = cond.withLock { (writingFragments, storedOptimize) }
        guard fragmented, fileType == .mp4 || fileType == .mov, outputURL.isFileURL else { return }
        _ = try? MediaRepair.repair(input: outputURL, output: outputURL, fileType: fileType, optimizeForNetworkUse: optimize)
    }

    /// Stops writing and deletes the output file (`cancelWriting()`).
    public func cancelWriting() {
        let wasStarted: Bool = cond.withLock {
            guard storedStatus == .writing || storedStatus == .unknown else { return false }
            let started = storedStatus == .writing
            storedStatus = .cancelled
            cond.broadcast()
            return started
        }
        let inputs = cond.withLock { storedInputs }
        for input in inputs { input.resumeWaiters() }
        guard wasStarted else { return }
        queue.sync {
            muxer = nil
            for input in inputs { input.releaseEncoder() }
        }
        removeOutputFile()
    }

    private func removeOutputFile() {
        if outputURL.isFileURL { _ = unlink(outputURL.path) }
    }

    private func checkAppendableLocked(_ input: AssetWriterInput) throws(SwiftRecordError) {
        switch storedStatus {
        case .writing: break
        case .failed:
            throw storedError ?? SwiftRecordError(.invalidState, operation: "append", message: "the writer has failed")
        default:
            throw SwiftRecordError(.invalidState, operation: "append", message: storedStatus == .unknown
                                   ? "call startWriting() and startSession(atSourceTime:) before appending"
                                   : "the writer is \(storedStatus); nothing more can be appended")
        }
        guard sessionStart != nil else {
            throw SwiftRecordError(.invalidState, operation: "append", message: "call startSession(atSourceTime:) before appending")
        }
        guard !input.finished, !finishing else {
            throw SwiftRecordError(.invalidState, operation: "append", message: "the input was marked as finished; nothing more can be appended")
        }
    }

    static func ticks(_ t: MediaTime, in tb: AVRational) -> Int64? {
        guard t.isValid, tb.num > 0, tb.den > 0 else { return nil }
        let n = Int128(t.value) * Int128(tb.den)
        let d = Int128(t.timescale) * Int128(tb.num)
        return Int64(exactly: MediaTime.divide(n, by: d, rounding: .toNearest))
    }
}

/// A frame reference travelling from an append to the writer's queue; only the queue touches it.
struct QueuedFrame: @unchecked Sendable {
    let frame: UnsafeMutablePointer<AVFrame>
}

internal import CPulse
import Foundation
import SwiftRecord

/// Records a PulseAudio source — a microphone, or a sink's monitor ("what you hear") —
/// through libpulse's asynchronous API on a threaded mainloop.
///
/// With no device named, it records the monitor of the server's default sink: what the
/// speakers play. The server converts to the rate and layout asked for; samples arrive as
/// interleaved f32 (or s16/s32) in chunks of about 10 ms.
///
/// Threads and locks: libpulse's mainloop thread calls the read callback, which copies
/// each fragment out of the server's buffer, stamps it and queues it in a `Locked`;
/// `nextChunk()` waits on that lock's condition (no polling) and takes the oldest. The
/// queue is bounded (two seconds); past that the oldest chunks are dropped and the next
/// one is marked as following a gap.
///
/// Locks, in order: `lifecycle` (start/stop) → the client's lifecycle → libpulse's
/// mainloop lock → the `Locked` states the callbacks write.
///
/// Timestamps: each chunk's presentation time is the host monotonic time (the session's
/// clock, `MonotonicClock` by default) at which its first sample was captured. When the
/// read callback peeks a fragment it asks `pa_stream_get_latency`, which for a record
/// stream is the stream time (the position of the sample the device is capturing now,
/// interpolated from the last timing update) minus the read index (the position of the
/// first byte not yet read, i.e. this fragment's first sample): how long ago that sample
/// was captured. So the measured time is `now − latency` (`now + latency` when libpulse
/// says the latency is negative: a monitor hands out samples before the sink plays
/// them). `PulseTimestampFilter` then counts samples between measurements so the times
/// do not jitter, following the measurement slowly (device drift) and jumping only
/// after a gap. Before the first timing update the fragment is taken to have just been
/// captured (`now − its duration`); so is every fragment of the first
/// `settleSeconds`, while libpulse's estimate settles (it starts from a snapshot taken
/// before the device adjusted its latency to ours: 600 ms off, measured).
///
/// Gaps: a hole in the stream (`pa_stream_peek` with no data), an overflow, a suspend or
/// resume, or a move to another device mark the next chunk `followsGap` and its time is
/// measured afresh. The end: when the stream fails or ends (the device was removed, the
/// server went away) `nextChunk()` returns what was queued, then nil, and `endReason`
/// says why; nothing crashes or hangs.
///
/// The counterpart of an audio `AVCaptureDevice` input.
public final class PulseAudioSource: AudioCaptureSource {
    public static let name = "pulse"

    /// The length of the fragments asked of the server (`fragsize`): low latency without
    /// waking the mainloop more than 100 times a second.
    public static let fragmentMilliseconds = 10
    /// How long connecting and opening the stream may take before `start()` gives up.
    public static let startTimeout: Double = 5
    /// How much audio may wait for `nextChunk()` before the oldest is dropped.
    public static let maxQueuedSeconds = 2
    /// How long libpulse's latency estimate is not trusted after the stream opens. Its
    /// first timing snapshot is taken before the device has adjusted to our low-latency
    /// request (a null sink's monitor reported 590 ms, then under 10 ms), and its smoother
    /// converges over about a second; until then a fragment is taken to have been
    /// captured just before it arrived (`now − its duration`).
    public static let settleSeconds = 1.5

    public let identifier = PulseAudioSource.name
    public let format: AudioFormat
    public let isLive = true
    /// The device asked for (nil: the default sink's monitor).
    public let requestedDevice: String?
    /// The program whose sound alone is recorded (`app:NAME`: its application name or
    /// binary, or its process id), or nil.
    public let requestedApplication: String?
    /// How often a source recording one program looks for its next stream (ns).
    static let followIntervalNanoseconds: Int64 = 200_000_000
    /// The server to connect to (`unix:/path`, `tcp:host`); nil: `$PULSE_SERVER` or the per-user socket.
    public let server: String?

    let channelMap: String?
    /// FAULT-INJECTION (`AudioSourceOptions.clockSkew`): the rate asked of the server,
    /// `format.sampleRate × (1 + skew)`, while the samples are labelled `format.sampleRate`:
    /// a device whose clock runs that much fast (or slow), timed by the host clock.
    let captureRate: Int
    let lifecycle = Locked(Lifecycle())
    let stream: StreamContext

    struct Lifecycle {
        var client: PulseClient?
        var stream: OpaquePointer?
        var started = false
        var stopped = false
    }

    /// A source recording `options.device` (nil: the default sink's monitor) at
    /// `options.sampleRate` and `options.channelLayout`. Checks the format at once;
    /// `start()` connects.
    ///
    /// With `application`, only that program's sound is recorded (its playback streams,
    /// through the monitor of the sink each plays into, `pa_stream_set_monitor_stream`):
    /// a program not playing yet is waited for, and one that closes its stream and opens
    /// another is followed; the track has silence meanwhile.
    public init(options: AudioSourceOptions = AudioSourceOptions(), sampleType: AudioFormat.SampleType = .f32,
                server: String? = nil, application: String? = nil) throws(SwiftRecordError) {
        let format = AudioFormat(sampleType: sampleType, isPlanar: false, sampleRate: options.sampleRate, channelLayout: options.channelLayout)
        try format.validate("pulse")
        try PulseLibrary.load()
        var spec = PulseAudioSource.sampleSpec(format)
        guard pa_sample_spec_valid(&spec) != 0 else {
            throw SwiftRecordError(.invalidArgument, operation: "pulse",
                                   message: "PulseAudio cannot record \(format); expected at most \(PA_RATE_MAX) Hz and \(PA_CHANNELS_MAX) channels")
        }
        self.format = format
        captureRate = Int((Double(format.sampleRate) * (1 + options.clockSkew)).rounded())
        requestedApplication = application.flatMap { $0.isEmpty ? nil : $0 }
        requestedDevice = requestedApplication == nil ? options.device.flatMap { $0.isEmpty ? nil : $0 } : nil
        self.server = server
        channelMap = PulseAudioSource.channelMapNames[options.channelLayout.name]
        let description = requestedApplication.map { "the sound of '\($0)' alone" }
            ?? requestedDevice.map { "PulseAudio source '\($0)'" } ?? "the default PulseAudio sink's monitor"
        stream = StreamContext(format: format, clock: options.clock, description: description)
        if requestedApplication != nil { stream.capture.withLock { $0.followsApplication = true } }
    }

    deinit { stop() }

    public var captureDescription: String? { stream.capture.withLock { $0.description } }
    public var endReason: String? { stream.capture.withLock { $0.endReason } }
    /// The source being recorded, once started (`test.monitor`).
    public var deviceName: String? { stream.capture.withLock { $0.deviceName } }
    /// `app:NAME` or `app:PID`: the program's own name (what a track is titled by default).
    public var programName: String? { stream.capture.withLock { $0.programName } }
    /// Gaps seen so far: holes, overflows, suspends and moves, and chunks dropped because
    /// nobody read them.
    public var gapCount: Int { stream.capture.withLock { $0.gaps } }

    public func start() throws {
        try lifecycle.withLock { (l: inout Lifecycle) throws(SwiftRecordError) in
            guard !l.stopped else { throw SwiftRecordError(.invalidState, operation: "pulse", message: "the source was stopped; make a new one") }
            guard !l.started else { throw SwiftRecordError(.invalidState, operation: "pulse", message: "the source is already started") }
            l.started = true
        }
        let client: PulseClient
        do {
            client = try PulseClient(server: server, timeout: PulseAudioSource.startTimeout)
        } catch {
            stop()
            throw error
        }
        if let application = requestedApplication {
            do {
                try lifecycle.withLock { (l: inout Lifecycle) throws(SwiftRecordError) in
                    guard !l.stopped else {
                        throw SwiftRecordError(.cancelled, operation: "pulse", message: "the source was stopped while starting")
                    }
                    l.client = client
                }
                if try !attach(to: application, client: client) {
                    stream.capture.withLock { $0.description = "the sound of '\(application)' alone (not playing yet: silence until it does)" }
                }
            } catch {
                stop()
                client.close()
                throw error
            }
            follow(application, client: client)
            return
        }
        do {
            let device = try resolveDevice(client)
            stream.capture.withLock {
                $0.deviceName = device.name
                $0.description = device.description
            }
            // Kept at once, so that `stop()` releases it whatever happens next.
            try lifecycle.withLock { (l: inout Lifecycle) throws(SwiftRecordError) in
                guard !l.stopped else {
                    throw SwiftRecordError(.cancelled, operation: "pulse", message: "the source was stopped while starting")
                }
                l.stream = try client.withMainloop { (context) throws(SwiftRecordError) in try makeStream(context, device: device.name) }
                l.client = client
            }
            try waitUntilReady(device: device.name, client: client)
        } catch {
            stop()
            client.close()
            throw error
        }
    }

    /// Checks that a server answers, and whether the program (`app:`) plays now: a program
    /// not playing yet is no error, it is waited for (`captureDescription` says so).
    public func checkServer() throws(SwiftRecordError) {
        let client = try PulseClient(server: server, timeout: PulseAudioSource.startTimeout)
        defer { client.close() }
        guard let application = requestedApplication else { return }
        if let input = try client.sinkInputs().first(where: { $0.matches(application) }) {
            stream.capture.withLock { $0.programName = input.application ?? input.binary }
        } else {
            // A process id names no program yet: its command name does.
            let command = Int32(application).flatMap { _ in
                try? String(contentsOfFile: "/proc/\(application)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            stream.capture.withLock { s in
                s.description = "the sound of '\(application)' alone (not playing yet: silence until it does)"
                s.programName = command.flatMap { $0.isEmpty ? nil : $0 }
            }
        }
    }

    /// Connects once to find the device to record (the default sink's monitor when none
    /// was named) and forgets the connection: afterwards `captureDescription` names the
    /// device, and a missing device or server is an error before anything is recorded.
    /// `start()` resolves the device again (the default may have changed since).
    public func checkDevice() throws(SwiftRecordError) {
        let client = try PulseClient(server: server, timeout: PulseAudioSource.startTimeout)
        defer { client.close() }
        let device = try resolveDevice(client)
        stream.capture.withLock {
            $0.deviceName = device.name
            $0.description = device.description
        }
    }

    public func nextChunk() throws -> CapturedAudio? {
        guard lifecycle.withLock({ $0.started }) else {
            throw SwiftRecordError(.invalidState, operation: "pulse", message: "nextChunk() before start()")
        }
        return stream.capture.wait { (s: inout StreamContext.State) -> CapturedAudio?? in
            if s.interrupted { return .some(nil) }
            if !s.queue.isEmpty {
                let chunk = s.queue.removeFirst()
                s.queuedFrames -= chunk.samples.frameCount
                return .some(chunk)
            }
            return s.ended ? .some(nil) : nil
        } ?? nil
    }

    public func interrupt() {
        stream.capture.withLockNotifying { $0.interrupted = true }
    }

    /// Disconnects the stream and closes the connection, once; a waiting `nextChunk()`
    /// returns nil.
    public func stop() {
        stream.capture.withLockNotifying {
            $0.stopping = true
            $0.interrupted = true
        }
        lifecycle.withLock { (l: inout Lifecycle) in
            l.stopped = true
            if let client = l.client {
                if let created = l.stream { PulseAudioSource.release(created, on: client) }
                client.close()
            }
            (l.client, l.stream) = (nil, nil)
        }
    }
}

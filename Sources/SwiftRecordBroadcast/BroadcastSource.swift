import Dispatch
import SwiftRecord
import SwiftRecordBroadcastWire

/// Pictures another process sends (a broadcast sender: `BroadcastSampleHandler` or the C
/// API) as a live capture source: `swift-record --source broadcast:NAME`.
///
/// Opening it listens at NAME's endpoint and waits for a sender's hello (its size is the
/// source's). Each picture arrives in a buffer of the shared ring and is handed to the
/// encoder as it is, wrapped, not copied; the buffer goes back to the sender when the
/// encoder is done with it. A picture's capture time is the sender's presentation time plus
/// `Configuration.delay` (a jitter allowance), so the session's grid takes every frame of a
/// sender that keeps its rate, and the sound, stamped the same way, stays in sync.
///
/// When the sender finishes, the source ends; when it dies, the recording goes on with the
/// last picture unless `endsWhenSenderDies`.
///
/// The host side of ReplayKit's broadcast upload extension.
public final class BroadcastSource: CaptureSource {
    public static let name = "broadcast"
    public let identifier = BroadcastSource.name
    public let nativeSize: VideoSize
    public let pixelFormat = PixelFormat.yuv420p
    public let nativeFrameRate: Rational?
    public let isLive = true
    let host: BroadcastHost
    private let configuration: Configuration
    private let interval: Int64
    private let sender: String

    private struct Delivery {
        var last: PixelBuffer?
        var count = 0
    }
    private let delivery = Locked(Delivery())
    private let pauseHandler = Locked<(@Sendable (Bool) -> Void)?>(nil)

    /// Settings of a broadcast source.
    public struct Configuration: CaptureSourceConfiguration {
        public static let sourceName = BroadcastSource.name
        /// The endpoint's name (`broadcast:NAME`).
        public var name: String
        /// How long opening waits for a sender.
        public var senderTimeout: MediaTime
        /// Added to every presentation time: pictures and sound that arrive up to this late
        /// still land on their own tick.
        public var delay: MediaTime
        /// End the recording when the sender goes away without finishing (killed, crashed),
        /// rather than going on with its last picture: the recording then fails with an error
        /// saying so, what was recorded kept (`swift-record --on-sender-exit stop`).
        public var endsWhenSenderDies: Bool
        /// Interrupted by a stop during start-up (the command's Ctrl-C): the wait for a sender ends.
        package var startStop: WakeUp?

        public init(name: String, senderTimeout: MediaTime = MediaTime(seconds: 60), delay: MediaTime = MediaTime(value: 1, timescale: 10),
                    endsWhenSenderDies: Bool = false) {
            (self.name, self.senderTimeout, self.delay, self.endsWhenSenderDies) = (name, senderTimeout, delay, endsWhenSenderDies)
        }
    }

    /// Listens at the configuration's name and waits for a sender; throws naming the name
    /// and the cause when it is taken, unusable, or no sender comes in time.
    public init(configuration: Configuration) throws(SwiftRecordError) {
        let host: BroadcastHost
        do {
            host = try BroadcastHost(name: configuration.name)
        } catch {
            throw SwiftRecordError(.invalidArgument, operation: "broadcast", message: error.message)
        }
        let deadline = MonotonicClock.nanoseconds() + configuration.senderTimeout.convertScale(1_000_000_000).value
        guard let hello = host.waitForSender(untilNanoseconds: deadline, stop: configuration.startStop) else {
            host.stop()
            if configuration.startStop?.isInterrupted == true {
                throw SwiftRecordError(.cancelled, operation: "broadcast", message: "stopped while waiting for a sender on '\(configuration.name)'")
            }
            throw SwiftRecordError(.io, operation: "broadcast",
                                   message: "no sender connected to '\(configuration.name)' (\(host.endpointPath)) within \(Int(configuration.senderTimeout.seconds)) s")
        }
        self.host = host
        self.configuration = configuration
        nativeSize = VideoSize(width: hello.width, height: hello.height)
        nativeFrameRate = Rational(Int32(clamping: hello.frameRateNumerator), Int32(clamping: hello.frameRateDenominator))
        interval = Int64(1_000_000_000) * Int64(hello.frameRateDenominator) / Int64(max(1, hello.frameRateNumerator))
        sender = "'\(hello.name)' (pid \(hello.pid))"
        BroadcastHosts.shared.withLock { $0[configuration.name] = host }
        // A pause applies half a frame after its last picture's tick, a resume half a frame
        // before its first picture's: the grid goes on where it stopped, the first picture
        // after the pause on the centre of the next tick. In order, on a queue of their own.
        let (handler, queue) = (pauseHandler, DispatchQueue(label: "swift-record.broadcast.pause"))
        let (delay, half) = (configuration.delay.convertScale(1_000_000_000).value, interval / 2)
        host.pauseChanged.withLock {
            $0 = { paused, time in
                let wait = max(0, time + delay + (paused ? half : -half) - MonotonicClock.nanoseconds())
                queue.asyncAfter(deadline: .now() + .nanoseconds(Int(wait))) { handler.withLock { $0 }?(paused) }
            }
        }
    }

    /// Follows the sender's `broadcastPaused()` and `broadcastResumed()`: `handler` is
    /// called with true when it pauses and false when it resumes, each once the pictures
    /// sent before are due (`Configuration.delay` after the sender said so). Pause and resume
    /// the recording there (`CaptureSession.pause()`, `resume()`; `swift-record` does), and the
    /// file continues without a gap; without a handler, the sender's last picture holds.
    public func onSenderPause(_ handler: @escaping @Sendable (Bool) -> Void) {
        pauseHandler.withLock { $0 = handler }
    }

    /// Pictures wait in the ring, each with its time, until taken: a capture thread that
    /// wakes up to this late still puts each on its own tick (the ring holds them meanwhile).
    public var arrivalAllowance: Duration { BroadcastSource.arrivalAllowance }
    static let arrivalAllowance = Duration.milliseconds(500)

    public var captureDescription: String? {
        "the broadcast '\(configuration.name)' of \(sender), \(nativeSize.width)x\(nativeSize.height)"
    }

    /// Hands the sender its picture ring: the sender's `broadcastStarted` returns now, as
    /// the recording starts, so its first frame is the recording's first.
    public func start() throws {
        do {
            try host.welcome()
        } catch {
            throw SwiftRecordError(.io, operation: "broadcast", message: error.message)
        }
    }

    public func stop() {
        host.stop()
        delivery.withLock { $0.last = nil }
        _ = BroadcastHosts.shared.withLock { $0.removeValue(forKey: configuration.name) }
    }

    /// Messages refused, connections refused, frames received.
    package var counts: BroadcastHost.Counts { host.counts }

    public func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        let delay = configuration.delay.convertScale(1_000_000_000).value
        // The oldest picture, once due; waiting up to a frame for one to come or fall due.
        let start = MonotonicClock.nanoseconds()
        // Before the first picture, up to 5 s for it (it comes right after the welcome).
        let patience = delivery.withLock { $0.count == 0 } ? 5_000_000_000 : interval
        let deadline = host.state.withLock { s in
            min(start + patience, max(start, s.pictures.first.map { $0.time + delay } ?? start + patience))
        }
        let taken = host.state.wait(untilNanoseconds: deadline) { s -> Taken? in
            let now = MonotonicClock.nanoseconds()
            if let first = s.pictures.first, first.time + delay <= now || first.time + delay > now + 10_000_000_000 {
                s.pictures.removeFirst()
                return .picture(first.index, first.time + delay, s.ring)
            }
            guard s.pictures.isEmpty else { return now >= deadline ? Taken.none : nil }
            if s.ended, s.finished || s.stopped { return .end }
            if s.ended, configuration.endsWhenSenderDies { return .died }
            // A paused or dead sender sends nothing more: its last picture holds, unchanged.
            // (While it sends, a tick without a picture due is a repeat, never a picture
            // stamped now that a late frame would then fall behind.)
            if s.paused || s.ended { return .still }
            return now >= deadline ? Taken.none : nil
        } ?? Taken.none
        switch taken {
        case .end:
            return nil
        case .died:
            throw SwiftRecordError(.io, operation: "broadcast",
                                   message: "the sender \(sender) went away without finishing (killed or crashed); the recording ends at its last picture")
        case .none:
            // No picture due yet: asked again until the tick closes (`arrivalAllowance` after
            // its end), then a repeat of the last one.
            throw SwiftRecordError(.notReady, operation: "broadcast", message: "no picture from the sender due yet")
        case .still:
            guard let (last, n) = delivery.withLock({ d in d.last.map { ($0, d.count) } }) else {
                throw SwiftRecordError(.notReady, operation: "broadcast", message: "no picture from the sender yet")
            }
            return CapturedFrame(pixelBuffer: last, captureTime: MonotonicClock().now(), index: n, isUnchanged: true)
        case .picture(let index, let time, let ring):
            guard let ring, let base = ring.base(index) else { return nil }
            let host = self.host
            let layout = ring.layout
            let buffer = try PixelBuffer(wrappingPlanes: base, length: layout.size, width: nativeSize.width, height: nativeSize.height,
                                         pixelFormat: .yuv420p, planeOffsets: layout.offsets, bytesPerRow: layout.strides) {
                withExtendedLifetime(ring) { host.release(index) }
            }
            let n = delivery.withLock { d in
                d.last = buffer
                defer { d.count += 1 }
                return d.count
            }
            return CapturedFrame(pixelBuffer: buffer, captureTime: MediaTime(value: time, timescale: 1_000_000_000), index: n)
        }
    }

    private enum Taken {
        case picture(Int, Int64, SharedPictureRing?)
        case end
        /// The sender went away without finishing, and the source ends with it.
        case died
        case still
        case none
    }
}

/// The hosts open in this process by name, so that the sound sources of a broadcast find
/// the connection its picture source opened.
enum BroadcastHosts {
    static let shared = Locked<[String: BroadcastHost]>([:])
}

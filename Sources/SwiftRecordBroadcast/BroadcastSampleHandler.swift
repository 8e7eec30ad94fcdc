import Glibc
import SwiftRecord

/// ReplayKit's sample buffer types (`RPSampleBufferType`).
public enum BroadcastSampleType: Sendable {
    case video, audioApp, audioMic
}

/// The sending end of a broadcast, shaped like ReplayKit's `RPBroadcastSampleHandler`: a
/// program that should be recorded without linking an encoder hands its pictures and sound
/// to a recorder listening on a name (`swift-record --source broadcast:NAME`).
///
/// `broadcastStarted(withSetupInfo:)` connects and says hello; the recorder answers with a
/// ring of shared picture buffers it allocated. `nextPixelBuffer()` lends a free one (nil
/// when the recorder still holds them all: that frame is dropped and counted, the render
/// loop never waits); draw into it and pass it to `processSampleBuffer(_:with:)` with its
/// presentation time on `CLOCK_MONOTONIC` (`MonotonicClock`). Only the buffer's index
/// crosses the socket. Sound goes as 16-bit interleaved PCM chunks typed app or microphone.
///
/// Every call fails at once with `BroadcastError` once the recorder has gone; the sender's
/// process is unharmed (no `SIGPIPE`).
public final class BroadcastSampleHandler: Sendable {
    /// What a sender says about its stream; the recorder sizes its ring from it.
    public struct Stream: Sendable {
        public var width: Int, height: Int
        public var frameRate: Rational
        public var sampleRate: Int, channels: Int
        public init(width: Int, height: Int, frameRate: Rational = Rational(30)!, sampleRate: Int = 48_000, channels: Int = 2) {
            (self.width, self.height, self.frameRate, self.sampleRate, self.channels) = (width, height, frameRate, sampleRate, channels)
        }
    }

    /// Frames dropped because no buffer was free, and frames sent.
    public struct Counts: Sendable, Equatable {
        public var framesSent = 0
        public var framesDropped = 0
        public var soundChunksSent = 0
    }

    private enum Slot { case free, lent, atHost }
    private struct State {
        var socket: BroadcastSocket?
        var ring: SharedPictureRing?
        var slots: [Slot] = []
        var failure: String?
        var counts = Counts()
    }
    private let state = Locked(State())
    /// The recorder's name.
    public let name: String
    public let stream: Stream

    public init(name: String, stream: Stream) {
        self.name = name
        self.stream = stream
    }

    /// Connects to the recorder and receives its picture ring, which the recorder sends as
    /// its recording starts (within 30 s; a refusal comes at once). `setupInfo` is
    /// ReplayKit's; the key "name" names this sender in the recorder's messages.
    public func broadcastStarted(withSetupInfo setupInfo: [String: String]? = nil) throws(BroadcastError) {
        do throws(BroadcastProtocolError) {
            let socket = try BroadcastSocket.connect(to: try BroadcastEndpoint.path(for: name))
            let hello = BroadcastMessage.Hello(pid: getpid(), width: stream.width, height: stream.height,
                                               frameRateNumerator: Int(stream.frameRate.numerator), frameRateDenominator: Int(stream.frameRate.denominator),
                                               sampleRate: stream.sampleRate, channels: stream.channels,
                                               name: setupInfo?["name"] ?? "pid \(getpid())")
            // A recorder that refuses at once (the name taken, another user) may have closed
            // before the hello went out: its refusal is still there to read.
            let helloFailure: BroadcastProtocolError?
            do { try socket.send(.hello(hello)); helloFailure = nil } catch { helloFailure = error }
            if helloFailure != nil, case .datagram(let bytes, let fds, _)? = try? socket.receive(untilNanoseconds: MonotonicClock.nanoseconds()),
               case .refused(let reason)? = try? BroadcastMessage.parse(bytes) {
                for fd in fds { close(fd) }
                throw BroadcastProtocolError("the recorder refused: \(reason)")
            } else if let helloFailure {
                throw helloFailure
            }
            let answer = try socket.receive(untilNanoseconds: MonotonicClock.nanoseconds() + 30_000_000_000)
            if case .closed = answer { throw BroadcastProtocolError("the recorder has gone before it started recording") }
            guard case .datagram(let bytes, let fds, _) = answer else {
                throw BroadcastProtocolError("the recorder did not start recording within 30 s of the hello")
            }
            let message: BroadcastMessage
            do { message = try BroadcastMessage.parse(bytes) } catch { for fd in fds { close(fd) }; throw error }
            switch message {
            case .welcome(let layout):
                let expected = SharedPictureRing.layout(width: stream.width, height: stream.height, count: layout.count)
                guard layout == expected else {
                    for fd in fds { close(fd) }
                    throw BroadcastProtocolError("the recorder's ring layout \(layout) does not fit a \(stream.width)x\(stream.height) picture")
                }
                let ring = try SharedPictureRing.map(layout, fds: fds)
                state.withLock { s in
                    s.socket = socket
                    s.ring = ring
                    s.slots = Array(repeating: .free, count: layout.count)
                }
            case .refused(let reason):
                for fd in fds { close(fd) }
                throw BroadcastProtocolError("the recorder refused: \(reason)")
            default:
                for fd in fds { close(fd) }
                throw BroadcastProtocolError("the recorder answered the hello with something else than its ring")
            }
        } catch {
            throw BroadcastError(message: error.message)
        }
    }

    /// A free shared picture buffer to draw into, or nil when the recorder holds them all
    /// (the frame is counted as dropped).
    public func nextPixelBuffer() throws(BroadcastError) -> PixelBuffer? {
        guard let (index, ring) = try lendSlot(), let base = ring.base(index) else { return nil }
        let layout = ring.layout
        let state = self.state
        do {
            return try PixelBuffer(wrappingPlanes: base, length: layout.size, width: stream.width, height: stream.height, pixelFormat: .yuv420p,
                                   planeOffsets: layout.offsets, bytesPerRow: layout.strides) {
                withExtendedLifetime(ring) {
                    state.withLock { s in if s.slots.indices.contains(index), s.slots[index] == .lent { s.slots[index] = .free } }
                }
            }
        } catch {
            throw BroadcastError(message: error.message)
        }
    }

    /// Lends a free buffer: its index and the ring (for the C API, which hands out the planes).
    package func lendSlot() throws(BroadcastError) -> (Int, SharedPictureRing)? {
        try drain()
        return state.withLock { s -> (Int, SharedPictureRing)? in
            guard let ring = s.ring, let i = s.slots.firstIndex(where: { $0 == .free }) else {
                s.counts.framesDropped += 1
                return nil
            }
            s.slots[i] = .lent
            return (i, ring)
        }
    }

    /// Sends a picture (`sampleBuffer.pixelBuffer` must come from `nextPixelBuffer()`).
    public func processSampleBuffer(_ sampleBuffer: SampleBuffer, with type: BroadcastSampleType) throws(BroadcastError) {
        guard type == .video else {
            throw BroadcastError(message: "a picture sent as \(type); pictures are .video")
        }
        let identity = sampleBuffer.pixelBuffer.storageIdentity
        let index = state.withLock { s in s.ring.flatMap { ring in s.slots.indices.first { UInt(bitPattern: ring.base($0)) == identity } } }
        guard let index else { throw BroadcastError(message: "the picture is not a buffer from nextPixelBuffer()") }
        try sendSlot(index, time: sampleBuffer.presentationTimeStamp.convertScale(1_000_000_000).value)
    }

    /// Sends lent buffer `index`, presented at `time` (nanoseconds, `CLOCK_MONOTONIC`).
    package func sendSlot(_ index: Int, time: Int64) throws(BroadcastError) {
        try drain()
        let (socket, lent) = state.withLock { s -> (BroadcastSocket?, Bool) in
            guard s.slots.indices.contains(index), s.slots[index] == .lent else { return (s.socket, false) }
            s.slots[index] = .atHost
            s.counts.framesSent += 1
            return (s.socket, true)
        }
        guard lent else { throw BroadcastError(message: "buffer \(index) is not lent to the sender (sent already, or never taken)") }
        try send(socket, .frame(index: index, time: time))
    }

    /// Sends interleaved 16-bit sound of the stream's rate and channels, presented at `time`
    /// (`CLOCK_MONOTONIC`), typed `.audioApp` or `.audioMic`.
    public func processAudio(_ samples: [Int16], presentationTime time: MediaTime, with type: BroadcastSampleType) throws(BroadcastError) {
        guard type != .video else { throw BroadcastError(message: "sound sent as .video; sound is .audioApp or .audioMic") }
        try drain()
        let socket = state.withLock { s in
            s.counts.soundChunksSent += 1
            return s.socket
        }
        var offset = 0
        let step = BroadcastMessage.maximumSoundFrames * stream.channels
        while offset < samples.count {
            let part = samples[offset..<min(samples.count, offset + step)]
            let frameTime = time.convertScale(1_000_000_000).value + Int64(offset / stream.channels) * 1_000_000_000 / Int64(stream.sampleRate)
            let bytes = part.withUnsafeBytes { Array($0) }
            try send(socket, .sound(.init(kind: type == .audioApp ? .app : .microphone, time: frameTime, channels: stream.channels, samples: bytes)))
            offset += step
        }
    }

    public func broadcastPaused() throws(BroadcastError) { try send(state.withLock { $0.socket }, .paused) }
    public func broadcastResumed() throws(BroadcastError) { try send(state.withLock { $0.socket }, .resumed) }

    /// Says the broadcast is over (the recorder finishes its file) and closes the connection.
    public func broadcastFinished() throws(BroadcastError) {
        let socket = state.withLock { $0.socket }
        defer { state.withLock { s in s.socket = nil; s.ring = nil } }
        // The releases waiting are read first (the recorder's end reads on past a reset anyway).
        try? drain()
        try send(socket, .finished)
    }

    public var counts: Counts { state.withLock { $0.counts } }

    private func send(_ socket: BroadcastSocket?, _ message: BroadcastMessage) throws(BroadcastError) {
        if let failure = state.withLock({ $0.failure }) { throw BroadcastError(message: failure) }
        guard let socket else { throw BroadcastError(message: "not connected: call broadcastStarted(withSetupInfo:) first") }
        do {
            try socket.send(message)
        } catch {
            let failure = "the recorder has gone (\(error.message))"
            state.withLock { $0.failure = failure }
            throw BroadcastError(message: failure)
        }
    }

    /// Takes the recorder's messages waiting (buffers handed back), without waiting.
    private func drain() throws(BroadcastError) {
        let (socket, failure) = state.withLock { ($0.socket, $0.failure) }
        if let failure { throw BroadcastError(message: failure) }
        guard let socket else { throw BroadcastError(message: "not connected: call broadcastStarted(withSetupInfo:) first") }
        while true {
            let received: BroadcastSocket.Received
            do { received = try socket.receive(untilNanoseconds: 0) } catch { received = .closed }
            switch received {
            case .timedOut: return
            case .closed:
                state.withLock { $0.failure = "the recorder has gone" }
                throw BroadcastError(message: "the recorder has gone")
            case .datagram(let bytes, let fds, _):
                for fd in fds { close(fd) }
                if case .release(let index)? = try? BroadcastMessage.parse(bytes) {
                    state.withLock { s in if s.slots.indices.contains(index), s.slots[index] == .atHost { s.slots[index] = .free } }
                } else if case .refused(let reason)? = try? BroadcastMessage.parse(bytes) {
                    state.withLock { $0.failure = "the recorder refused: \(reason)" }
                    throw BroadcastError(message: "the recorder refused: \(reason)")
                }
            }
        }
    }
}

/// Why a broadcast call failed.
public struct BroadcastError: Error, Sendable, CustomStringConvertible {
    public let message: String
    package init(message: String) { self.message = message }
    public var description: String { message }
}

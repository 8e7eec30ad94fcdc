import Glibc
import SwiftRecordBase

/// The sending end of a broadcast without a picture type of its own: connects and says
/// hello, maps the host's ring, lends free buffers by index, sends pictures, sound, pauses
/// and the finish, and reads the buffers handed back. Needs neither FFmpeg nor Foundation,
/// so the C API's library (`libSwiftRecordSender.so`) adds little to a sender's memory;
/// `BroadcastSampleHandler` is its Swift face (SwiftRecordBroadcast adds SwiftRecord's pixel
/// buffers and times).
package final class BroadcastSender: Sendable {
    package typealias Stream = BroadcastSampleHandler.Stream
    package typealias Counts = BroadcastSampleHandler.Counts

    private enum Slot { case free, lent, atHost }
    private struct State {
        var socket: BroadcastSocket?
        var ring: SharedPictureRing?
        var slots: [Slot] = []
        var failure: String?
        var counts = Counts()
    }
    private let state = Locked(State())
    package let name: String
    package let stream: Stream

    package init(name: String, stream: Stream) {
        self.name = name
        self.stream = stream
    }

    /// Connects, says hello (`senderName` names this sender in the host's messages) and waits
    /// (up to 30 s) for the host's ring, which it sends as its recording starts.
    package func start(senderName: String) throws(BroadcastError) {
        do throws(BroadcastProtocolError) {
            let socket = try BroadcastSocket.connect(to: try BroadcastEndpoint.path(for: name))
            let hello = BroadcastMessage.Hello(pid: getpid(), width: stream.width, height: stream.height,
                                               frameRateNumerator: stream.frameRateNumerator, frameRateDenominator: stream.frameRateDenominator,
                                               sampleRate: stream.sampleRate, channels: stream.channels, name: senderName)
            // A host that refuses at once (the name taken, another user) may have closed
            // before the hello went out: its refusal is still there to read.
            let helloFailure: BroadcastProtocolError?
            do { try socket.send(.hello(hello)); helloFailure = nil } catch { helloFailure = error }
            if helloFailure != nil, case .datagram(let bytes, let fds, _)? = try? socket.receive(untilNanoseconds: monotonicNanoseconds()),
               case .refused(let reason)? = try? BroadcastMessage.parse(bytes) {
                for fd in fds { close(fd) }
                throw BroadcastProtocolError("the recorder refused: \(reason)")
            } else if let helloFailure {
                throw helloFailure
            }
            let answer = try socket.receive(untilNanoseconds: monotonicNanoseconds() + 30_000_000_000)
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

    /// Lends a free buffer: its index and the ring; nil when the host holds them all (the
    /// frame is counted as dropped).
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

    /// Takes back lent buffer `index` unsent.
    package func returnSlot(_ index: Int) {
        state.withLock { s in if s.slots.indices.contains(index), s.slots[index] == .lent { s.slots[index] = .free } }
    }

    /// The index of the buffer whose bytes start at `address`, if one of the ring's.
    package func slot(at address: UInt) -> Int? {
        state.withLock { s in s.ring.flatMap { ring in s.slots.indices.first { UInt(bitPattern: ring.base($0)) == address } } }
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
    /// (nanoseconds, `CLOCK_MONOTONIC`), in chunks the protocol allows.
    package func sendSound(_ samples: UnsafeBufferPointer<Int16>, time: Int64, kind: BroadcastMessage.SoundKind) throws(BroadcastError) {
        try drain()
        let socket = state.withLock { s in
            s.counts.soundChunksSent += 1
            return s.socket
        }
        var offset = 0
        let channels = max(1, stream.channels)
        let step = BroadcastMessage.maximumSoundFrames * channels
        while offset < samples.count {
            let part = UnsafeBufferPointer(rebasing: samples[offset..<min(samples.count, offset + step)])
            let frameTime = time + Int64(offset / channels) * 1_000_000_000 / Int64(max(1, stream.sampleRate))
            try send(socket, .sound(.init(kind: kind, time: frameTime, channels: stream.channels, samples: Array(UnsafeRawBufferPointer(part)))))
            offset += step
        }
    }

    package func pause() throws(BroadcastError) { try send(state.withLock { $0.socket }, .paused) }
    package func resume() throws(BroadcastError) { try send(state.withLock { $0.socket }, .resumed) }

    /// Says the broadcast is over (the host finishes its file) and closes the connection.
    package func finish() throws(BroadcastError) {
        let socket = state.withLock { $0.socket }
        defer { state.withLock { s in s.socket = nil; s.ring = nil } }
        // The releases waiting are read first (the host's end reads on past a reset anyway).
        try? drain()
        try send(socket, .finished)
    }

    package var counts: Counts { state.withLock { $0.counts } }

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

    /// Takes the host's messages waiting (buffers handed back), without waiting.
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

import Logging
import Foundation
import Glibc
import SwiftRecord
import SwiftRecordBroadcastWire

/// The recorder's end of a broadcast called NAME: listens, lets in one sender of the same
/// user, allocates the picture ring its hello asks for, and queues what arrives (pictures by
/// buffer index, sound chunks by type) for `BroadcastSource` and `BroadcastAudioSource`.
/// Every message is parsed and checked against the connection's state; one that is wrong is
/// refused (counted, logged, its descriptors closed) and the recording goes on.
package final class BroadcastHost: Sendable {
    package let name: String
    private let listener: BroadcastListener
    /// Buffers in the ring; the sender renders into those it holds.
    /// The ring's buffers: as many as fit in `ringBytes` (so a capture thread that wakes up to
    /// `BroadcastSource.arrivalAllowance` late finds the pictures it missed waiting), from 6
    /// (1080p) to the protocol's 16 (small pictures).
    package static func ringCount(bufferSize: Int) -> Int {
        min(BroadcastMessage.maximumBuffers, max(6, ringBytes / max(1, bufferSize)))
    }
    static let ringBytes = 20 << 20
    /// Sound queued per type beyond this many chunks drops the oldest (a host not reading it).
    static let maximumQueuedSound = 400
    /// A resume at the end of a paused sender is said to be this long before it: it applies at once.
    static let endedWhilePaused: Int64 = 10_000_000_000

    package struct Counts: Sendable, Equatable {
        package var framesReceived = 0
        package var refusedMessages = 0
        package var refusedConnections = 0
        package var soundChunksDropped = 0
    }

    struct State {
        var hello: BroadcastMessage.Hello?
        var ring: SharedPictureRing?
        var connection: BroadcastSocket?
        /// Buffers the host holds (queued, or wrapped in a picture an encoder may read).
        var atHost: [Bool] = []
        var pictures: [(index: Int, time: Int64)] = []
        /// The last frame's time: each must be later.
        var lastFrameTime: Int64?
        var sound: [BroadcastMessage.SoundKind: [BroadcastMessage.Sound]] = [:]
        var paused = false
        /// Resumed, and its first picture not yet here (the resume applies with it).
        var resumePending = false
        /// The sender said it finished.
        var finished = false
        /// The connection ended (finished, closed or killed).
        var ended = false
        var stopped = false
        var counts = Counts()
        var lastRefusal: String?
    }
    let state = Locked(State())
    /// Told of each pause (true) and resume (false) of the sender's, with the time of the
    /// picture it follows (a pause: the last before it) or comes with (a resume: the first
    /// after it); a sender that ends while paused resumes, at the time it ended.
    package let pauseChanged = Locked<(@Sendable (Bool, Int64) -> Void)?>(nil)

    /// Listens at the name's endpoint and starts serving it on a thread of its own.
    package init(name: String) throws(BroadcastProtocolError) {
        self.name = name
        listener = try BroadcastListener(name: name)
        let thread = Thread { [self] in serve() }
        thread.name = "swift-record.broadcast"
        thread.start()
    }

    /// Stops serving: the connection is closed (the sender's next call fails), the socket removed.
    package func stop() {
        let connection = state.withLockNotifying { s in
            s.stopped = true
            return s.connection
        }
        // The sender sees the end at once, not when the serving thread next wakes; so does
        // a sender looking for the name.
        if let connection { shutdown(connection.fd, Int32(SHUT_RDWR)) }
        listener.removeSocket()
    }

    package var counts: Counts { state.withLock { $0.counts } }
    package var endpointPath: String { listener.path }

    /// Waits until `deadline` for a sender's hello; nil at the deadline, or soon after `stop` is interrupted.
    package func waitForSender(untilNanoseconds deadline: Int64, stop: WakeUp? = nil) -> BroadcastMessage.Hello? {
        while stop?.isInterrupted != true {
            let slice = min(deadline, MonotonicClock.nanoseconds() + 100_000_000)
            let hello = state.wait(untilNanoseconds: slice) { s -> BroadcastMessage.Hello?? in
                if let h = s.hello { return .some(h) }
                return s.stopped || MonotonicClock.nanoseconds() >= slice ? .some(nil) : nil
            } ?? nil
            if let hello { return hello }
            if MonotonicClock.nanoseconds() >= deadline || state.withLock({ $0.stopped }) { return nil }
        }
        return nil
    }

    private func serve() {
        while true {
            let (stopped, connection) = state.withLock { ($0.stopped, $0.connection) }
            if stopped { break }
            var fds = [pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)]
            if let connection { fds.append(pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)) }
            let r = poll(&fds, nfds_t(fds.count), 100)
            if r <= 0 { continue }
            if fds[0].revents != 0, let peer = listener.accept() { admit(peer) }
            if fds.count > 1, fds[1].revents != 0, let connection { read(connection) }
        }
        state.withLockNotifying { s in
            s.connection = nil
            s.ended = true
        }
    }

    /// A new connection: refused unless it is the same user's and the name is free.
    private func admit(_ peer: BroadcastSocket) {
        guard let credentials = peer.peerCredentials(), credentials.uid == getuid() else {
            refuseConnection(peer, "only user \(getuid()) may send to this recorder")
            return
        }
        let taken = state.withLock { s in s.connection != nil || s.hello != nil ? s.hello?.pid ?? 0 : nil }
        if let pid = taken {
            refuseConnection(peer, "the broadcast name '\(name)' is taken by the sender with pid \(pid)")
            return
        }
        // The hello within 2 s, or the connection is closed.
        guard case .datagram(let bytes, let fds, let truncated)? = try? peer.receive(untilNanoseconds: MonotonicClock.nanoseconds() + 2_000_000_000) else {
            refuseConnection(peer, "no hello within 2 seconds")
            return
        }
        for fd in fds { close(fd) }
        let hello: BroadcastMessage.Hello
        do throws(BroadcastProtocolError) {
            guard !truncated, fds.isEmpty else { throw BroadcastProtocolError("a hello carries no descriptors and fits a message") }
            guard case .hello(let h) = try BroadcastMessage.parse(bytes) else { throw BroadcastProtocolError("the first message must be a hello") }
            hello = h
        } catch {
            refuseConnection(peer, "refused: \(error.message)")
            return
        }
        state.withLockNotifying { s in
            s.hello = hello
            s.connection = peer
        }
        Log.capture.info("broadcast '\(name)': sender '\(hello.name)' (pid \(hello.pid)) connected, \(hello.width)x\(hello.height)")
    }

    /// Gives the sender its picture ring, which lets it start: called as the recording
    /// starts, so that no frame is sent before the session can take it.
    package func welcome() throws(BroadcastProtocolError) {
        guard let (hello, connection) = state.withLock({ s in s.hello.flatMap { h in s.connection.map { (h, $0) } } }) else {
            throw BroadcastProtocolError("the sender of '\(name)' has gone before the recording started")
        }
        guard state.withLock({ $0.ring == nil }) else { return }
        let size = SharedPictureRing.layout(width: hello.width, height: hello.height, count: 1).size
        let layout = SharedPictureRing.layout(width: hello.width, height: hello.height, count: BroadcastHost.ringCount(bufferSize: size))
        let ring = try SharedPictureRing.allocate(layout)
        state.withLock { s in
            s.ring = ring
            s.atHost = Array(repeating: false, count: layout.count)
        }
        try connection.send(.welcome(layout), fds: ring.fds)
    }

    private func refuseConnection(_ peer: BroadcastSocket, _ reason: String) {
        try? peer.send(.refused(reason: reason))
        state.withLock { $0.counts.refusedConnections += 1; $0.lastRefusal = reason }
        Log.capture.warning("broadcast '\(name)': connection refused: \(reason)")
    }

    private func read(_ connection: BroadcastSocket) {
        let received: BroadcastSocket.Received
        do {
            received = try connection.receive(untilNanoseconds: MonotonicClock.nanoseconds())
        } catch {
            received = .closed
        }
        switch received {
        case .timedOut: return
        case .closed:
            let pausedAtEnd = state.withLockNotifying { s in
                s.connection = nil
                s.ended = true
                defer { s.resumePending = false }
                return s.paused || s.resumePending
            }
            // A recording paused by its sender would wait for ever for the end it cannot see.
            if pausedAtEnd { pauseChanged.withLock { $0 }?(false, MonotonicClock.nanoseconds() - BroadcastHost.endedWhilePaused) }
        case .datagram(let bytes, let fds, let truncated):
            // The host takes no descriptors from a sender: any that came are closed unread.
            for fd in fds { close(fd) }
            do throws(BroadcastProtocolError) {
                guard !truncated else { throw BroadcastProtocolError("a message larger than \(BroadcastMessage.maximumMessageSize) bytes") }
                guard fds.isEmpty else { throw BroadcastProtocolError("\(fds.count) descriptors sent to the host; it takes none") }
                try accept(try BroadcastMessage.parse(bytes))
            } catch {
                state.withLock { $0.counts.refusedMessages += 1; $0.lastRefusal = error.message }
                Log.capture.warning("broadcast '\(name)': message refused: \(error.message)")
            }
        }
    }

    /// A parsed message, checked against the connection's state.
    private func accept(_ message: BroadcastMessage) throws(BroadcastProtocolError) {
        var change: (paused: Bool, at: Int64)?
        defer { if let change { pauseChanged.withLock { $0 }?(change.paused, change.at) } }
        try state.withLockNotifying { (s: inout State) throws(BroadcastProtocolError) in
            guard let hello = s.hello, !s.finished else { throw BroadcastProtocolError("a message after the broadcast finished") }
            switch message {
            case .frame(let index, let time):
                guard s.atHost.indices.contains(index) else {
                    throw BroadcastProtocolError("buffer index \(index); the ring has \(s.atHost.count)")
                }
                guard !s.atHost[index] else { throw BroadcastProtocolError("buffer \(index) sent while the host still holds it") }
                if let last = s.lastFrameTime, time <= last {
                    throw BroadcastProtocolError("frame time \(time) ns does not follow the previous \(last) ns")
                }
                s.atHost[index] = true
                if s.resumePending {
                    s.resumePending = false
                    change = (false, time)
                }
                s.pictures.append((index, time))
                s.lastFrameTime = time
                s.counts.framesReceived += 1
            case .sound(let sound):
                guard sound.channels == hello.channels else {
                    throw BroadcastProtocolError("a sound chunk of \(sound.channels) channels; the hello said \(hello.channels)")
                }
                s.sound[sound.kind, default: []].append(sound)
                if let n = s.sound[sound.kind]?.count, n > BroadcastHost.maximumQueuedSound {
                    s.sound[sound.kind]?.removeFirst()
                    s.counts.soundChunksDropped += 1
                }
            case .paused:
                if !s.paused, !s.resumePending { change = (true, s.lastFrameTime ?? MonotonicClock.nanoseconds()) }
                s.paused = true
                s.resumePending = false
            case .resumed:
                s.resumePending = s.paused
                s.paused = false
            case .finished:
                s.finished = true
                s.ended = true
                if s.resumePending { change = (false, MonotonicClock.nanoseconds() - BroadcastHost.endedWhilePaused) }
            case .hello: throw BroadcastProtocolError("a second hello")
            case .welcome, .release, .refused: throw BroadcastProtocolError("a host's message sent by the sender")
            }
        }
    }

    /// Hands buffer `index` back to the sender (its picture is no longer read).
    func release(_ index: Int) {
        let connection = state.withLock { s -> BroadcastSocket? in
            guard s.atHost.indices.contains(index) else { return nil }
            s.atHost[index] = false
            return s.connection
        }
        try? connection?.send(.release(index: index))
    }
}

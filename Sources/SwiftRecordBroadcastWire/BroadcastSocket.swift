import CBroadcast
import Glibc
import SwiftRecordBase

/// One end of a broadcast connection (a `SOCK_SEQPACKET` Unix socket): whole messages
/// sent and received, descriptors beside them, every wait bounded. Owns its descriptor.
package final class BroadcastSocket: Sendable {
    package let fd: Int32
    /// Where datagrams land, reused: room for the largest message and one byte more (a
    /// fresh 150 kB array a message would be a mapping and unmapping each time). Held across
    /// the receive, which never blocks (poll said there is a datagram).
    private let scratch = Locked<[UInt8]>([])

    package init(adopting fd: Int32) { self.fd = fd }
    deinit { close(fd) }

    /// Connects to the host listening at `path`; throws naming the path and the cause.
    package static func connect(to path: String) throws(BroadcastProtocolError) -> BroadcastSocket {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BroadcastProtocolError("socket: \(String(cString: strerror(errno)))") }
        let s = BroadcastSocket(adopting: fd)
        var address = try BroadcastEndpoint.address(path)
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard r == 0 else {
            let e = errno
            throw BroadcastProtocolError(e == ENOENT || e == ECONNREFUSED
                ? "no host is listening at \(path) (start `swift-record --source broadcast:NAME` first)"
                : "connect to \(path): \(String(cString: strerror(e)))")
        }
        return s
    }

    /// Sends `message` with `fds` beside it. Throws at once when the peer is gone.
    package func send(_ message: BroadcastMessage, fds: [Int32] = []) throws(BroadcastProtocolError) {
        let bytes = message.encoded
        let n = bytes.withUnsafeBytes { b in fds.withUnsafeBufferPointer { f in
            srb_send(fd, b.baseAddress, b.count, f.baseAddress, Int32(f.count))
        } }
        guard n == bytes.count else {
            throw BroadcastProtocolError(n < 0 ? "send: \(String(cString: strerror(errno)))" : "send: short write")
        }
    }

    /// What one receive gave.
    package enum Received {
        /// A datagram (still to be parsed) and the descriptors that came with it, now owned by the caller.
        case datagram([UInt8], fds: [Int32], truncated: Bool)
        /// The peer closed its end.
        case closed
        /// Nothing before the deadline.
        case timedOut
    }

    /// Waits until `deadline` (nanoseconds on the monotonic clock; nil: forever) for one datagram.
    package func receive(untilNanoseconds deadline: Int64?) throws(BroadcastProtocolError) -> Received {
        // A peer that closed with our messages unread makes the kernel report ECONNRESET
        // once, before the messages it sent last (a sender's "finished"): read on past it.
        var resets = 0
        while true {
            if let r = try receiveOnce(untilNanoseconds: deadline) { return r }
            resets += 1
            if resets > 1 { return .closed }
        }
    }

    /// One receive; nil when the kernel reported a reset (and cleared it).
    private func receiveOnce(untilNanoseconds deadline: Int64?) throws(BroadcastProtocolError) -> Received? {
        while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let wait = deadline.map { Int32(clamping: max(0, ($0 - monotonicNanoseconds() + 999_999) / 1_000_000)) } ?? -1
            let r = poll(&p, 1, wait)
            if r < 0 {
                if errno == EINTR { continue }
                throw BroadcastProtocolError("poll: \(String(cString: strerror(errno)))")
            }
            if r == 0 { return .timedOut }
            break
        }
        var fds = (Int32(-1), Int32(-1), Int32(-1), Int32(-1), Int32(-1), Int32(-1), Int32(-1), Int32(-1),
                   Int32(-1), Int32(-1), Int32(-1), Int32(-1), Int32(-1), Int32(-1), Int32(-1), Int32(-1))
        var count: Int32 = 0, truncated: Int32 = 0, n = 0, failure: Int32 = 0
        let fd = self.fd
        let bytes = scratch.withLock { buffer -> [UInt8] in
            if buffer.count != BroadcastMessage.maximumMessageSize + 1 {
                buffer = [UInt8](repeating: 0, count: BroadcastMessage.maximumMessageSize + 1)
            }
            n = buffer.withUnsafeMutableBytes { b in
                withUnsafeMutableBytes(of: &fds) { f in
                    srb_receive(fd, b.baseAddress, b.count, f.baseAddress?.assumingMemoryBound(to: Int32.self), 16, &count, &truncated)
                }
            }
            failure = errno
            return Array(buffer.prefix(max(0, n)))
        }
        if n < 0 {
            if failure == ECONNRESET { return nil }
            throw BroadcastProtocolError("receive: \(String(cString: strerror(failure)))")
        }
        let received = withUnsafeBytes(of: fds) { Array($0.bindMemory(to: Int32.self).prefix(Int(count))) }
        if n == 0 && received.isEmpty { return .closed }
        // A datagram that filled the buffer was larger than any message may be.
        return .datagram(bytes, fds: received, truncated: truncated != 0 || n > BroadcastMessage.maximumMessageSize)
    }

    /// The connected peer's user and process id.
    package func peerCredentials() -> (uid: uid_t, pid: pid_t)? {
        var uid: uid_t = 0, pid: pid_t = 0
        return srb_peer_credentials(fd, &uid, &pid) == 0 ? (uid, pid) : nil
    }
}

/// Where a host called NAME listens: `$XDG_RUNTIME_DIR/swift-record/broadcast/NAME` (or
/// `/tmp/swift-record-UID/broadcast/NAME` without one), in folders of mode 0700 that the
/// user owns, the socket itself mode 0600.
package enum BroadcastEndpoint {
    /// 1–64 of A–Z a–z 0–9 . _ -, not starting with a dot.
    package static func checkName(_ name: String) throws(BroadcastProtocolError) {
        let ok = !name.isEmpty && name.utf8.count <= 64 && !name.hasPrefix(".")
            && name.utf8.allSatisfy { $0 == 0x2e || $0 == 0x5f || $0 == 0x2d || (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) }
        guard ok else {
            throw BroadcastProtocolError("broadcast name '\(name)' is not usable; expected 1–64 letters, digits, '.', '_' or '-', not starting with '.'")
        }
    }

    /// The folder of the endpoints, created (0700) when `create`, and checked to be the user's own.
    package static func folder(create: Bool) throws(BroadcastProtocolError) -> String {
        let base: String
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), runtime.hasPrefix("/") {
            base = runtime + "/swift-record"
        } else {
            base = "/tmp/swift-record-\(getuid())"
        }
        for dir in [base, base + "/broadcast"] {
            if create, mkdir(dir, 0o700) != 0, errno != EEXIST {
                throw BroadcastProtocolError("cannot create \(dir): \(String(cString: strerror(errno)))")
            }
            var st = stat()
            guard lstat(dir, &st) == 0 else {
                throw BroadcastProtocolError("\(dir): \(String(cString: strerror(errno)))")
            }
            guard st.st_mode & S_IFMT == S_IFDIR, st.st_uid == getuid(), st.st_mode & 0o077 == 0 else {
                throw BroadcastProtocolError("\(dir) is not a folder of mode 0700 owned by user \(getuid()); refusing to use it")
            }
        }
        return base + "/broadcast"
    }

    /// The socket path of the host called `name`.
    package static func path(for name: String, create: Bool = false) throws(BroadcastProtocolError) -> String {
        try checkName(name)
        return try folder(create: create) + "/" + name
    }

    package static func address(_ path: String) throws(BroadcastProtocolError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw BroadcastProtocolError("socket path \(path) is longer than a Unix socket's \(MemoryLayout.size(ofValue: address.sun_path) - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        return address
    }
}

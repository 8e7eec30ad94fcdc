import Glibc
import SwiftRecord
import SwiftRecordBroadcastWire

/// The listening socket of a host called NAME (`BroadcastEndpoint.path`): mode 0600 in a
/// folder of mode 0700, so only its user can connect (each peer's credentials are checked
/// again on accept). A second host on a name in use is refused; a socket left by a host that
/// died is replaced. Removes its socket when closed, if it is still its own.
package final class BroadcastListener: Sendable {
    package let fd: Int32
    package let path: String
    private let identity: (device: UInt, inode: UInt)

    package init(name: String) throws(BroadcastProtocolError) {
        let path = try BroadcastEndpoint.path(for: name, create: true)
        let address = try BroadcastEndpoint.address(path)
        // A socket already there: a live host answers a connection (refused, the name is
        // taken); a dead one's socket refuses it (replaced). Anything else is not ours to remove.
        var st = stat()
        if lstat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFSOCK else {
                throw BroadcastProtocolError("\(path) exists and is not a socket; refusing to replace it")
            }
            if (try? BroadcastSocket.connect(to: path)) != nil {
                throw BroadcastProtocolError("the broadcast name '\(name)' is taken: another recorder listens at \(path)")
            }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BroadcastProtocolError("socket: \(String(cString: strerror(errno)))") }
        // Created 0600 (the umask is process-wide, so the mode is set again right after, before listen).
        var a = address
        let bound = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, chmod(path, 0o600) == 0, listen(fd, 4) == 0, lstat(path, &st) == 0 else {
            let e = errno
            close(fd)
            throw BroadcastProtocolError(e == EADDRINUSE ? "the broadcast name '\(name)' is taken (\(path))"
                                                           : "listening at \(path): \(String(cString: strerror(e)))")
        }
        self.fd = fd
        self.path = path
        identity = (UInt(st.st_dev), UInt(st.st_ino))
    }

    deinit {
        removeSocket()
        close(fd)
    }

    /// Removes the socket's name, if it is still this listener's (no new sender can find it).
    package func removeSocket() {
        var st = stat()
        if lstat(path, &st) == 0, UInt(st.st_dev) == identity.device, UInt(st.st_ino) == identity.inode { unlink(path) }
    }

    /// A connection waiting to be accepted, or nil.
    package func accept() -> BroadcastSocket? {
        // (Called when poll says one is waiting; every later wait is a poll with a deadline.)
        let c = Glibc.accept(fd, nil, nil)
        guard c >= 0 else { return nil }
        _ = fcntl(c, F_SETFD, FD_CLOEXEC)
        return BroadcastSocket(adopting: c)
    }
}

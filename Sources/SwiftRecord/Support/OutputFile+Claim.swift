import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import SystemPackage

/// How a file being written is held: a lock other runs see, and the process's own claims.
extension OutputFile {
    /// Whether another process holds a lock on the regular file at `path` (another
    /// swift-record writing it). A file this process holds is not "another".
    static func isLockedByAnother(_ path: String) -> Bool {
        let fd = PathBytes.withCString(path) { open($0, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) }
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if let id = FileIdentity(descriptor: fd), ownClaims.withLock({ $0.contains(id) }) { return false }
        return flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK
    }

    /// The files this process has created and is writing (their locks are its own).
    static let ownClaims = Locked(Set<FileIdentity>())

    /// A created file held while it is written: a descriptor of its own with an exclusive
    /// `flock` (another swift-record that would replace it sees the lock), its identity
    /// (to notice when the name no longer leads to it), and where it was kept when it had to be.
    final class Claim: Sendable {
        private struct Held {
            var descriptor: Int32 = -1
            var identity: FileIdentity?
            var rescued: String?
        }
        private let held = Locked(Held())

        var identity: FileIdentity? { held.withLock { $0.identity } }
        /// The descriptor holding the file, while it is held.
        var descriptor: Int32? { held.withLock { $0.descriptor >= 0 ? $0.descriptor : nil } }
        /// Whether the held file still has a name somewhere.
        var isLinked: Bool {
            held.withLock { h in
                var st = stat()
                return h.descriptor >= 0 && fstat(h.descriptor, &st) == 0 && st.st_nlink > 0
            }
        }
        var rescued: String? { held.withLock { $0.rescued } }

        func hold(_ fd: Int32) {
            // A descriptor of its own that can read (to keep the file if its name is taken
            // over): the same file opened again through /proc, or else a duplicate.
            var copy = open("/proc/self/fd/\(fd)", O_RDONLY | O_NOCTTY | O_CLOEXEC)
            if copy < 0 || FileIdentity(descriptor: copy) != FileIdentity(descriptor: fd) {
                if copy >= 0 { close(copy) }
                copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
            }
            guard copy >= 0 else { return }
            _ = flock(copy, LOCK_EX | LOCK_NB)
            let id = FileIdentity(descriptor: copy)
            let old = held.withLock { h -> FileIdentity? in
                let old = h.identity
                if h.descriptor >= 0 { close(h.descriptor) }
                h.descriptor = copy
                h.identity = id
                return old
            }
            OutputFile.ownClaims.withLock { claims in
                if let old { claims.remove(old) }
                if let id { claims.insert(id) }
            }
        }

        /// Copies the held file's bytes to a new file at `path`; true when done.
        func copy(to path: String) -> Bool {
            held.withLock { h in
                guard h.descriptor >= 0,
                      let out = try? PathBytes.withCString(path, { p throws(Errno) in try OutputFile.createExclusively(p) })
                else { return false }
                let source = FileDescriptor(rawValue: h.descriptor)
                var offset: Int64 = 0
                var ok = true
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                do {
                    while true {
                        let n = try buffer.withUnsafeMutableBytes { try source.read(fromAbsoluteOffset: offset, into: $0) }
                        if n == 0 { break }
                        try out.writeAll(buffer[..<n])
                        offset += Int64(n)
                    }
                } catch {
                    ok = false
                }
                do { try out.close() } catch { ok = false }
                if ok { h.rescued = path } else { _ = PathBytes.withCString(path) { unlink($0) } }
                return ok
            }
        }

        func release() {
            let id = held.withLock { h -> FileIdentity? in
                guard h.descriptor >= 0 else { return nil }
                close(h.descriptor)
                h.descriptor = -1
                return h.identity
            }
            if let id { OutputFile.ownClaims.withLock { _ = $0.remove(id) } }
        }

        deinit { release() }
    }
}

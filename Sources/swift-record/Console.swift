import Foundation
import SwiftRecord
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Standard error and standard output as the command prints to them. A message is never a
/// reason to stop: what cannot be written (a closed pipe, `2>&-`, `2>/dev/full`, a reader
/// that went away under `| tee`) is dropped, and once the stream has failed for good
/// (EPIPE, EBADF, ENOSPC, EIO, …) nothing more is tried on it. FileHandle's `write` and
/// `print` are not used: the first traps on any error, the second buffers.
final class ConsoleStream: Sendable {
    let descriptor: Int32
    /// False once writing failed for good.
    private let usable: Locked<Bool>

    init(_ descriptor: Int32) {
        self.descriptor = descriptor
        usable = Locked(true)
    }

    /// Whether messages still go out (false after a failure, or when the stream was closed at start).
    var isUsable: Bool { usable[\.self] }

    /// Stops printing on this stream for good.
    func disable() { usable.withLock { $0 = false } }

    /// Writes all of `text` (swift-system's `write`, which retries after EINTR); a stream that cannot take
    /// it now (EAGAIN on a non-blocking descriptor) is waited for at most a second, then
    /// the message is dropped; any other failure ends printing on this stream.
    func write(_ text: String) {
        guard isUsable else { return }
        // A path that is not UTF-8 goes out as its own bytes (`PathBytes`).
        let bytes = PathBytes.bytes(text)
        guard !bytes.isEmpty else { return }
        let stream = FileDescriptor(rawValue: descriptor)
        let failed = bytes.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let e: Errno
                do {
                    let n = try stream.write(UnsafeRawBufferPointer(rebasing: raw[offset...]))
                    if n > 0 { offset += n; continue }
                    e = .ioError
                } catch {
                    e = error as? Errno ?? .ioError
                }
                if e == .resourceTemporarilyUnavailable || e == .wouldBlock {
                    var p = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    let ready = poll(&p, 1, 1000)
                    if ready > 0 && (p.revents & Int16(POLLOUT)) != 0 { continue }
                    return ready < 0 && errno != EINTR
                }
                return true
            }
            return false
        }
        if failed { disable() }
    }
}

enum Console {
    static let standardError = ConsoleStream(STDERR_FILENO)
    static let standardOutput = ConsoleStream(STDOUT_FILENO)

    /// Called first thing: a write to a pipe whose reader has gone must fail with EPIPE
    /// (and be dropped), not kill the process with SIGPIPE; and a standard descriptor that
    /// is closed (`2>&-`) is opened on /dev/null, so that no file the command opens can
    /// become descriptor 2 and receive its messages. Nothing is then printed on it.
    static func prepare() {
        signal(SIGPIPE, SIG_IGN)
        for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(fd, F_GETFD) < 0 && errno == EBADF {
            let opened = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY)
            if opened >= 0 && opened != fd {
                _ = dup2(opened, fd)
                close(opened)
            }
            if fd == STDOUT_FILENO { standardOutput.disable() }
            if fd == STDERR_FILENO { standardError.disable() }
        }
    }
}

/// Prints a line to standard error (dropped if it cannot be written).
func note(_ text: String) {
    Console.standardError.write(text + "\n")
}

/// Prints a line to standard output (dropped if it cannot be written).
func say(_ text: String) {
    Console.standardOutput.write(text + "\n")
}

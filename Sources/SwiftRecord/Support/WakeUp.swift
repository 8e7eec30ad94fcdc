#if canImport(Glibc)
import Glibc
#endif
internal import SystemPackage

/// A way to wake a thread blocked waiting for a descriptor (a pipe, a FIFO, a terminal),
/// from any other thread: `interrupt()` makes every later `waitReadable` throw
/// `.cancelled` at once. The one owner of its pipe's two descriptors.
package final class WakeUp: Sendable {
    /// The pipe's ends; nil when the pipe could not be made (then waits fall back to
    /// polling the flag every 100 ms).
    private let pipeEnds: (readEnd: FileDescriptor, writeEnd: FileDescriptor)?
    private let interrupted = Locked(false)

    package init() {
        pipeEnds = try? FileDescriptor.pipe()
        if let pipeEnds {
            // (swift-system's pipe(options:) is for newer systems only: the flags set here.)
            for fd in [pipeEnds.readEnd.rawValue, pipeEnds.writeEnd.rawValue] {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
        }
    }

    deinit {
        try? pipeEnds?.readEnd.close()
        try? pipeEnds?.writeEnd.close()
    }

    /// Wakes every waiter, now and later. Safe from any thread; does not block.
    package func interrupt() {
        interrupted.withLock { $0 = true }
        if let writeEnd = pipeEnds?.writeEnd {
            // A full pipe (EAGAIN) already wakes every waiter.
            _ = try? writeEnd.writeAll(CollectionOfOne(UInt8(1)))
        }
    }

    package var isInterrupted: Bool { interrupted.withLock { $0 } }

    /// Returns once `fd` has something to read (or its end), or throws `.cancelled` once
    /// `interrupt()` has been called.
    package func waitReadable(_ fd: Int32, what: String) throws(SwiftRecordError) {
        while true {
            if isInterrupted {
                throw SwiftRecordError(.cancelled, operation: what, message: "stopped while waiting for input")
            }
            // poll(2) has no swift-system counterpart.
            let readEnd = pipeEnds?.readEnd.rawValue ?? -1
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)]
            let n = poll(&fds, readEnd >= 0 ? 2 : 1, readEnd >= 0 ? -1 : 100)
            if n < 0 && errno != EINTR {
                return   // let the read report what is wrong with the descriptor
            }
            if n > 0 && fds[0].revents != 0 && !isInterrupted { return }
        }
    }
}

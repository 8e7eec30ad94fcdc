import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import SystemPackage

/// A checked file's life: created exclusively and held, written, then committed (taking
/// the place of the file it replaces) or discarded.
extension OutputFile {
    /// Creates the file to write (exclusively: it must not exist) and returns it open for
    /// writing; the caller closes it. The file stays claimed (locked) until `commit()` or
    /// `discard()`.
    package func create() throws(SwiftRecordError) -> Int32 {
        let fd: Int32
        if let reserved = OutputFile.takeReservation(writingPath) {
            fd = reserved
        } else {
            do {
                fd = try PathBytes.withCString(writingPath) { p throws(Errno) in try OutputFile.createExclusively(p) }.rawValue
            } catch {
                let exists = error == .fileExists
                let reason = exists ? "it appeared while swift-record was starting" : error.description
                throw SwiftRecordError(exists ? .fileAlreadyExists : .io, operation: "create",
                                       message: "cannot create '\(requestedPath)': \(reason)")
            }
        }
        claim.hold(fd)
        return fd
    }

    /// Opens a new file for writing, failing if the name exists (`O_EXCL`: two processes
    /// never both create one name); permissions 0666 before the umask.
    static func createExclusively(_ path: UnsafePointer<CChar>) throws(Errno) -> FileDescriptor {
        do {
            return try FileDescriptor.open(path, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                                           permissions: FilePermissions(rawValue: 0o666))
        } catch {
            throw error as? Errno ?? .ioError
        }
    }

    /// Creates the file and closes it again: for writers that open the path themselves.
    package func createEmpty() throws(SwiftRecordError) {
        let fd = try create()
        close(fd)
    }

    /// Writes `data` as the whole file and completes it.
    package func write(_ data: Data) throws(SwiftRecordError) {
        let fd = FileDescriptor(rawValue: try create())
        var failure: Errno?
        do { try fd.writeAll(data) } catch { failure = error as? Errno ?? .ioError }
        if failure == nil, fsync(fd.rawValue) != 0, errno != EINVAL { failure = Errno(rawValue: errno) }
        do { try fd.close() } catch { failure = failure ?? error as? Errno ?? .ioError }
        if let failure {
            discard()
            throw SwiftRecordError(.io, operation: "write", message: "cannot write '\(requestedPath)': \(failure)")
        }
        try commit()
    }

    /// Throws unless `writingPath` still names the file this run created: another program
    /// may have renamed, removed or replaced it meanwhile. A file that was only moved (it
    /// still has a name elsewhere) is left where it is now; one that is gone or whose name
    /// another file took is copied (from the descriptor still open on it) to a new partial
    /// file, named in the error.
    package func checkUnchanged() throws(SwiftRecordError) {
        guard let ours = claim.identity else { return }
        let now = FileIdentity(path: writingPath)
        guard now != ours else { return }
        if now == nil, claim.isLinked {
            throw SwiftRecordError(.io, operation: what,
                                   message: "'\(requestedPath)' no longer names the file swift-record was writing (another program moved or renamed it); that file was left where it is now")
        }
        let dir = writingPath.lastIndex(of: "/").map { String(writingPath[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let name = writingPath.lastIndex(of: "/").map { String(writingPath[writingPath.index(after: $0)...]) } ?? writingPath
        let rescue = OutputFile.partialName(directory: dir, name: name)
        let happened = now == nil ? "was removed" : "was replaced by another file"
        if claim.copy(to: rescue) {
            throw SwiftRecordError(.io, operation: what,
                                   message: "'\(requestedPath)' \(happened) while swift-record was writing it (another program did it); what is there now was left alone, and this run's recording is kept as \(rescue)")
        }
        throw SwiftRecordError(.io, operation: what,
                               message: "'\(requestedPath)' \(happened) while swift-record was writing it (another program did it), and this run's recording could not be kept elsewhere")
    }

    /// The file at `writingPath` was rewritten in place by this run (a repair renamed a new
    /// file over it): hold that one from now on.
    package func reclaim() {
        let fd = PathBytes.withCString(writingPath) { open($0, O_RDONLY | O_NOCTTY | O_CLOEXEC) }
        guard fd >= 0 else { return }
        claim.hold(fd)
        close(fd)
    }

    /// The path a writer that opens its file by name (libavformat) is given: this run's own
    /// file through the descriptor that holds it (`/proc/self/fd/N`), so a name taken over by
    /// another program between `create()` and the writer's open (or the muxer's reopen for
    /// `+faststart`) is never written; `writingPath` when nothing is held.
    package var ioPath: String {
        claim.descriptor.map { "/proc/self/fd/\($0)" } ?? writingPath
    }

    /// Cuts this run's own file to `length` bytes (through the descriptor that holds it, not
    /// the name): a writing error's cut-off sample goes, whatever the name now holds.
    package func truncateOwn(to length: Int64) {
        guard let fd = claim.descriptor else { return }
        let w = open("/proc/self/fd/\(fd)", O_WRONLY | O_NOCTTY | O_CLOEXEC)
        guard w >= 0 else { return }
        _ = ftruncate(w, off_t(length))
        close(w)
    }

    /// Where `checkUnchanged()` kept this run's file, when it had to.
    package var rescuedPath: String? { claim.rescued }

    /// The file is complete: when replacing, it now takes the old one's place, provided
    /// the old one is still the file checked at the start and no other run is writing it.
    package func commit() throws(SwiftRecordError) {
        defer { claim.release() }
        guard replacesExistingFile else {
            try checkUnchanged()
            return
        }
        try checkUnchanged()
        let changed = SwiftRecordError(.io, operation: what,
                                       message: "'\(requestedPath)' changed since swift-record checked it (another program replaced it or is writing it); it was left as it is, and this run's recording is kept as \(writingPath)")
        let fd = PathBytes.withCString(path) { open($0, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) }
        if fd < 0 {
            // The file to replace is gone: take the name only if it is still free.
            let e = errno
            guard e == ENOENT else {
                throw SwiftRecordError(.io, operation: "write", message: "cannot replace '\(requestedPath)': \(String(cString: strerror(e)))")
            }
            try rename(noReplace: true, changed: changed)
            return
        }
        defer { close(fd) }
        let here = FileIdentity(descriptor: fd)
        guard here == existing, OutputFile.ownClaims.withLock({ $0.contains(here!) }) || flock(fd, LOCK_EX | LOCK_NB) == 0,
              FileIdentity(path: path) == existing else {
            throw changed
        }
        try rename(noReplace: false, changed: changed)
    }

    private func rename(noReplace: Bool, changed: SwiftRecordError) throws(SwiftRecordError) {
        // Without replacing: a hard link takes the name only if it is free (as
        // renameat2's RENAME_NOREPLACE would), then the partial name goes.
        let r = PathBytes.withCString(writingPath) { from in
            PathBytes.withCString(path) { to in
                noReplace ? (link(from, to) == 0 ? unlink(from) : -1) : Glibc.rename(from, to)
            }
        }
        guard r == 0 else {
            let e = errno
            if e == EEXIST { throw changed }
            throw SwiftRecordError(.io, operation: "write", message: "cannot replace '\(requestedPath)': \(String(cString: strerror(e)))")
        }
    }

    /// Removes what this program created (never the file it was to replace, nor one that
    /// another program put in its place).
    package func discard() {
        defer { claim.release() }
        guard let ours = claim.identity, FileIdentity(path: writingPath) == ours else { return }
        _ = PathBytes.withCString(writingPath) { unlink($0) }
    }
}

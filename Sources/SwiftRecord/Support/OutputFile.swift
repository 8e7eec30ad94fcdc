import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import SystemPackage

/// The identity of a file on disk (device and inode): two paths name the same file when
/// these are equal, whatever links and `..` lie between them.
package struct FileIdentity: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64

    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// The file at `path` (links followed), or nil when there is none.
    package init?(path: String) {
        var st = stat()
        guard PathBytes.withCString(path, { stat($0, &st) }) == 0 else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }

    /// The file open as `descriptor`.
    package init?(descriptor: Int32) {
        var st = stat()
        guard fstat(descriptor, &st) == 0 else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }
}

/// A file swift-record is about to write, checked against the one rule every written path
/// follows (the output, `--stats-json`, `--timing-log`, a repaired file, a replay clip, an
/// HLS playlist, its segments and init segment):
///
/// - Symbolic links are followed: the file written is the link's target, the link stays.
/// - Only regular files are written. A device node, directory, FIFO or socket is refused.
/// - An existing file is refused, unless replacing was asked for (`overwritesExistingFile`,
///   the command line's `--overwrite`/`-y`); then the new file is written as
///   `NAME.partial-PID-N.EXT` next to it and renamed over the old one only once complete, so the old one is
///   untouched until then and stays if writing fails. A file another swift-record is still
///   writing is not replaced, and the rename happens only if the file is still the one
///   checked at the start (otherwise the run fails, its own file kept under the partial name).
/// - A new file is created exclusively (`O_EXCL`) and held with an exclusive lock while it is
///   written: what is removed on an error path is only ever a file this program created,
///   and if the name was taken over meanwhile, the run says so instead of claiming it.
/// - Paths that are the same file as another input or output are refused (`checkDistinct`).
/// - A path is bytes: one that is not UTF-8 is carried losslessly (`PathBytes`).
package struct OutputFile: Sendable {
    /// The path as given.
    package let requestedPath: String
    /// Where the file ends up: `requestedPath` with symbolic links followed.
    package let path: String
    /// Whether an existing regular file at `path` is replaced once the new one is complete.
    package let replacesExistingFile: Bool
    /// Where the bytes are written until complete: `path`, or a sibling when replacing.
    package let writingPath: String
    /// The file that was at `path` when it was checked (when replacing).
    private let existing: FileIdentity?
    private let what: String
    private let claim = Claim()

    /// Checks `requested` against the rule; `what` names it in errors ("output",
    /// "--stats-json") and `howToReplace` says how to allow replacing an existing file.
    package init(_ requested: String, what: String, overwrite: Bool, howToReplace: String = "pass --overwrite (-y)") throws(SwiftRecordError) {
        guard !requested.isEmpty else {
            throw SwiftRecordError(.invalidArgument, operation: what, message: "the path is empty; expected a file name")
        }
        guard !requested.hasSuffix("/") else {
            throw SwiftRecordError(.invalidArgument, operation: what, message: "'\(requested)' names a directory; expected a file name")
        }
        // What the path names now, every link followed, also the kernel's own links that
        // name no path (/dev/stdout on a pipe: /proc/self/fd/1 -> "pipe:[…]").
        var named = stat()
        if PathBytes.withCString(requested, { stat($0, &named) }) == 0, case let type = named.st_mode & S_IFMT, type != S_IFREG {
            throw SwiftRecordError(.invalidArgument, operation: what,
                                   message: "'\(requested)' is \(OutputFile.describe(type)); swift-record writes only regular files")
        }
        let target = try OutputFile.followLinks(requested, what: what)
        var st = stat()
        var existing: FileIdentity?
        if PathBytes.withCString(target, { stat($0, &st) }) == 0, !OutputFile.isReservation(target) {
            let type = st.st_mode & S_IFMT
            guard type == S_IFREG else {
                throw SwiftRecordError(.invalidArgument, operation: what,
                                       message: "'\(requested)' is \(OutputFile.describe(type)); swift-record writes only regular files")
            }
            guard overwrite else {
                throw SwiftRecordError(.fileAlreadyExists, operation: what,
                                       message: "'\(requested)' already exists; choose another name, or \(howToReplace) to replace it")
            }
            existing = FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
            if OutputFile.isLockedByAnother(target) {
                throw SwiftRecordError(.io, operation: what,
                                       message: "'\(requested)' is being written by another swift-record run; it was left alone")
            }
        }
        let slash = target.lastIndex(of: "/")
        let directory = slash.map { String(target[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let name = slash.map { String(target[target.index(after: $0)...]) } ?? target
        var dst = stat()
        guard PathBytes.withCString(directory, { stat($0, &dst) }) == 0 else {
            throw SwiftRecordError(.io, operation: what, message: "cannot write '\(requested)': the directory \(directory) does not exist")
        }
        guard (dst.st_mode & S_IFMT) == S_IFDIR else {
            throw SwiftRecordError(.invalidArgument, operation: what,
                                   message: "cannot write '\(requested)': \(directory) is not a directory (it is \(OutputFile.describe(dst.st_mode & S_IFMT)))")
        }
        guard PathBytes.withCString(directory, { access($0, W_OK) }) == 0 else {
            throw SwiftRecordError(.io, operation: what, message: "cannot write '\(requested)': the directory \(directory) is not writable")
        }
        requestedPath = requested
        path = target
        self.what = what
        self.existing = existing
        replacesExistingFile = existing != nil
        if existing != nil {
            // NAME.partial-PID-N.EXT: visible (a killed run's file is easy to find), with the
            // extension kept (the container is told by it).
            writingPath = OutputFile.partialName(directory: directory, name: name)
        } else {
            writingPath = target
        }
    }

    /// `NAME.partial-PID-N.EXT` in `directory`.
    private static func partialName(directory: String, name: String) -> String {
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let stem = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[$0...]) } ?? ""
        return (directory == "/" ? "" : directory) + "/\(stem).partial-\(getpid())-\(OutputFile.nextSerial())\(ext)"
    }

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

    /// Whether another process holds a lock on the regular file at `path` (another
    /// swift-record writing it). A file this process holds is not "another".
    private static func isLockedByAnother(_ path: String) -> Bool {
        let fd = PathBytes.withCString(path) { open($0, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) }
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if let id = FileIdentity(descriptor: fd), ownClaims.withLock({ $0.contains(id) }) { return false }
        return flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK
    }

    /// The files this process has created and is writing (their locks are its own).
    fileprivate static let ownClaims = Locked(Set<FileIdentity>())

    /// Refuses any two of `outputs` and `inputs` that are the same file: an output that is
    /// an input would destroy it, two outputs would overwrite each other.
    package static func checkDistinct(outputs: [(what: String, file: OutputFile)],
                                      inputs: [(what: String, identity: FileIdentity)] = []) throws(SwiftRecordError) {
        var seen: [(what: String, key: String, identity: FileIdentity?)] = inputs.map { ($0.what, "", $0.identity) }
        for output in outputs {
            let id = FileIdentity(path: output.file.path)
            let key = output.file.path
            if let clash = seen.first(where: { ($0.identity != nil && $0.identity == id) || (!$0.key.isEmpty && $0.key == key) }) {
                throw SwiftRecordError(.invalidArgument, operation: output.what,
                                       message: "'\(output.file.requestedPath)' is the same file as the \(clash.what); choose another name")
            }
            seen.append((output.what, key, id))
        }
    }

    /// `path` with its symbolic links followed (also a dangling one: its target is created).
    private static func followLinks(_ path: String, what: String) throws(SwiftRecordError) -> String {
        var current = path
        for _ in 0..<40 {
            var st = stat()
            guard PathBytes.withCString(current, { lstat($0, &st) }) == 0, (st.st_mode & S_IFMT) == S_IFLNK else {
                return canonicalDirectory(of: current)
            }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = PathBytes.withCString(current) { readlink($0, &buffer, buffer.count - 1) }
            guard n > 0 else { return current }
            let target = PathBytes.string(buffer[0..<n].map { UInt8(bitPattern: $0) })
            if target.hasPrefix("/") {
                current = target
            } else {
                let dir = current.lastIndex(of: "/").map { String(current[...$0]) } ?? ""
                current = dir + target
            }
        }
        throw SwiftRecordError(.invalidArgument, operation: what, message: "'\(path)' is a loop of symbolic links")
    }

    /// `path` with its directory made absolute and free of links, so that two names of one
    /// new file compare equal.
    private static func canonicalDirectory(of path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let resolved = PathBytes.withCString(directory, { realpath($0, nil) }) else { return path }
        defer { free(resolved) }
        let dir = PathBytes.string(cString: resolved)
        return (dir == "/" ? "" : dir) + "/" + name
    }

    private static func describe(_ type: mode_t) -> String {
        switch type {
        case S_IFDIR: return "a directory"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFIFO: return "a FIFO (a pipe)"
        case S_IFREG: return "a regular file"
        case S_IFSOCK: return "a socket"
        default: return "not a regular file"
        }
    }

    /// A created file held while it is written: a descriptor of its own with an exclusive
    /// `flock` (another swift-record that would replace it sees the lock), its identity
    /// (to notice when the name no longer leads to it), and where it was kept when it had to be.
    private final class Claim: Sendable {
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

    private static let serial = Locked(0)
    private static func nextSerial() -> Int { serial.withLock { $0 += 1; return $0 } }
}

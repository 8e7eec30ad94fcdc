import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
    let existing: FileIdentity?
    /// What the file is, in errors ("output", "--stats-json").
    let what: String
    /// How the file is held while it is written (`OutputFile+Claim`).
    let claim = Claim()

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
    static func partialName(directory: String, name: String) -> String {
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let stem = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[$0...]) } ?? ""
        return (directory == "/" ? "" : directory) + "/\(stem).partial-\(getpid())-\(OutputFile.nextSerial())\(ext)"
    }

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

    private static let serial = Locked(0)
    private static func nextSerial() -> Int { serial.withLock { $0 += 1; return $0 } }
}

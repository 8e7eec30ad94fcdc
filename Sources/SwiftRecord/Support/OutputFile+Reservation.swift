import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import SystemPackage

/// A name taken for a file before its writer exists: the command line's default output
/// name, which must be unique even between two runs started in the same second.
///
/// `reserveUnique` creates the first free name of `stem.ext`, `stem-2.ext`, `stem-3.ext`, …
/// exclusively (`O_EXCL`: two processes never get the same one). The empty file is this
/// process's: an `OutputFile` for that path treats it as new (not "already exists"), and
/// its `create()` writes into it. One never taken is removed by `releaseReservation`.
extension OutputFile {
    private static let reservations = Locked<[String: FileIdentity]>([:])

    /// Creates and returns the first free one of `stem + ext`, `stem + "-2" + ext`, … (`ext`
    /// with its dot), trying at most `attempts` names.
    package static func reserveUnique(stem: String, extension ext: String, attempts: Int = 1000) throws(SwiftRecordError) -> String {
        for n in 1...max(1, attempts) {
            let path = stem + (n == 1 ? "" : "-\(n)") + ext
            let fd: FileDescriptor
            do {
                fd = try PathBytes.withCString(path) { p throws(Errno) in try OutputFile.createExclusively(p) }
            } catch {
                if error == .fileExists { continue }
                throw SwiftRecordError(.io, operation: "output", message: "cannot create '\(path)': \(error)")
            }
            let identity = FileIdentity(descriptor: fd.rawValue)
            try? fd.close()
            if let identity { reservations.withLock { $0[path] = identity } }
            return path
        }
        throw SwiftRecordError(.fileAlreadyExists, operation: "output",
                               message: "'\(stem)\(ext)' and \(attempts - 1) numbered names after it already exist; choose a name with -o")
    }

    /// Removes a reserved file that no writer took (never anything else).
    package static func releaseReservation(_ path: String) {
        guard let identity = reservations.withLock({ $0.removeValue(forKey: path) }),
              FileIdentity(path: path) == identity else { return }
        _ = PathBytes.withCString(path) { unlink($0) }
    }

    /// Whether `path` (links followed) is a file this process reserved and nothing took yet.
    static func isReservation(_ path: String) -> Bool {
        guard let identity = FileIdentity(path: path) else { return false }
        return reservations.withLock { $0.values.contains(identity) }
    }

    /// Opens the reserved file at `path` for writing and hands it over (nil when `path` is not
    /// a reservation of this process's).
    static func takeReservation(_ path: String) -> Int32? {
        guard let identity = FileIdentity(path: path),
              let key = reservations.withLock({ r in r.first { $0.value == identity }?.key }) else { return nil }
        let fd = PathBytes.withCString(path) { open($0, O_WRONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 else { return nil }
        guard FileIdentity(descriptor: fd) == identity else {
            close(fd)
            return nil
        }
        reservations.withLock { _ = $0.removeValue(forKey: key) }
        return fd
    }
}

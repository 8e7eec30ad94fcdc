import Foundation
import SwiftRecord
#if canImport(Glibc)
import Glibc
#endif

/// The output's directory, held open from the start of a recording, so that the end can
/// tell the truth when it was moved or removed meanwhile: the file written into it went
/// with it (its path, read back from /proc/self/fd, says where), or was lost with it.
final class OutputDirectoryWatch {
    enum Whereabouts: Equatable {
        /// The directory is where it was.
        case inPlace
        /// The directory is now at this path.
        case moved(to: String)
        /// The directory was removed (and the file in it with it).
        case removed
    }

    /// The directory as it was resolved at the start.
    let path: String
    private let descriptor: Int32
    private let identity: FileIdentity?

    /// Watches the directory of `file` (a path whose directory exists; links followed).
    init(file: String) {
        let slash = file.lastIndex(of: "/")
        path = slash.map { String(file[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        descriptor = PathBytes.withCString(path) { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        identity = descriptor >= 0 ? FileIdentity(descriptor: descriptor) : nil
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Where the directory is now.
    func whereabouts() -> Whereabouts {
        guard descriptor >= 0, let identity else { return .inPlace }
        if FileIdentity(path: path) == identity { return .inPlace }
        var st = stat()
        if fstat(descriptor, &st) == 0 && st.st_nlink == 0 { return .removed }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        guard n > 0 else { return .removed }
        let now = PathBytes.string(buffer[0..<n].map { UInt8(bitPattern: $0) })
        return now.hasSuffix(" (deleted)") ? .removed : .moved(to: now)
    }

    /// Where `file` (a path in the watched directory) is now, if the directory was moved.
    func currentPath(of file: String) -> String {
        guard case .moved(let to) = whereabouts() else { return file }
        let name = file.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? file
        return (to == "/" ? "" : to) + "/" + name
    }
}

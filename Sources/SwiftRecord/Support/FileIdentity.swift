import Foundation
#if canImport(Glibc)
import Glibc
#endif

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

import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension LiveOutput {
    /// HLS: refuses a segment path that is there and is not a regular file (a directory
    /// called `live-0.ts`, a FIFO, a device), naming that path: FFmpeg's own failure comes
    /// only once it opens the segment, and names the playlist. Segments are
    /// `STEM-N.ts` / `STEM-N.m4s` and `STEM-init.mp4` beside the playlist. Other kinds
    /// have no files; this returns at once.
    public func checkSegmentPaths() throws(SwiftRecordError) {
        guard kind == .hls else { return }
        let directory = url.deletingLastPathComponent().path
        let stem = url.deletingPathExtension().lastPathComponent
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names.sorted() where LiveOutput.isSegmentName(name, stem: stem) {
            let path = (directory == "/" ? "" : directory) + "/" + name
            var st = stat()
            guard stat(path, &st) == 0 else { continue }
            let type = st.st_mode & S_IFMT
            if type != S_IFREG {
                let what = type == S_IFDIR ? "a directory" : type == S_IFIFO ? "a FIFO (a pipe)" : "not a regular file"
                throw SwiftRecordError(.invalidArgument, operation: "HLS segment",
                                       message: "'\(path)', where \(url.lastPathComponent) writes a segment, is \(what); swift-record writes only regular files")
            }
        }
    }

    /// `STEM-N.ts`, `STEM-N.m4s` or `STEM-init.mp4`.
    static func isSegmentName(_ name: String, stem: String) -> Bool {
        guard name.hasPrefix(stem + "-") else { return false }
        let rest = name.dropFirst(stem.count + 1)
        if rest == "init.mp4" { return true }
        for ext in [".ts", ".m4s"] where rest.hasSuffix(ext) {
            let number = rest.dropLast(ext.count)
            return !number.isEmpty && number.allSatisfy(\.isASCIIDigit)
        }
        return false
    }
}

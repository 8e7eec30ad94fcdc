import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Every name an HLS output writes, checked against the rule of every written file
/// (`OutputFile`) before anything is written: the playlist `NAME.m3u8` (a symbolic link
/// followed, only a regular file, an existing one only with overwriting), FFmpeg's
/// temporary playlist `NAME.m3u8.tmp` (renamed over the playlist at each update), the
/// segments `NAME-N.ts` (or `NAME-N.m4s`) and, for fragmented MP4, `NAME-init.mp4`, all
/// beside the playlist. An existing file of any of these names is refused unless
/// overwriting is allowed, and then only when it is a regular file.
package struct HLSFiles: Sendable {
    /// The playlist (`path`: links followed, its directory made canonical).
    package let playlist: OutputFile
    /// The canonical directory of the playlist, where every other name is.
    package let directory: String
    /// The playlist's name without `.m3u8`, as given: the segments are `stem-N.ext`.
    package let stem: String
    /// ".ts" or ".m4s".
    package let segmentExtension: String
    /// Whether the names are fragmented MP4 (then there is an init segment).
    package let fragmentedMP4: Bool
    package let overwrite: Bool

    /// FFmpeg's temporary playlist.
    package var temporaryPlaylist: String { playlist.path + ".tmp" }
    /// The init segment's name (fragmented MP4), relative to the playlist.
    package var initName: String? { fragmentedMP4 ? "\(stem)-init.mp4" : nil }
    package var initPath: String? { initName.map { file($0) } }
    /// The segments' names as FFmpeg's `hls_segment_filename` pattern (`%d`; the path
    /// itself holds no `%`, see `init`).
    package var segmentPattern: String { file(stem) + "-%d" + segmentExtension }

    /// Checks every name `playlist` would write. `what` names the output in errors.
    package init(playlist requested: String, fragmentedMP4: Bool, overwrite: Bool,
                 what: String = "HLS output", howToReplace: String = "pass --overwrite (-y)") throws(SwiftRecordError) {
        playlist = try OutputFile(requested, what: what, overwrite: overwrite, howToReplace: howToReplace)
        let resolved = playlist.path
        let slash = resolved.lastIndex(of: "/")!
        directory = slash == resolved.startIndex ? "/" : String(resolved[..<slash])
        let requestedName = requested.split(separator: "/").last.map(String.init) ?? requested
        stem = requestedName.lowercased().hasSuffix(".m3u8") ? String(requestedName.dropLast(5)) : requestedName
        segmentExtension = fragmentedMP4 ? ".m4s" : ".ts"
        self.fragmentedMP4 = fragmentedMP4
        self.overwrite = overwrite
        // FFmpeg's HLS muxer reads every `%` of the segment path as part of its number
        // pattern (a `%%` is not undone): such names cannot be written as given.
        guard !file(stem).contains("%") else {
            throw SwiftRecordError(.invalidArgument, operation: what,
                                   message: "'\(requested)': an HLS output's directory and name may not contain '%' (FFmpeg reads it as a segment number pattern); choose another name")
        }
        let replace = "choose another playlist name, or \(howToReplace) to replace the playlist and its segments"
        // The temporary playlist is renamed by name: it must be a plain regular file, not a link.
        var st = stat()
        if PathBytes.withCString(temporaryPlaylist, { lstat($0, &st) }) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFREG else {
                throw SwiftRecordError(.invalidArgument, operation: what,
                                       message: "'\(temporaryPlaylist)' (the temporary playlist of this HLS output) is not a regular file; swift-record writes only regular files and does not replace it")
            }
            guard overwrite else {
                throw SwiftRecordError(.fileAlreadyExists, operation: what,
                                       message: "'\(temporaryPlaylist)' (the temporary playlist of this HLS output) already exists; \(replace)")
            }
        }
        // The init segment and every segment name already in the directory: the rule of
        // every written file (a link followed, only a regular file, an existing one only
        // with overwriting), each named in the error.
        func check(_ path: String, _ role: String) throws(SwiftRecordError) {
            do throws(SwiftRecordError) {
                _ = try OutputFile(path, what: what, overwrite: overwrite)
            } catch where error.kind == .fileAlreadyExists {
                throw SwiftRecordError(.fileAlreadyExists, operation: what,
                                       message: "'\(path)' (\(role) of this HLS output) already exists; \(replace)")
            }
        }
        if let initPath { try check(initPath, "the init segment") }
        for name in existingSegmentNames() { try check(file(name), "a segment name") }
    }

    /// `name` in the playlist's directory.
    package func file(_ name: String) -> String { (directory == "/" ? "" : directory) + "/" + name }

    /// The segment number `path` stands for, when it is one of this output's segment names.
    package func segmentNumber(_ path: String) -> Int? {
        let prefix = file(stem) + "-"
        guard path.hasPrefix(prefix), path.hasSuffix(segmentExtension) else { return nil }
        let digits = path.dropFirst(prefix.count).dropLast(segmentExtension.count)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }

    /// Which of this output's names `path` (canonical, as `OutputFile.path`) is, for the
    /// collision check; nil when none.
    package func nameDescription(of path: String) -> String? {
        if path == playlist.path { return "its playlist" }
        if path == temporaryPlaylist { return "its temporary playlist \(temporaryPlaylist)" }
        if path == initPath { return "its init segment \(path)" }
        if segmentNumber(path) != nil { return "its segments \(file(stem))-N\(segmentExtension)" }
        return nil
    }

    /// Names in the directory that are this output's segment names, sorted.
    private func existingSegmentNames() -> [String] {
        guard let dir = PathBytes.withCString(directory, { opendir($0) }) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                PathBytes.string(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if segmentNumber(file(name)) != nil { names.append(name) }
        }
        return names.sorted { (segmentNumber(file($0)) ?? 0) < (segmentNumber(file($1)) ?? 0) }
    }

    /// Refuses any two of `files` (names with what they are) and `hls` that would write the
    /// same file: the playlist, its temporary, its init segment or a segment name of one
    /// output against every other name this run writes.
    package static func checkDistinct(files: [(what: String, file: OutputFile)], hls: [HLSFiles]) throws(SwiftRecordError) {
        for (i, output) in hls.enumerated() {
            let mine = [output.playlist.path, output.temporaryPlaylist] + (output.initPath.map { [$0] } ?? [])
            for other in files {
                if let name = output.nameDescription(of: other.file.path) {
                    throw SwiftRecordError(.invalidArgument, operation: other.what,
                                           message: "'\(other.file.requestedPath)' is a name the HLS output \(output.playlist.requestedPath) writes (\(name)); choose another name")
                }
            }
            for later in hls[(i + 1)...] {
                let theirs = [later.playlist.path, later.temporaryPlaylist] + (later.initPath.map { [$0] } ?? [])
                let clash = mine.contains { later.nameDescription(of: $0) != nil }
                    || theirs.contains { output.nameDescription(of: $0) != nil }
                    || (output.directory == later.directory && output.stem == later.stem)
                if clash {
                    throw SwiftRecordError(.invalidArgument, operation: "--output",
                                           message: "'\(later.playlist.requestedPath)' and '\(output.playlist.requestedPath)' would write the same files; choose another playlist name")
                }
            }
        }
    }
}

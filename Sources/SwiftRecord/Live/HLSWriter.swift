internal import CFFmpeg
import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import SystemPackage

/// Every file FFmpeg's HLS muxer opens goes through here (its `io_open` / `io_close2`), so
/// that each follows the rule of every written file (`OutputFile`): a segment or init
/// segment is created exclusively (or, with overwriting, written beside an existing
/// regular file and renamed over it when complete); the temporary playlist is a plain
/// file of ours; any other name is refused. Old segments of a rolling playlist are removed
/// here, not by FFmpeg (whose `delete_segments` removes by name): only those this output
/// created, and only while they are still the file it wrote. Used on the live output's
/// thread only (FFmpeg calls back on it).
final class HLSWriter {
    let files: HLSFiles
    private let playlistLength: Int
    /// Segments this output created as new files, by number, with their identity.
    private var created: [Int: FileIdentity] = [:]
    /// The playlist this output last put in place (the temporary's identity), and the file
    /// that was there at the start (replaced with overwriting).
    private var ownPlaylist: FileIdentity?
    private let playlistAtStart: FileIdentity?
    /// The first failure, said in full (FFmpeg only passes on an error code).
    private(set) var failure: SwiftRecordError?
    private var open: [Handle] = []

    /// One file open for FFmpeg.
    final class Handle {
        enum Kind { case segment(Int), initSegment, temporaryPlaylist }
        let kind: Kind
        let path: String
        let file: OutputFile?
        var descriptor: Int32
        var writeError: Int32 = 0

        init(kind: Kind, path: String, file: OutputFile?, descriptor: Int32) {
            self.kind = kind
            self.path = path
            self.file = file
            self.descriptor = descriptor
        }
    }

    init(files: HLSFiles, playlistLength: Int) {
        self.files = files
        self.playlistLength = playlistLength
        playlistAtStart = files.playlist.replacesExistingFile ? FileIdentity(path: files.playlist.path) : nil
    }

    /// Routes `context`'s file opening and closing here.
    func install(on context: UnsafeMutablePointer<AVFormatContext>) {
        context.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
        context.pointee.io_open = { s, pb, url, flags, _ in
            guard let s, let pb, let url, let opaque = s.pointee.opaque else { return sr_error_from_errno(EINVAL) }
            let writer = Unmanaged<HLSWriter>.fromOpaque(opaque).takeUnretainedValue()
            return writer.open(PathBytes.string(cString: url), flags: flags, into: pb)
        }
        context.pointee.io_close2 = { s, pb in
            guard let s, let pb, let opaque = s.pointee.opaque else { return 0 }
            return Unmanaged<HLSWriter>.fromOpaque(opaque).takeUnretainedValue().close(pb)
        }
    }

    private func fail(_ error: SwiftRecordError) -> Int32 {
        if failure == nil { failure = error }
        return sr_error_from_errno(EPERM)
    }

    private func open(_ path: String, flags: Int32, into pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>) -> Int32 {
        let operation = "HLS \(files.playlist.requestedPath)"
        guard (flags & sr_io_flag_write()) != 0 else {
            return fail(SwiftRecordError(.invalidState, operation: operation, message: "FFmpeg asked to read '\(path)'; an HLS output only writes"))
        }
        let handle: Handle
        do throws(SwiftRecordError) {
            if path == files.temporaryPlaylist {
                handle = Handle(kind: .temporaryPlaylist, path: path, file: nil, descriptor: try openTemporaryPlaylist())
            } else if path == files.initPath || files.segmentNumber(path) != nil {
                let file = try OutputFile(path, what: operation, overwrite: files.overwrite)
                let kind: Handle.Kind = files.segmentNumber(path).map { .segment($0) } ?? .initSegment
                handle = Handle(kind: kind, path: path, file: file, descriptor: try file.create())
                if case .segment(let n) = kind {
                    if !file.replacesExistingFile { created[n] = FileIdentity(descriptor: handle.descriptor) }
                    removeOldSegments(before: n)
                }
            } else {
                throw SwiftRecordError(.invalidState, operation: operation,
                                       message: "FFmpeg asked to write '\(path)', which is not one of this output's names; refused")
            }
        } catch {
            return fail(error)
        }
        guard let context = makeContext(handle) else {
            Glibc.close(handle.descriptor)
            handle.file?.discard()
            return sr_error_from_errno(ENOMEM)
        }
        open.append(handle)
        pb.pointee = context
        return 0
    }

    /// A new temporary playlist (FFmpeg renames it over the playlist once written). It is
    /// ours: made new each time (an old one, a regular file, only replaced with overwriting).
    private func openTemporaryPlaylist() throws(SwiftRecordError) -> Int32 {
        let path = files.temporaryPlaylist
        var fd = PathBytes.withCString(path) { Glibc.open($0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666) }
        if fd < 0 && errno == EEXIST && files.overwrite {
            var st = stat()
            if PathBytes.withCString(path, { lstat($0, &st) }) == 0, (st.st_mode & S_IFMT) == S_IFREG {
                fd = PathBytes.withCString(path) { Glibc.open($0, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
            }
        }
        guard fd >= 0 else {
            let e = errno
            throw SwiftRecordError(e == EEXIST ? .fileAlreadyExists : .io, operation: "HLS \(files.playlist.requestedPath)",
                                   message: "cannot create '\(path)': \(e == EEXIST ? "another file is there" : String(cString: strerror(e)))")
        }
        return fd
    }

    /// A rolling playlist lists the last `playlistLength` segments; one more stays for
    /// players still reading it (as FFmpeg's `delete_segments` keeps). Older ones go, if
    /// this output created them and they are still what it wrote.
    private func removeOldSegments(before n: Int) {
        guard playlistLength > 0 else { return }
        let old = n - playlistLength - 1
        guard let identity = created.removeValue(forKey: old) else { return }
        let path = files.file("\(files.stem)-\(old)\(files.segmentExtension)")
        var st = stat()
        guard PathBytes.withCString(path, { lstat($0, &st) }) == 0, (st.st_mode & S_IFMT) == S_IFREG,
              FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino)) == identity else { return }
        _ = PathBytes.withCString(path) { unlink($0) }
    }

    private func makeContext(_ handle: Handle) -> UnsafeMutablePointer<AVIOContext>? {
        let size: Int32 = 1 << 16
        guard let buffer = av_malloc(Int(size)) else { return nil }
        let opaque = Unmanaged.passRetained(handle).toOpaque()
        let context = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), size, 1, opaque, nil, { opaque, data, count in
            guard let opaque, let data else { return sr_error_from_errno(EINVAL) }
            let handle = Unmanaged<Handle>.fromOpaque(opaque).takeUnretainedValue()
            do {
                try FileDescriptor(rawValue: handle.descriptor).writeAll(UnsafeRawBufferPointer(start: data, count: Int(count)))
            } catch {
                let e = (error as? Errno)?.rawValue ?? EIO
                handle.writeError = e
                return sr_error_from_errno(e)
            }
            return count
        }, { opaque, offset, whence in
            guard let opaque else { return Int64(sr_error_from_errno(EINVAL)) }
            let handle = Unmanaged<Handle>.fromOpaque(opaque).takeUnretainedValue()
            if whence == sr_avseek_size() {
                var st = stat()
                return fstat(handle.descriptor, &st) == 0 ? Int64(st.st_size) : Int64(sr_error_from_errno(errno))
            }
            let r = lseek(handle.descriptor, off_t(offset), whence & ~sr_avseek_force())
            return r < 0 ? Int64(sr_error_from_errno(errno)) : Int64(r)
        })
        if context == nil {
            var b: UnsafeMutableRawPointer? = buffer
            av_freep(&b)
            Unmanaged<Handle>.fromOpaque(opaque).release()
        }
        return context
    }

    private func close(_ pb: UnsafeMutablePointer<AVIOContext>) -> Int32 {
        avio_flush(pb)
        let avioError = pb.pointee.error
        guard let opaque = pb.pointee.opaque else { return 0 }
        let handle = Unmanaged<Handle>.fromOpaque(opaque).takeRetainedValue()
        var context: UnsafeMutablePointer<AVIOContext>? = pb
        av_freep(&context!.pointee.buffer)
        avio_context_free(&context)
        open.removeAll { $0 === handle }
        let operation = "HLS \(files.playlist.requestedPath)"
        var e = handle.writeError
        if Glibc.close(handle.descriptor) != 0, e == 0 { e = errno }
        handle.descriptor = -1
        if e != 0 || avioError < 0 {
            let reason = e != 0 ? String(cString: strerror(e)) : ffmpegErrorString(avioError)
            if case .temporaryPlaylist = handle.kind {} else if handle.file?.replacesExistingFile == true { handle.file?.discard() }
            return fail(SwiftRecordError(.io, operation: operation, message: "cannot write '\(handle.path)': \(reason)"))
        }
        do throws(SwiftRecordError) {
            switch handle.kind {
            case .temporaryPlaylist:
                // FFmpeg renames it over the playlist next: only over ours, or the file that
                // was there at the start (overwriting), or none.
                var st = stat()
                if PathBytes.withCString(files.playlist.path, { lstat($0, &st) }) == 0 {
                    let there = FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
                    guard there == ownPlaylist || there == playlistAtStart else {
                        _ = PathBytes.withCString(handle.path) { unlink($0) }
                        throw SwiftRecordError(.io, operation: operation,
                                               message: "'\(files.playlist.requestedPath)' was replaced by another program; it was left as it is and the output stopped")
                    }
                }
                ownPlaylist = FileIdentity(path: handle.path)
            case .segment, .initSegment:
                try handle.file?.commit()
            }
        } catch {
            return fail(error)
        }
        return 0
    }

    /// The output is abandoned: files FFmpeg still holds are closed (a partial one, written
    /// to replace an existing file, removed).
    func abandonOpenFiles() {
        for handle in open where handle.descriptor >= 0 {
            Glibc.close(handle.descriptor)
            handle.descriptor = -1
            if handle.file?.replacesExistingFile == true { handle.file?.discard() }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
internal import SystemPackage

/// A file or standard input read front to back, with scatter reads straight into
/// picture storage (`readv`): a frame goes from the kernel into a pooled buffer without
/// passing through a buffer of ours. Bytes looked at to recognise the format
/// (`peek`) are handed out again by the next reads.
///
/// Used by one source, under its lock.
final class RawInputStream {
    /// The name used in messages: the path, or "standard input".
    let name: String
    /// The bytes left to read when it is a regular file (known before reading), else nil.
    let length: Int64?
    /// Where reading started in a regular file (0 unless standard input was positioned).
    private let start: Int64
    /// Bytes consumed so far (including peeked bytes handed out again).
    private(set) var position: Int64 = 0
    /// Closed (and set to nil) by `close()`; standard input is never closed.
    private var descriptor: FileDescriptor?
    private let ownsDescriptor: Bool
    /// Reads that may block indefinitely (a pipe, a FIFO, a terminal) wait on this first,
    /// so that stopping does not wait for a writer that has gone quiet.
    private let wakeUp: WakeUp?
    private var pending: [UInt8] = []
    private var pendingStart = 0
    /// Reused between reads so a steady stream allocates nothing.
    private var vectors: [iovec] = []
    /// Small reads (a Y4M `FRAME` line) land here.
    private let scratch: UnsafeMutableRawPointer
    static let scratchCapacity = 64

    /// Most `iovec`s one `readv` takes (`IOV_MAX` on Linux).
    static let maximumVectors = 1024

    /// Opens `path` for reading; `-` is standard input. `expected` says, when `path` is a
    /// directory, what kind of file was expected.
    init(path: String, wakeUp: WakeUp? = nil, expected: String = "a raw video or .y4m file") throws(SwiftRecordError) {
        let opened: FileDescriptor
        if path == "-" {
            opened = .standardInput
        } else {
            do {
                opened = try PathBytes.withCString(path) { try FileDescriptor.open($0, .readOnly, options: .closeOnExec) }
            } catch {
                throw SwiftRecordError(.io, operation: path, message: "cannot open for reading: \(FileDescriptor.reason(error))")
            }
        }
        let d = opened.rawValue
        var st = stat()
        let known = fstat(d, &st) == 0
        if known && (st.st_mode & S_IFMT) == S_IFDIR {
            if path != "-" { try? opened.close() }
            throw SwiftRecordError(.io, operation: path, message: "is a directory; expected \(expected)")
        }
        isDevice = known && (st.st_mode & S_IFMT) == S_IFCHR
        if known && (st.st_mode & S_IFMT) == S_IFREG {
            // Standard input redirected from a file may start part-way into it.
            let offset = max(0, Int64(lseek(d, 0, SEEK_CUR)))
            start = offset
            length = max(0, Int64(st.st_size) - offset)
            _ = posix_fadvise(d, 0, 0, POSIX_FADV_SEQUENTIAL)
        } else {
            start = 0
            length = nil
        }
        descriptor = opened
        // A regular file or a device never keeps a read waiting for another process.
        let mayStall = known && [S_IFIFO, S_IFSOCK].contains(st.st_mode & S_IFMT) || (known && isatty(d) == 1)
        self.wakeUp = mayStall ? wakeUp : nil
        ownsDescriptor = path != "-"
        name = path == "-" ? "standard input" : path
        scratch = .allocate(byteCount: RawInputStream.scratchCapacity, alignment: 8)
    }

    deinit {
        close()
        scratch.deallocate()
    }

    /// A character device (/dev/zero, /dev/urandom, a capture card): it may never end.
    private(set) var isDevice = false

    func close() {
        if ownsDescriptor { try? descriptor?.close() }
        descriptor = nil
    }

    private func ioError(_ error: any Error) -> SwiftRecordError {
        SwiftRecordError(.io, operation: name, message: "read failed: \(FileDescriptor.reason(error))")
    }

    /// The open descriptor; reading after `close()` fails as a read of a closed descriptor did.
    private func open() throws(SwiftRecordError) -> FileDescriptor {
        guard let descriptor else { throw ioError(Errno.badFileDescriptor) }
        return descriptor
    }

    /// Up to `count` bytes from the current position, which the following reads return again.
    func peek(_ count: Int) throws(SwiftRecordError) -> [UInt8] {
        while pending.count - pendingStart < count {
            var chunk = [UInt8](repeating: 0, count: count - (pending.count - pendingStart))
            let fd = try open()
            try wakeUp?.waitReadable(fd.rawValue, what: name)
            let n: Int
            do { n = try chunk.withUnsafeMutableBytes { try fd.read(into: $0) } } catch { throw ioError(error) }
            if n == 0 { break }
            pending.append(contentsOf: chunk.prefix(n))
        }
        return Array(pending[pendingStart..<min(pending.count, pendingStart + count)])
    }

    /// Reads up to `count` (at most `scratchCapacity`) bytes into a buffer owned by the
    /// stream, valid until the next call; fewer only at the end of the input.
    func readSmall(_ count: Int) throws(SwiftRecordError) -> UnsafeRawBufferPointer {
        let n = try read(into: UnsafeMutableRawBufferPointer(start: scratch, count: min(count, RawInputStream.scratchCapacity)))
        return UnsafeRawBufferPointer(start: scratch, count: n)
    }

    /// Reads one byte; nil at the end of the input.
    private func readByte() throws(SwiftRecordError) -> UInt8? {
        if pendingStart < pending.count {
            defer { pendingStart += 1; position += 1 }
            return pending[pendingStart]
        }
        var b: UInt8 = 0
        let fd = try open()
        try wakeUp?.waitReadable(fd.rawValue, what: name)
        let n: Int
        do { n = try withUnsafeMutableBytes(of: &b) { try fd.read(into: $0) } } catch { throw ioError(error) }
        if n == 0 { return nil }
        position += 1
        return b
    }

    /// Reads up to and including a newline, at most `maximum` bytes. Returns the line
    /// without its newline and whether the newline was found (false: the input ended or
    /// the line is longer than `maximum`).
    func readLine(maximum: Int) throws(SwiftRecordError) -> (line: [UInt8], terminated: Bool) {
        var line: [UInt8] = []
        while line.count < maximum {
            guard let b = try readByte() else { return (line, false) }
            if b == UInt8(ascii: "\n") { return (line, true) }
            line.append(b)
        }
        return (line, false)
    }

    /// Reads into `buffer` until it is full or the input ends; returns the bytes read.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SwiftRecordError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        vectors.removeAll(keepingCapacity: true)
        vectors.append(iovec(iov_base: base, iov_len: buffer.count))
        return try fillVectors()
    }

    /// Reads `byteCount` bytes into `regions` (address, length), in order, until all are
    /// filled or the input ends; returns the bytes read. Adjacent regions are merged, so a
    /// tightly packed picture is one read.
    func read(regions: (_ add: (UnsafeMutableRawPointer, Int) -> Void) -> Void) throws(SwiftRecordError) -> Int {
        vectors.removeAll(keepingCapacity: true)
        regions { address, count in
            guard count > 0 else { return }
            if let last = vectors.last, let lastBase = last.iov_base, lastBase + last.iov_len == address {
                vectors[vectors.count - 1].iov_len += count
            } else {
                vectors.append(iovec(iov_base: address, iov_len: count))
            }
        }
        return try fillVectors()
    }

    private func fillVectors() throws(SwiftRecordError) -> Int {
        var total = 0
        var index = 0
        // Peeked bytes first.
        while pendingStart < pending.count, index < vectors.count {
            let n = min(pending.count - pendingStart, vectors[index].iov_len)
            pending.withUnsafeBytes { src in
                if let from = src.baseAddress { vectors[index].iov_base?.copyMemory(from: from + pendingStart, byteCount: n) }
            }
            pendingStart += n
            total += n
            advance(&index, by: n)
        }
        if pendingStart >= pending.count, !pending.isEmpty {
            pending = []
            pendingStart = 0
        }
        while index < vectors.count {
            let count = min(RawInputStream.maximumVectors, vectors.count - index)
            let fd = try open()
            try wakeUp?.waitReadable(fd.rawValue, what: name)
            let n: Int
            do {
                n = try vectors.withUnsafeBufferPointer { v throws(Errno) in
                    try fd.read(vectors: UnsafeBufferPointer(rebasing: v[index..<(index + count)]))
                }
            } catch { throw ioError(error) }
            if n == 0 { break }
            total += n
            advance(&index, by: n)
        }
        position += Int64(total)
        return total
    }

    /// Moves past `n` filled bytes: whole vectors are skipped, a partly filled one shrinks.
    private func advance(_ index: inout Int, by n: Int) {
        var left = n
        while left > 0, index < vectors.count {
            let len = vectors[index].iov_len
            if left >= len {
                left -= len
                index += 1
            } else {
                vectors[index].iov_base = vectors[index].iov_base.map { $0 + left }
                vectors[index].iov_len -= left
                left = 0
            }
        }
    }

    /// Reads `count` bytes at `offset` (from where reading started) without moving the
    /// position (regular files only).
    func bytes(at offset: Int64, count: Int) throws(SwiftRecordError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        let fd = try open()
        while got < count {
            let n: Int
            do {
                n = try out.withUnsafeMutableBytes { b in
                    try fd.read(fromAbsoluteOffset: start + offset + Int64(got), into: UnsafeMutableRawBufferPointer(rebasing: b[got...]))
                }
            } catch { throw ioError(error) }
            if n == 0 { break }
            got += n
        }
        return Array(out.prefix(got))
    }
}

internal import CFFmpeg
internal import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A pipe (a FIFO, a character device) read for libavformat through an `AVIOContext` of
/// our own: each read waits with `WakeUp.waitReadable` (poll beside the wake-up pipe), so
/// a stop interrupts a read whose writer went quiet, which FFmpeg's own file protocol, a
/// blocking read(2), would wait on for ever. The one owner of its descriptor and its
/// `AVIOContext` (and the context's buffer).
final class PipeInput {
    private let fd: FileDescriptor
    private let wakeUp: WakeUp
    private let name: String
    private(set) var io: UnsafeMutablePointer<AVIOContext>?
    static let bufferSize: Int32 = 64 * 1024

    init(path: String, wakeUp: WakeUp) throws(SwiftRecordError) {
        do {
            fd = try PathBytes.withCString(path) { try FileDescriptor.open($0, .readOnly, options: .closeOnExec) }
        } catch {
            throw SwiftRecordError(.io, operation: "open \(path)", message: "\(error)")
        }
        self.wakeUp = wakeUp
        name = path
        guard let buffer = av_malloc(Int(PipeInput.bufferSize))?.assumingMemoryBound(to: UInt8.self) else {
            try? fd.close()
            throw SwiftRecordError(.ffmpeg, operation: "av_malloc", message: "out of memory")
        }
        io = avio_alloc_context(buffer, PipeInput.bufferSize, 0, Unmanaged.passUnretained(self).toOpaque(), { opaque, buffer, size in
            guard let opaque, let buffer else { return sr_error_eof() }
            return Unmanaged<PipeInput>.fromOpaque(opaque).takeUnretainedValue().read(into: buffer, size: Int(size))
        }, nil, nil)
        if io == nil {
            av_free(buffer)
            try? fd.close()
            throw SwiftRecordError(.ffmpeg, operation: "avio_alloc_context", message: "out of memory")
        }
    }

    deinit {
        if let io {
            av_free(io.pointee.buffer)
            var context: UnsafeMutablePointer<AVIOContext>? = io
            avio_context_free(&context)
        }
        try? fd.close()
    }

    /// libavformat's read: bytes read, `AVERROR_EOF` at the end, `AVERROR_EXIT` once stopped.
    private func read(into buffer: UnsafeMutablePointer<UInt8>, size: Int) -> Int32 {
        do {
            try wakeUp.waitReadable(fd.rawValue, what: "read \(name)")
            let n = try fd.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: size))
            return n == 0 ? sr_error_eof() : Int32(n)
        } catch let error as SwiftRecordError where error.kind == .cancelled {
            return sr_error_exit()
        } catch {
            return -EIO   // AVERROR(EIO)
        }
    }
}

/// The one owner of an input `AVFormatContext` (a media file opened for reading: repair's
/// input, the read-backs of a rewrite, `MediaFileReader`, the frame and audio counts),
/// holding the `Packet` it reads into; both go with it.
///
/// Not `Sendable`: one reader at a time, on the thread that made it.
final class Demuxer {
    let context: UnsafeMutablePointer<AVFormatContext>
    private let reading: Packet
    /// Where `read()` puts each packet; valid until the next `read()`.
    var packet: UnsafeMutablePointer<AVPacket> { reading.pointer }
    /// What the context's interrupt callback reads (`opaque`), and a pipe's own reader:
    /// kept as long as the context (released after it, in `deinit`).
    private let wakeUp: WakeUp?
    private let pipe: PipeInput?

    /// Opens `path` (bytes, `PathBytes`) and reads its header; a failure is `operation`'s,
    /// of `kind`, with `hint` after FFmpeg's reason.
    /// `device`: a libavdevice input (`v4l2`) and its options, `path` the device it opens.
    init(path: String, operation: @autoclosure () -> String, kind: SwiftRecordError.Kind = .io,
         hint: @autoclosure () -> String? = nil, wakeUp: WakeUp? = nil,
         device: (format: String, options: [String: String])? = nil) throws(SwiftRecordError) {
        _ = FFmpegLog.configure
        reading = try Packet()
        var inputFormat: UnsafePointer<AVInputFormat>?
        if let device {
            try FFmpegDevices.register()
            guard let found = av_find_input_format(device.format) else {
                throw SwiftRecordError(.unsupported, operation: operation(), message: "this FFmpeg has no \(device.format) input (libavdevice)")
            }
            inputFormat = found
        }
        var opened: UnsafeMutablePointer<AVFormatContext>?
        var pipe: PipeInput?
        if let wakeUp {
            // A context of our own, so that reading (opening too) can be interrupted;
            // avformat_open_input frees it on failure.
            guard let context = avformat_alloc_context() else {
                throw SwiftRecordError(.ffmpeg, operation: "avformat_alloc_context", message: "out of memory")
            }
            context.pointee.interrupt_callback = AVIOInterruptCB(
                callback: { opaque in
                    guard let opaque else { return 0 }
                    return Unmanaged<WakeUp>.fromOpaque(opaque).takeUnretainedValue().isInterrupted ? 1 : 0
                },
                opaque: Unmanaged.passUnretained(wakeUp).toOpaque())
            var st = stat()
            if device == nil, PathBytes.withCString(path, { stat($0, &st) }) == 0, (st.st_mode & S_IFMT) != S_IFREG, (st.st_mode & S_IFMT) != S_IFDIR {
                do {
                    pipe = try PipeInput(path: path, wakeUp: wakeUp)
                } catch {
                    avformat_free_context(context)
                    throw error
                }
                context.pointee.pb = pipe?.io
                context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
            }
            opened = context
        }
        self.wakeUp = wakeUp
        self.pipe = pipe
        var options: OpaquePointer?
        for (key, value) in device?.options ?? [:] { av_dict_set(&options, key, value, 0) }
        defer { av_dict_free(&options) }
        try check(PathBytes.withCString(path) { avformat_open_input(&opened, $0, inputFormat, &options) }, operation(), kind: kind, hint: hint())
        guard let opened else {
            throw SwiftRecordError(kind, operation: operation(), message: "cannot open it")
        }
        context = opened
    }

    /// Nil when `path` cannot be opened as media.
    convenience init?(path: String) {
        try? self.init(path: path, operation: "open \(path)")
    }

    deinit {
        var c: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&c)
    }

    /// The demuxer's name ("mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", …).
    var formatName: String { String(cString: context.pointee.iformat.pointee.name) }

    var streamCount: Int { Int(context.pointee.nb_streams) }

    func stream(_ index: Int) -> UnsafeMutablePointer<AVStream>? {
        index >= 0 && index < streamCount ? context.pointee.streams[index] : nil
    }

    /// The index of the first stream of `type`, if any.
    func firstStream(_ type: AVMediaType) -> Int? {
        (0..<streamCount).first { stream($0)?.pointee.codecpar.pointee.codec_type == type }
    }

    /// Probes the streams (decoding a few packets where the header does not say enough).
    /// A file's probe may read up to `probeWindow` of media (and `probeBytes`), not FFmpeg's
    /// 5 s: an MPEG-TS whose sound starts later than that said nothing of its sound ("Could
    /// not find codec parameters for stream 1 … unspecified sample format"), and its copy was
    /// refused as "aac 0 Hz 0 ch". FFmpeg stops as soon as every stream is described, so a
    /// file whose streams start together reads no more than before. A device's probe is
    /// left as it is (its first frames describe it).
    func findStreamInfo() -> Int32 {
        if let format = context.pointee.iformat, (format.pointee.flags & sr_format_flag_nofile()) == 0 {
            context.pointee.max_analyze_duration = max(context.pointee.max_analyze_duration, Demuxer.probeWindow)
            context.pointee.probesize = max(context.pointee.probesize, Demuxer.probeBytes)
        }
        return avformat_find_stream_info(context, nil)
    }

    /// How far into a file (microseconds of media, bytes) the probe may read to describe
    /// every stream.
    static let probeWindow: Int64 = 30_000_000
    static let probeBytes: Int64 = 50_000_000

    /// Reads the next packet into `packet`, the previous one released first: 0, `AVERROR_EOF`
    /// at the end, or another FFmpeg error.
    func read() -> Int32 {
        av_packet_unref(packet)
        return av_read_frame(context, packet)
    }
}

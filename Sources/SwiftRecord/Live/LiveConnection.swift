internal import CFFmpeg
import Foundation

/// One connection of a live output: a libavformat muxer on the output's URL, its streams
/// described from the encoders' parameters, with the output's interrupt callback so that
/// any blocking call (connect, handshake, a write into a full socket) gives up at the
/// output's deadline. Made, used and closed on the live output's thread only (a lost SRT
/// connection excepted: handed whole to a thread of its own to close, see `LiveOutput.abandon`).
final class LiveConnection {
    private let muxer: Muxer
    /// The packet each one sent is copied into (the muxer takes its data): one, reused.
    private let outgoing: Packet
    private let hls: HLSWriter?
    /// SRT: bytes its send buffer holds (`sndbuf`); 0 for the other kinds.
    let sendBufferBytes: Int64
    /// The packets written whose end lies within the last `sendBufferBytes` handed to the
    /// protocol or after them (their end position in the output, kind, size), oldest first.
    private var recent: [(end: Int64, isVideo: Bool, bytes: Int)] = []

    /// Connects and writes the header (for RTMP, after the server accepted the publish).
    init(output: LiveOutput, streams: [StreamParameters], settings: LiveOutput.Settings) throws(SwiftRecordError) {
        // HLS: every name it writes checked first, as every written file is, and every file
        // it opens through `HLSWriter`.
        let hls = try output.kind == .hls ? HLSWriter(files: HLSFiles(playlist: output.url.path, fragmentedMP4: settings.fragmentedMP4Segments,
                                                                      overwrite: settings.overwritesExistingFiles, what: "HLS output",
                                                                      howToReplace: "set overwritesExistingFiles"),
                                                      playlistLength: settings.playlistLength) : nil
        let (format, options) = LiveConnection.format(output, settings, hls?.files)
        let (address, sendBuffer) = LiveConnection.address(output, streams)
        sendBufferBytes = sendBuffer
        outgoing = try Packet()
        muxer = try Muxer(url: hls?.files.playlist.path ?? address, formatName: format)
        self.hls = hls
        if let hls {
            muxer.callbackOwner = hls
            hls.install(on: muxer.context)
        }
        muxer.displayURL = output.displayName
        muxer.context.pointee.interrupt_callback = AVIOInterruptCB(
            callback: { opaque in
                guard let opaque else { return 0 }
                return Unmanaged<LiveOutput>.fromOpaque(opaque).takeUnretainedValue().shouldInterrupt() ? 1 : 0
            },
            opaque: Unmanaged.passUnretained(output).toOpaque())
        do {
            for stream in streams { try stream.addStream(to: muxer.context) }
            try muxer.writeHeader(metadata: [:], options: options)
        } catch {
            muxer.abandon()
            hls?.abandonOpenFiles()
            throw LiveConnection.explain(hls?.failure ?? error, output)
        }
    }

    /// libavformat's muxer and its options for `output`.
    private static func format(_ output: LiveOutput, _ settings: LiveOutput.Settings, _ hls: HLSFiles?) -> (String, [String: String]) {
        switch output.kind {
        case .rtmp:
            // Not seekable: no duration and size to patch in at the end.
            return ("flv", ["flvflags": "no_duration_filesize"])
        case .srt:
            return ("mpegts", [:])
        case .hls:
            let seconds = Double(settings.segmentDuration.value) / Double(settings.segmentDuration.timescale)
            // No delete_segments: FFmpeg would remove old segments by name; `HLSWriter` removes
            // only those this output created.
            var options = ["hls_time": String(format: "%.3f", seconds), "hls_list_size": "\(settings.playlistLength)",
                           "hls_flags": "independent_segments+program_date_time"]
            if let hls {
                if let initName = hls.initName {
                    options["hls_segment_type"] = "fmp4"
                    options["hls_fmp4_init_filename"] = initName
                }
                options["hls_segment_filename"] = hls.segmentPattern
            }
            return ("hls", options)
        }
    }

    /// The address libavformat opens, and SRT's send buffer in bytes. SRT's live mode drops
    /// what is still unsent when the socket closes (linger 0): give it a second to deliver
    /// the end of the stream. Its default send buffer (about 12 MB) keeps taking packets for
    /// seconds after the listener is gone, until libsrt gives up on the silent peer (5 s;
    /// FFmpeg 5.1 cannot shorten that): with room for `srtSendBufferSeconds` of the stream
    /// it is full soon after the acknowledgements stop, and the write blocked on it is given
    /// up after `srtWriteSeconds`. A `sndbuf` or `linger` in the URL's query is kept.
    private static func address(_ output: LiveOutput, _ streams: [StreamParameters]) -> (String, Int64) {
        switch output.kind {
        case .hls: return (output.url.path, 0)
        case .rtmp: return (output.url.absoluteString, 0)
        case .srt:
            var text = output.url.absoluteString
            let query = (output.url.query ?? "").split(separator: "&")
            func given(_ name: String) -> Substring? {
                query.first { $0.hasPrefix(name + "=") }.map { $0.dropFirst(name.count + 1) }
            }
            func add(_ option: String) { text += (output.url.query == nil && !text.contains("?") ? "?" : "&") + option }
            if given("linger") == nil { add("linger=1") }
            if let bytes = given("sndbuf") {
                return (text, Int64(bytes) ?? srtDefaultSendBufferBytes)
            }
            let bytes = srtSendBufferBytes(streams)
            add("sndbuf=\(bytes)")
            return (text, bytes)
        }
    }

    /// SRT's send buffer holds this much of the stream, at its encoders' bit rates.
    static let srtSendBufferSeconds = 0.5
    /// A write into SRT's full send buffer is given up after this long (at most the connect timeout).
    static let srtWriteSeconds = 1.0
    /// libsrt's own send buffer (8192 packets of 1456 bytes), for a `sndbuf` that is not a number.
    static let srtDefaultSendBufferBytes: Int64 = 8192 * 1456

    /// `srtSendBufferSeconds` of the streams (a constant-quality video counted as 4 Mbit/s),
    /// at least 64 KB.
    static func srtSendBufferBytes(_ streams: [StreamParameters]) -> Int64 {
        let bitsPerSecond = streams.reduce(Int64(0)) { sum, s in sum + (s.bitRate > 0 ? s.bitRate : (s.isVideo ? 4_000_000 : 128_000)) }
        return max(64 * 1024, Int64(Double(bitsPerSecond) / 8 * srtSendBufferSeconds))
    }

    /// A failed connection's error, saying what to check.
    private static func explain(_ error: SwiftRecordError, _ output: LiveOutput) -> SwiftRecordError {
        let name = output.displayName
        let reason: String
        if error.isInterruption {
            reason = "no answer in time (the server is unreachable or stalled)"
        } else if output.kind == .rtmp {
            reason = "the server refused the connection or the publish (\(error.message)); check the host, port, application name and stream key"
        } else if output.kind == .srt {
            reason = "no SRT listener answered (\(error.message)); check the host and port"
        } else {
            reason = error.message
        }
        return SwiftRecordError(error.kind == .io ? .io : error.kind, operation: "connect \(name)", message: reason,
                                ffmpegCode: error.ffmpegCode)
    }

    /// Sends one packet.
    func write(_ packet: EncodedPacket) throws(SwiftRecordError) {
        try packet.copy(into: outgoing)
        do {
            try muxer.write(outgoing.pointer, stream: Int32(packet.track), from: packet.timeBase)
        } catch {
            throw hls?.failure ?? error
        }
        guard sendBufferBytes > 0, let pb = muxer.context.pointee.pb else { return }
        recent.append((avio_tell(pb), packet.isVideo, packet.data.count))
        let confirmedUpTo = pb.pointee.pos - sendBufferBytes
        if let stale = recent.firstIndex(where: { $0.end > confirmedUpTo }), stale > 0 {
            recent.removeFirst(stale)
        }
    }

    /// What was written to a lost connection and cannot have been acknowledged: SRT's
    /// packets whose end lies within the last `sendBufferBytes` handed to libsrt (those its
    /// send buffer can still have held, unacknowledged) or not yet handed over. Nothing for
    /// the other kinds.
    func unconfirmed() -> (videoFrames: Int, audioPackets: Int, bytes: Int64) {
        guard sendBufferBytes > 0, let pb = muxer.context.pointee.pb else { return (0, 0, 0) }
        let confirmedUpTo = pb.pointee.pos - sendBufferBytes
        var result = (videoFrames: 0, audioPackets: 0, bytes: Int64(0))
        for entry in recent where entry.end > confirmedUpTo {
            if entry.isVideo { result.videoFrames += 1 } else { result.audioPackets += 1 }
            result.bytes += Int64(entry.bytes)
        }
        return result
    }

    /// Writes the trailer (HLS: the final playlist) and closes.
    func finish() throws(SwiftRecordError) {
        do {
            try muxer.finish()
        } catch {
            throw hls?.failure ?? error
        }
        if let failure = hls?.failure { throw failure }
    }

    /// Throws away the bytes still buffered for a lost connection: a write that fails (the
    /// output's interrupt set) leaves the buffer's error set, and closing then writes nothing.
    func discardBuffered() {
        if let pb = muxer.context.pointee.pb { avio_flush(pb) }
    }

    /// Closes without the trailer (the connection is lost, or the output cancelled).
    func abandon() {
        muxer.abandon()
        hls?.abandonOpenFiles()
    }
}

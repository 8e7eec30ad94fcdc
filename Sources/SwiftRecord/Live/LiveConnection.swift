internal import CFFmpeg
import Foundation

/// One connection of a live output: a libavformat muxer on the output's URL, its streams
/// described from the encoders' parameters, with the output's interrupt callback so that
/// any blocking call (connect, handshake, a write into a full socket) gives up at the
/// output's deadline. Made, used and closed on the live output's thread only.
final class LiveConnection {
    private let muxer: Muxer

    /// Connects and writes the header (for RTMP, after the server accepted the publish).
    init(output: LiveOutput, streams: [StreamParameters], settings: LiveOutput.Settings) throws(SwiftRecordError) {
        let (format, options) = LiveConnection.format(output, settings)
        muxer = try Muxer(url: LiveConnection.address(output), formatName: format)
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
            throw LiveConnection.explain(error, output)
        }
    }

    /// libavformat's muxer and its options for `output`.
    private static func format(_ output: LiveOutput, _ settings: LiveOutput.Settings) -> (String, [String: String]) {
        switch output.kind {
        case .rtmp:
            // Not seekable: no duration and size to patch in at the end.
            return ("flv", ["flvflags": "no_duration_filesize"])
        case .srt:
            return ("mpegts", [:])
        case .hls:
            let stem = output.url.deletingPathExtension().lastPathComponent
            let directory = output.url.deletingLastPathComponent().path
            let seconds = Double(settings.segmentDuration.value) / Double(settings.segmentDuration.timescale)
            let rolling = settings.playlistLength > 0
            var options = ["hls_time": String(format: "%.3f", seconds), "hls_list_size": "\(settings.playlistLength)",
                           "hls_flags": "independent_segments+program_date_time" + (rolling ? "+delete_segments" : "")]
            if settings.fragmentedMP4Segments {
                options["hls_segment_type"] = "fmp4"
                options["hls_fmp4_init_filename"] = "\(stem)-init.mp4"
                options["hls_segment_filename"] = "\(directory)/\(stem)-%d.m4s"
            } else {
                options["hls_segment_filename"] = "\(directory)/\(stem)-%d.ts"
            }
            return ("hls", options)
        }
    }

    /// The address libavformat opens. SRT's live mode drops what is still unsent when the
    /// socket closes (linger 0): give it a second to deliver the end of the stream.
    private static func address(_ output: LiveOutput) -> String {
        switch output.kind {
        case .hls: return output.url.path
        case .rtmp: return output.url.absoluteString
        case .srt:
            let text = output.url.absoluteString
            if output.url.query?.contains("linger=") == true { return text }
            return text + (output.url.query == nil ? "?" : "&") + "linger=1"
        }
    }

    /// A failed connection's error, saying what to check.
    private static func explain(_ error: SwiftRecordError, _ output: LiveOutput) -> SwiftRecordError {
        let name = output.displayName
        let reason: String
        if error.ffmpegCode == sr_error_exit() {
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

    /// Sends one packet; returns its size.
    func write(_ packet: EncodedPacket) throws(SwiftRecordError) {
        let made = try packet.makePacket()
        var p: UnsafeMutablePointer<AVPacket>? = made
        defer { av_packet_free(&p) }
        try muxer.write(made, stream: Int32(packet.track), from: packet.timeBase)
    }

    /// Writes the trailer (HLS: the final playlist) and closes.
    func finish() throws(SwiftRecordError) {
        try muxer.finish()
    }

    /// Closes without the trailer (the connection is lost, or the output cancelled).
    func abandon() {
        muxer.abandon()
    }
}

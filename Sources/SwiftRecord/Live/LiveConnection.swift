internal import CFFmpeg
import Foundation

/// One connection of a live output: a libavformat muxer on the output's URL, its streams
/// described from the encoders' parameters, with the output's interrupt callback so that
/// any blocking call (connect, handshake, a write into a full socket) gives up at the
/// output's deadline. Made, used and closed on the live output's thread only.
final class LiveConnection {
    private let muxer: Muxer
    private let hls: HLSWriter?

    /// Connects and writes the header (for RTMP, after the server accepted the publish).
    init(output: LiveOutput, streams: [StreamParameters], settings: LiveOutput.Settings) throws(SwiftRecordError) {
        // HLS: every name it writes checked first, as every written file is, and every file
        // it opens through `HLSWriter`.
        let hls = try output.kind == .hls ? HLSWriter(files: HLSFiles(playlist: output.url.path, fragmentedMP4: settings.fragmentedMP4Segments,
                                                                      overwrite: settings.overwritesExistingFiles, what: "HLS output",
                                                                      howToReplace: "set overwritesExistingFiles"),
                                                      playlistLength: settings.playlistLength) : nil
        let (format, options) = LiveConnection.format(output, settings, hls?.files)
        muxer = try Muxer(url: hls?.files.playlist.path ?? LiveConnection.address(output), formatName: format)
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
        do {
            try muxer.write(made, stream: Int32(packet.track), from: packet.timeBase)
        } catch {
            throw hls?.failure ?? error
        }
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

    /// Closes without the trailer (the connection is lost, or the output cancelled).
    func abandon() {
        muxer.abandon()
        hls?.abandonOpenFiles()
    }
}

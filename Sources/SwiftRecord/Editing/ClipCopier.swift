internal import CFFmpeg
import Foundation

/// One piece of an exported clip: a file and the part of it taken (`start` to `end`, the
/// file's own times; `end` nil: to its end).
struct ClipPiece: Sendable {
    let path: String
    var start: MediaTime = .zero
    var end: MediaTime?
    /// Re-encode from `start` to the next key frame (a smart cut) instead of starting at the key frame before.
    var exact = false
}

/// What copying a clip did, piece by piece.
struct ClipCopyReport: Sendable {
    struct Piece: Sendable {
        /// Where the piece starts in its file: the key frame at or before the start asked for.
        var keyFrame: MediaTime
        /// Where it ends in its file (the end of its last picture, or of its sound without pictures).
        var end: MediaTime
        /// Where it starts in the output.
        var offset: MediaTime
    }
    var pieces: [Piece] = []
    var packets = 0
    /// Why an exact cut was made at the key frame before instead (`fallsBackToKeyFrame`).
    var exactCutRefusal: String?
    /// Pictures re-encoded at the start of an exact cut.
    var reencodedPictures = 0
    /// The first file's streams a clip does not carry.
    var leftOut: [String] = []
    /// The output's length: the sum of the pieces' lengths.
    var duration: MediaTime = .zero
}

/// Copies pieces of files into one output, packet for packet (no decoding): the engine of
/// `AssetExportSession`'s passthrough (`swift-record trim --copy`, `swift-record join`).
///
/// A piece's video starts at the key frame at or before its start (a copy can start nowhere
/// else) and ends with the last picture shown before its end, with the earlier-decoded
/// pictures that one needs; its sound runs from the picture start to the picture end. Pieces
/// follow one another without a gap: each starts where the one before ends, sound and
/// pictures moved alike, so they stay in step at every join. Every piece must have the
/// first's streams with the same settings (one sample description per track); otherwise
/// the copy is refused naming the setting (`ClipStreams.mismatch`).
final class ClipCopier {
    let pieces: [ClipPiece]
    let sources: [ClipStreams]
    private let isCancelled: () -> Bool
    private let progress: (Double) -> Void
    /// An exact cut that cannot be matched is made at the key frame before, and said in the report.
    var fallsBackToKeyFrame = false
    /// The output's tags; nil: the first file's.
    var metadata: [String: String]?

    init(pieces: [ClipPiece], isCancelled: @escaping () -> Bool = { false },
         progress: @escaping (Double) -> Void = { _ in }) throws(SwiftRecordError) {
        guard !pieces.isEmpty else {
            throw SwiftRecordError(.invalidArgument, operation: "export", message: "nothing to export: no piece of any file")
        }
        self.pieces = pieces
        var sources: [ClipStreams] = []
        for piece in pieces { sources.append(try ClipStreams(path: piece.path)) }
        for (i, s) in sources.enumerated().dropFirst() {
            if let difference = sources[0].mismatch(s) {
                throw SwiftRecordError(.unsupported, operation: "join",
                                       message: "\(s.path) cannot be copied after \(sources[0].path): \(difference); "
                                       + "a copy joins only recordings with the same settings (piece \(i + 1))")
            }
        }
        for (piece, source) in zip(pieces, sources) {
            if let length = source.duration, piece.start >= length {
                throw SwiftRecordError(.invalidArgument, operation: "export \(source.path)",
                                       message: String(format: "the part asked for starts at %.3f s, at or after the end of the file (%.3f s)",
                                                       piece.start.seconds, length.seconds))
            }
        }
        self.sources = sources
        self.isCancelled = isCancelled
        self.progress = progress
    }

    /// The sum of the pieces' lengths as asked (before they are moved to key frames).
    var plannedDuration: MediaTime {
        zip(pieces, sources).reduce(MediaTime.zero) { sum, p in
            let end = p.0.end ?? p.1.duration ?? p.0.start
            return sum + max(.zero, end - p.0.start)
        }
    }

    /// Writes the clip to `path` (`display` in messages) as a `fileType` file.
    func copy(to path: String, display: String, fileType: FileType) throws(SwiftRecordError) -> ClipCopyReport {
        let muxer = try Muxer(url: path, fileType: fileType, displayURL: display)
        var outputs: [Int32] = []
        var head: SmartCutHead?
        var refusal: String?
        do throws(SwiftRecordError) {
            head = try smartCutHead()
        } catch where error.kind == .unsupported && error.operation == "exact cut" && fallsBackToKeyFrame {
            refusal = error.message
        }
        for index in sources[0].streams {
            guard let stream = sources[0].demuxer.stream(index) else { continue }
            let added = try muxer.addStream(copying: stream)
            outputs.append(added)
            if let head, !head.samples.isEmpty, index == sources[0].video {
                try muxer.replaceExtradata(ofStream: added, with: head.configuration)
            }
        }
        var options: [String: String] = [:]
        if fileType == .mp4 || fileType == .mov { options["movflags"] = "+faststart" }
        do throws(SwiftRecordError) {
            try muxer.writeHeader(metadata: metadata ?? sources[0].metadata, options: options)
            var report = ClipCopyReport()
            report.exactCutRefusal = refusal
            report.reencodedPictures = head?.samples.count ?? 0
            report.leftOut = sources[0].leftOut
            let planned = max(plannedDuration.seconds, 0.001)
            var lastDecodeTimes = [Int64?](repeating: nil, count: outputs.count)
            for (piece, source) in zip(pieces, sources) {
                var writer = PieceWriter(source: source, piece: piece, offset: report.duration, outputs: outputs,
                                         muxer: muxer, lastDecodeTimes: lastDecodeTimes, head: report.pieces.isEmpty && refusal == nil ? head : nil,
                                         preRoll: fileType == .mp4 || fileType == .mov)
                let done = report.duration
                let written = try writer.run(isCancelled: isCancelled) { t in self.progress(min(1, (done + t).seconds / planned)) }
                lastDecodeTimes = writer.lastDecodeTimes
                report.pieces.append(.init(keyFrame: written.start, end: written.end, offset: report.duration))
                report.packets += written.packets
                report.duration = report.duration + (written.end - written.start)
            }
            try muxer.finish()
            progress(1)
            return report
        } catch {
            muxer.abandon()
            throw error
        }
    }
}

extension ClipCopier {
    /// The re-encoded head of an exact cut (the first piece only: one extra set of
    /// parameter sets per sample description), or nil for a copy.
    func smartCutHead() throws(SwiftRecordError) -> SmartCutHead? {
        guard let piece = pieces.first, piece.exact, piece.start > .zero, let v = sources[0].video,
              let stream = sources[0].demuxer.stream(v) else { return nil }
        // One extra set of parameter sets per sample description: a join copies from key frames.
        guard pieces.count == 1 else { return nil }
        let tb = stream.pointee.time_base
        return try SmartCutHead.make(path: piece.path, index: v, from: PieceWriter.ticks(piece.start, tb),
                                     end: piece.end.map { PieceWriter.ticks($0, tb) }, isCancelled: isCancelled)
    }
}

extension Muxer {
    /// Gives output stream `index` the codec configuration `bytes` (before the header).
    func replaceExtradata(ofStream index: Int32, with bytes: [UInt8]) throws(SwiftRecordError) {
        guard let par = context.pointee.streams[Int(index)]?.pointee.codecpar else { return }
        av_freep(&par.pointee.extradata)
        par.pointee.extradata_size = 0
        guard let data = av_mallocz(bytes.count + Int(sr_input_buffer_padding_size()))?.assumingMemoryBound(to: UInt8.self) else {
            throw SwiftRecordError(.ffmpeg, operation: "av_mallocz", message: "out of memory")
        }
        data.update(from: bytes, count: bytes.count)
        par.pointee.extradata = data
        par.pointee.extradata_size = Int32(bytes.count)
    }
}

/// The streams of one piece's file that a clip carries: its first video and first sound
/// (the others are named in `leftOut`, and said).
final class ClipStreams {
    let path: String
    let demuxer: Demuxer
    /// Stream indexes: the video first, then the sound.
    let streams: [Int]
    let video: Int?
    let audio: Int?
    /// The file's other streams (a second sound track, subtitles, attachments), not carried.
    let leftOut: [String]
    let duration: MediaTime?
    let metadata: [String: String]

    init(path: String) throws(SwiftRecordError) {
        self.path = path
        demuxer = try Demuxer(path: path, operation: "open \(path)", kind: .invalidData)
        // MP4/MOV headers say every parameter; other containers are probed (as `Remuxer` does).
        if !demuxer.formatName.hasPrefix("mov") || demuxer.context.hasVP9OfUnknownFormat {
            try check(demuxer.findStreamInfo(), "open \(path)", kind: .invalidData)
        }
        video = demuxer.firstStream(AVMEDIA_TYPE_VIDEO)
        audio = demuxer.firstStream(AVMEDIA_TYPE_AUDIO)
        streams = [video, audio].compactMap { $0 }
        // What a clip does not carry, named (no track goes missing unsaid).
        let opened = demuxer, carried = streams
        leftOut = (0..<opened.streamCount).filter { !carried.contains($0) }.compactMap { i in
            guard let par = opened.stream(i)?.pointee.codecpar.pointee else { return nil }
            let kind = av_get_media_type_string(par.codec_type).map { String(cString: $0) } ?? "data"
            return "stream \(i) (\(kind), \(String(cString: avcodec_get_name(par.codec_id))))"
        }
        guard !streams.isEmpty else {
            throw SwiftRecordError(.invalidData, operation: "open \(path)", message: "has no video or audio stream to export")
        }
        let d = demuxer.context.pointee.duration
        duration = d > 0 ? MediaTime(value: d, timescale: 1_000_000) : nil
        var tags: [String: String] = [:]
        var tag: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let t = av_dict_get(demuxer.context.pointee.metadata, "", tag, sr_dict_ignore_suffix()) {
            let key = String(cString: t.pointee.key)
            if !["major_brand", "minor_version", "compatible_brands", "encoder", "creation_time"].contains(key) {
                tags[key] = String(cString: t.pointee.value)
            }
            tag = t
        }
        metadata = tags
    }

    func parameters(_ index: Int?) -> AVCodecParameters? {
        index.flatMap { demuxer.stream($0)?.pointee.codecpar.pointee }
    }

    /// The first setting in which `other`'s streams differ from these (copied after one
    /// another, they would need two sample descriptions), or nil when they match.
    func mismatch(_ other: ClipStreams) -> String? {
        if (video == nil) != (other.video == nil) { return video == nil ? "it has pictures, the first has none" : "it has no pictures" }
        if (audio == nil) != (other.audio == nil) { return audio == nil ? "it has sound, the first has none" : "it has no sound" }
        for (kind, a, b) in [("video", parameters(video), other.parameters(other.video)),
                             ("audio", parameters(audio), other.parameters(other.audio))] {
            guard let a, let b else { continue }
            func name(_ id: AVCodecID) -> String { String(cString: avcodec_get_name(id)) }
            if a.codec_id != b.codec_id { return "\(kind) codec \(name(b.codec_id)), not \(name(a.codec_id))" }
            if kind == "video" {
                if a.width != b.width || a.height != b.height { return "picture size \(b.width)x\(b.height), not \(a.width)x\(a.height)" }
                if a.format != b.format { return "pixel format \(ClipStreams.pixelFormatName(b.format)), not \(ClipStreams.pixelFormatName(a.format))" }
                if a.profile != b.profile { return "video profile \(b.profile), not \(a.profile)" }
                if a.level != b.level { return "video level \(b.level), not \(a.level)" }
            } else {
                if a.sample_rate != b.sample_rate { return "sample rate \(b.sample_rate) Hz, not \(a.sample_rate) Hz" }
                if a.ch_layout.nb_channels != b.ch_layout.nb_channels { return "\(b.ch_layout.nb_channels) channels, not \(a.ch_layout.nb_channels)" }
            }
            let x = a.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(a.extradata_size))) } ?? []
            let y = b.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(b.extradata_size))) } ?? []
            if x != y { return "other \(kind) codec parameters (its \(kind == "video" ? "SPS/PPS" : "codec configuration") differs: another encoder or settings)" }
        }
        return nil
    }

    static func pixelFormatName(_ format: Int32) -> String {
        av_get_pix_fmt_name(AVPixelFormat(rawValue: format)).map { String(cString: $0) } ?? "\(format)"
    }
}

internal import CFFmpeg

extension MediaFileConverter {
    /// A stream of the input that is not in the output, and why.
    public struct OmittedStream: Sendable, CustomStringConvertible {
        public let stream: AssetReader.OtherStream
        /// Why it is left out ("a .webm file carries only WebVTT subtitles; …").
        public let reason: String

        public var description: String { "\(stream) (\(reason))" }
    }

    /// What becomes of the input's subtitle tracks and other streams in a `fileType` file:
    /// each subtitle track copied where the output's muxer takes its codec, else a text one
    /// re-encoded to the container's text codec, else left out; attachments carried into
    /// Matroska; everything else left out, each with its reason.
    static func planOtherStreams(of reader: AssetReader, into fileType: FileType)
        -> (plans: [TrackPlan], attachments: [AssetAttachment], omitted: [OmittedStream]) {
        var plans: [TrackPlan] = [], omitted: [OmittedStream] = []
        let text = SubtitleTranscoder.textCodec(for: fileType)
        for track in reader.subtitleTracks {
            let format = track.formatDescription
            if format.canBeCarried(in: fileType) {
                plans.append(.copy(track))
            } else if format.isTextSubtitle, avcodec_find_encoder_by_name(text) != nil,
                      avcodec_find_decoder(format.parameters.pointee.codec_id) != nil {
                plans.append(.convertSubtitle(track, codecName: text))
            } else if let stream = reader.otherStreams.first(where: { $0.index == track.trackID }) {
                let fits = FileType.allCases.filter { $0 != fileType && format.canBeCarried(in: $0) }.map { ".\($0)" }
                omitted.append(OmittedStream(stream: stream, reason: "a .\(fileType) file cannot carry \(format.codecName) subtitles"
                    + (format.isTextSubtitle ? "" : " (pictures, which cannot be turned into \(text) text)")
                    + (fits.isEmpty ? "" : "; \(fits.joined(separator: " or ")) can")))
            }
        }
        let carried = Set(plans.map(\.track.trackID))
        var attachments: [AssetAttachment] = []
        for stream in reader.otherStreams where !carried.contains(stream.index) {
            switch stream.kind {
            case "subtitle":
                if !omitted.contains(where: { $0.stream.index == stream.index }) {
                    omitted.append(OmittedStream(stream: stream, reason: "its codec is unknown to this FFmpeg"))
                }
            case "attachment":
                if let file = reader.attachments.first(where: { $0.fileName == stream.name }), fileType == .mkv {
                    attachments.append(file)
                } else {
                    omitted.append(OmittedStream(stream: stream, reason: fileType == .mkv ? "it has no file name or no bytes"
                                                 : "a .\(fileType) file cannot carry attachments; .mkv can"))
                }
            default:
                omitted.append(OmittedStream(stream: stream, reason: "\(stream.kind) streams are not converted"))
            }
        }
        return (plans, attachments, omitted)
    }
}

/// One subtitle track of a conversion: read from the file as far as the pictures and sound
/// have been read (never further ahead, so no packet of theirs is held in memory for a
/// subtitle far into the file), re-encoded where its plan says, and appended to its
/// pass-through input on the session's timeline. Used on the conversion thread only.
final class SubtitleLane {
    let output: AssetReaderTrackOutput
    let input: AssetWriterInput
    private let transcoder: SubtitleTranscoder?
    /// Subtitles shown before the session's start (the earliest picture or sound), left out.
    private(set) var skipped = 0

    init(_ plan: MediaFileConverter.TrackPlan, path: String) throws(SwiftRecordError) {
        let track = plan.track
        output = AssetReaderTrackOutput(track: track, outputSettings: nil)
        var format = track.formatDescription
        if case .convertSubtitle(_, let codec) = plan {
            let transcoder = try SubtitleTranscoder(from: format, to: codec, path: path)
            format = transcoder.format
            self.transcoder = transcoder
        } else {
            transcoder = nil
        }
        input = try AssetWriterInput(mediaType: .subtitle, outputSettings: nil, sourceFormatHint: format)
        // Three lower-case letters are a language the writer takes; anything else
        // ("en-US", a Matroska IETF tag) is left off rather than refused.
        if let code = track.languageCode, code.count == 3, code.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) }) {
            input.languageCode = code
        }
        input.metadata = AssetMetadata(title: track.title)
        input.queueDepth = MediaFileConverter.copyQueueDepth
    }

    /// Appends the subtitles read so far (all the rest with `toEnd`, reading on); returns
    /// the end of the last one from the session's start.
    func append(start: MediaTime, toEnd: Bool = false) throws(SwiftRecordError) -> MediaTime {
        var end = MediaTime.zero
        while let sample = try toEnd ? output.copyNextSampleBuffer() : output.copyNextSampleBufferIfRead() {
            guard case .compressed(let read) = sample else { continue }
            guard read.presentationTimeStamp >= start else {
                skipped += 1
                continue
            }
            guard let written = try transcoder.map({ (t) throws(SwiftRecordError) in try t.transcode(read) }) ?? read else { continue }
            try input.append(.compressed(written))
            end = max(end, written.presentationTimeStamp + written.duration - start)
        }
        return end
    }
}

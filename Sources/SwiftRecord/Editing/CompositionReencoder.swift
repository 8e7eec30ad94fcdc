import Foundation

/// Re-encodes tracks laid out as a composition (or a file's, whole) into one file with a
/// preset: the engine of `AssetExportSession`'s re-encoding presets. An `AssetReader` per
/// stretch feeds an `AssetWriter` (the writer's encoders, the file rules of every writer),
/// the samples interleaved by time.
///
/// Everything is brought to the first stretch's settings: the pictures to its size fitted
/// into the preset's box (a stretch of another size is scaled to it; of another aspect, fitted
/// inside it on black), its frame rate for
/// black stretches; the sound to its rate (a usual one, else 48 kHz) and up to two channels.
struct CompositionReencoder {
    let tracks: [CompositionTrackContent]
    let preset: ExportPreset
    let videoSettings: VideoSettings?
    let frameRate: Rational
    let transform: VideoTransform
    let audioSettings: AudioSettings?

    init(tracks: [CompositionTrackContent], preset: ExportPreset) throws(SwiftRecordError) {
        self.tracks = tracks
        self.preset = preset
        func first(_ kind: MediaType) throws(SwiftRecordError) -> AssetReaderTrack? {
            guard let s = tracks.first(where: { $0.mediaType == kind })?.segments.first(where: { $0.path != nil }),
                  let path = s.path else { return nil }
            let reader = try AssetReader(url: URL(fileURLWithPath: path))
            return reader.tracks.first { $0.trackID == s.trackID && $0.mediaType == kind } ?? reader.tracks.first { $0.mediaType == kind }
        }
        let video = try first(.video), audio = try first(.audio)
        frameRate = video?.nominalFrameRate.flatMap { $0.numerator > 0 && $0.doubleValue <= 240 ? $0 : nil } ?? Rational(30, 1)!
        transform = video?.preferredTransform ?? .identity
        if tracks.contains(where: { $0.mediaType == .video }) {
            // A composition of empty video stretches only: the preset's box, else 640×360.
            let source = video?.naturalSize ?? preset.box ?? VideoSize(width: 640, height: 360)
            guard source.width > 0, source.height > 0 else {
                throw SwiftRecordError(.invalidData, operation: "export", message: "\(video.map { "\($0)" } ?? "the video") has no picture size")
            }
            let size = preset.size(for: source)
            videoSettings = VideoSettings(codec: preset.codec, width: size.width, height: size.height, rateControl: preset.rateControl,
                                          maxKeyFrameInterval: max(1, Int((2 * frameRate.doubleValue).rounded())))
        } else {
            videoSettings = nil
        }
        if tracks.contains(where: { $0.mediaType == .audio }) {
            let rate = audio.map(\.sampleRate).flatMap { [44_100, 48_000, 32_000, 96_000].contains($0) ? $0 : nil } ?? 48_000
            audioSettings = AudioSettings(codec: .aac, sampleRate: rate, channelLayout: ChannelLayout(channelCount: min(max(1, audio?.channelCount ?? 2), 2)),
                                          bitRate: preset.audioBitRate)
        } else {
            audioSettings = nil
        }
    }

    /// How long the output lasts: its longest track.
    var duration: MediaTime { tracks.map(\.duration).max() ?? .zero }

    /// Writes the file; throws `.cancelled` when `isCancelled` turns true (the writer then
    /// leaves nothing at `url`). Returns the output's length.
    func export(to url: URL, as fileType: FileType, overwrite: Bool, metadata: AssetMetadata?,
                isCancelled: @escaping @Sendable () -> Bool, progress: @escaping @Sendable (Double) -> Void) async throws(SwiftRecordError) -> MediaTime {
        let writer = AssetWriter(outputURL: url, fileType: fileType)
        writer.overwritesExistingFile = overwrite
        writer.shouldOptimizeForNetworkUse = fileType == .mp4 || fileType == .mov
        if let metadata { writer.metadata = metadata }
        let job = WriterJob(writer: writer, outputPath: url.path, allowPartial: false)
        let plan = self
        do {
            _ = try await job.run(threadName: "swift-record.export") { () throws(SwiftRecordError) in
                try plan.pump(writer, isCancelled: isCancelled, progress: progress)
            }
        } catch {
            throw error.error
        }
        return duration
    }

    /// On the export's thread: reads every lane and appends each sample to its input, the
    /// lane whose next sample comes first each time.
    private func pump(_ writer: AssetWriter, isCancelled: () -> Bool, progress: (Double) -> Void) throws(SwiftRecordError) {
        var lanes: [ReencodeLane] = []
        var inputs: [AssetWriterInput] = []
        for track in tracks {
            if track.mediaType == .video, let v = videoSettings {
                lanes.append(try VideoReencodeLane(track, size: VideoSize(width: v.width, height: v.height), frameRate: frameRate))
                let input = AssetWriterInput(outputSettings: v)
                input.transform = transform
                input.queueDepth = WriterJob.pictureQueueDepth
                inputs.append(input)
            } else if track.mediaType == .audio, let a = audioSettings {
                lanes.append(AudioReencodeLane(track, format: AudioFormat(sampleType: .f32, isPlanar: true, sampleRate: a.sampleRate,
                                                                          channelLayout: a.channelLayout)))
                inputs.append(AssetWriterInput(mediaType: .audio, outputSettings: a))
            }
        }
        for input in inputs { try writer.add(input) }
        defer {
            for lane in lanes { lane.cancel() }
            for input in inputs { input.markAsFinished() }
        }
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let total = max(duration.seconds, 0.001)
        var times: [MediaTime?] = []
        for lane in lanes { times.append(try lane.peekTime()) }
        var count = 0
        while true {
            if isCancelled() { throw SwiftRecordError(.cancelled, operation: "export", message: "cancelled") }
            var pick: Int?
            for (i, t) in times.enumerated() {
                guard let t else { continue }
                if let p = pick, let q = times[p], q <= t { continue }
                pick = i
            }
            guard let i = pick, let sample = try lanes[i].next() else { break }
            try inputs[i].append(sample)
            times[i] = try lanes[i].peekTime()
            if times[i] == nil { inputs[i].markAsFinished() }
            count += 1
            if count % 16 == 0 { progress(min(1, sample.presentationTimeStamp.seconds / total)) }
        }
    }
}

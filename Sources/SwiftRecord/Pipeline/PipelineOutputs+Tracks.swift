/// The writing pipeline's tracks as opened: each one's encoder (none for pass-through)
/// and stream, and for Matroska and WebM the step that turns its pictures.
extension PipelineOutputs {
    /// One opened track: its encoder (or none), its stream, and how its samples are timed.
    struct Track {
        /// The video encoder, or an audio track's (inside its converter); nil for a
        /// pass-through track, whose compressed samples are muxed as they come.
        let encoder: TrackEncoder?
        let audio: AudioTrackEncoder?
        let stream: Int32
        let faults: FaultInjection
        /// The time base of the ticks the track's samples come in: its encoder's, or the
        /// source format's for pass-through.
        let timeBase: Rational
        let isVideo: Bool
        let mediaType: MediaType
        /// Matroska and WebM, which have no display matrix: the input's transform, applied
        /// to each picture before it is encoded, and the buffers it writes into.
        var pixelTransform: (transform: FrameTransform, pool: PixelBufferPool)? = nil
        /// What a live output needs to describe the track.
        let parameters: StreamParameters
        var framesEncoded = 0
    }

    /// Opens `track`'s encoder (none for pass-through) and adds its stream to `muxer`.
    static func open(_ track: PipelineConfiguration.Track, into muxer: Muxer, fileType: FileType) throws(SwiftRecordError) -> Track {
        switch track.settings {
        case .video(let settings):
            let (encoded, pixelTransform) = try PipelineOutputs.pixelTransform(track.transform, settings, fileType)
            let codec = try EncoderContext.video(settings: encoded, globalHeader: muxer.wantsGlobalHeader)
            let stream = try muxer.addStream(for: codec, transform: pixelTransform == nil ? track.transform : .identity,
                                             metadata: track.metadata)
            let encoder = TrackEncoder(codec: codec)
            encoder.keyFrameInterval = settings.maxKeyFrameIntervalDuration.map { seconds in
                let base = codec.timeBase
                return max(1, Int64((seconds * Double(base.denominator) / Double(max(1, base.numerator))).rounded()))
            }
            encoder.encoderKeyFramePeriod = settings.maxKeyFrameInterval.flatMap { $0 > 0 ? $0 : nil }
            return Track(encoder: encoder, audio: nil, stream: stream, faults: track.faults, timeBase: codec.timeBase,
                         isVideo: true, mediaType: .video, pixelTransform: pixelTransform, parameters: StreamParameters(codec))
        case .audio(let settings):
            let codec = try EncoderContext.audio(settings: settings, globalHeader: muxer.wantsGlobalHeader)
            let stream = try muxer.addStream(for: codec, transform: .identity, metadata: track.metadata)
            let audio = try AudioTrackEncoder(codec: codec, mixVolumes: track.mixVolumes)
            muxer.setPriming(codec.priming, codec: settings.codec, timeBase: codec.timeBase, stream: stream)
            return Track(encoder: audio.track, audio: audio, stream: stream, faults: track.faults,
                         timeBase: codec.timeBase, isVideo: false, mediaType: .audio, parameters: StreamParameters(codec))
        case .passThrough(let format):
            let stream = try muxer.addStream(copying: format, transform: track.transform, metadata: track.metadata)
            return Track(encoder: nil, audio: nil, stream: stream, faults: track.faults, timeBase: format.sampleTimeBase,
                         isVideo: format.mediaType == .video, mediaType: format.mediaType, parameters: StreamParameters(format))
        }
    }

    /// The settings the encoder opens with and, for a container without a display matrix
    /// (Matroska, WebM) and a transform that turns or mirrors, the step that does it to
    /// the pictures: a quarter turn swaps the encoded width and height.
    static func pixelTransform(_ transform: VideoTransform, _ settings: VideoSettings, _ fileType: FileType)
        throws(SwiftRecordError) -> (VideoSettings, (transform: FrameTransform, pool: PixelBufferPool)?) {
        guard fileType == .mkv || fileType == .webm, let q = transform.quarterTurns, q.turns != 0 || q.mirrored else {
            return (settings, nil)
        }
        var encoded = settings
        if transform.swapsSides { (encoded.width, encoded.height) = (settings.height, settings.width) }
        let step = try FrameTransform(sourceSize: VideoSize(width: settings.width, height: settings.height),
                                      sourceFormat: settings.pixelFormat, crop: nil, scaledSize: nil,
                                      rotation: q.turns * 90, mirrored: q.mirrored, destinationFormat: settings.pixelFormat,
                                      destinationSize: VideoSize(width: encoded.width, height: encoded.height),
                                      color: settings.colorProperties)
        // Each buffer goes back once the encoder has taken its copy (the encoders here copy
        // the picture at send); a few spare for one that keeps a reference a little longer.
        let pool = try PixelBufferPool(width: encoded.width, height: encoded.height, pixelFormat: settings.pixelFormat,
                                       maximumBufferCount: 8)
        return (encoded, (step, pool))
    }
}

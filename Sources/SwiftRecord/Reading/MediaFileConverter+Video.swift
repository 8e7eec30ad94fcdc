extension MediaFileConverter {
    static func videoSettings(for track: AssetReaderTrack, options: Options, fileType: FileType) throws(SwiftRecordError) -> VideoSettings {
        let codec = options.codec ?? fileType.defaultVideoCodec
        guard fileType.supports(codec) else {
            throw fileType.refusal(of: codec, operation: "output")
        }
        let size = track.naturalSize
        guard size.width > 0, size.height > 0 else {
            throw SwiftRecordError(.invalidData, operation: "open \(options.input)", message: "\(track) has no picture size")
        }
        // 4:2:0 needs even sides: an odd side is encoded at the next even size, its last
        // column or row repeated (`EvenPadding`), as for raw and Y4M input.
        let even = VideoSize(width: (size.width + 1) & ~1, height: (size.height + 1) & ~1)
        let fps = track.nominalFrameRate?.doubleValue ?? 30
        // The input's times are kept as they are (90 kHz clock): a variable-rate recording
        // stays one.
        return VideoSettings(codec: codec, width: even.width, height: even.height, pixelFormat: .yuv420p,
                             rateControl: options.rateControl,
                             maxKeyFrameInterval: options.keyFrameInterval ?? max(1, Int((2 * fps).rounded())),
                             expectedSourceFrameRate: nil, profile: nil, preset: options.preset, threads: options.threads)
    }

    /// What becomes of a re-encoded track's pictures: read at the track's own size, and
    /// padded to the encoder's (even) size when a side is odd.
    static func pictureSteps(for track: AssetReaderTrack, _ settings: VideoSettings) throws(SwiftRecordError)
        -> (read: AssetReaderOutputSettings, padding: EvenPadding?) {
        let size = track.naturalSize, encoded = VideoSize(width: settings.width, height: settings.height)
        guard size != encoded else { return (.video(pixelFormat: .yuv420p, size: encoded), nil) }
        return (.video(pixelFormat: .yuv420p, size: size), try EvenPadding(from: size, to: encoded, settings: settings))
    }
}

/// Pads decoded yuv420p pictures of an odd side to the encoder's even size, repeating the
/// last column and row (`FrameTransform` with nothing but padding: one copy). Used by the
/// conversion thread only.
final class EvenPadding {
    private let transform: FrameTransform
    private let pool: PixelBufferPool
    private let size: VideoSize

    init(from source: VideoSize, to encoded: VideoSize, settings: VideoSettings) throws(SwiftRecordError) {
        transform = try FrameTransform(sourceSize: source, sourceFormat: .yuv420p, crop: nil, scaledSize: nil, rotation: 0,
                                       destinationFormat: .yuv420p, destinationSize: encoded, color: settings.colorProperties)
        // The writer's queue holds what was appended; beyond that a fresh buffer is made.
        pool = try PixelBufferPool(width: encoded.width, height: encoded.height, pixelFormat: .yuv420p,
                                   maximumBufferCount: WriterJob.pictureQueueDepth + 4)
        size = encoded
    }

    /// `sample`'s picture padded; any other sample as it is.
    func apply(_ sample: MediaSample) throws(SwiftRecordError) -> MediaSample {
        guard case .video(let picture) = sample else { return sample }
        let out: PixelBuffer
        if let pooled = pool.makePixelBufferIfAvailable() {
            out = pooled
        } else {
            out = try PixelBuffer(width: size.width, height: size.height, pixelFormat: .yuv420p)
        }
        try transform.apply(picture.pixelBuffer, into: out)
        return .video(SampleBuffer(pixelBuffer: out, presentationTimeStamp: picture.presentationTimeStamp))
    }
}

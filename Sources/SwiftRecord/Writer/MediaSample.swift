/// One sample as a reader's track output gives it and a writer input takes it: a decoded
/// picture, decoded sound, or a compressed sample to pass through; also what a
/// ``CaptureDataOutput`` and ``ScreenRecorder`` hand over (a picture or sound, stamped on
/// the capture clock). Apple's
/// `copyNextSampleBuffer()` returns a `CMSampleBuffer`, which holds any of the three;
/// here each kind is its own type, and this names the one a sample is.
public enum MediaSample: Sendable {
    /// A decoded picture (`CMSampleBufferGetImageBuffer`).
    case video(SampleBuffer)
    /// Decoded PCM.
    case audio(AudioSampleBuffer)
    /// Compressed data, as the file held it (`CMSampleBufferGetDataBuffer`).
    case compressed(CompressedSampleBuffer)

    /// When the sample is shown (`CMSampleBufferGetPresentationTimeStamp`).
    public var presentationTimeStamp: MediaTime {
        switch self {
        case .video(let s): return s.presentationTimeStamp
        case .audio(let a): return a.presentationTimeStamp
        case .compressed(let c): return c.presentationTimeStamp
        }
    }

    /// The picture of a decoded video sample (`CMSampleBufferGetImageBuffer`); nil otherwise.
    public var pixelBuffer: PixelBuffer? {
        if case .video(let s) = self { return s.pixelBuffer }
        return nil
    }
}

extension AssetWriterInput {
    /// A pass-through input (`AVAssetWriterInput(mediaType:outputSettings: nil,
    /// sourceFormatHint:)`): compressed samples (a reader's track output with
    /// `outputSettings: nil`) are muxed as they are, times and key-frame flags kept, never
    /// decoded. Unlike Apple's, the hint is required: the container's header, written by
    /// `startWriting()`, describes the track before any sample comes. With settings, the
    /// input encodes, as `init(mediaType:outputSettings:)` does.
    ///
    /// Whether the output's container can carry the codec is checked by the writer's
    /// `canAdd(_:)` (H.264 cannot go in WebM, for one).
    public convenience init(mediaType: MediaType, outputSettings: [String: Any]?, sourceFormatHint: FormatDescription?) throws(SwiftRecordError) {
        if let outputSettings {
            try self.init(mediaType: mediaType, outputSettings: outputSettings)
            return
        }
        guard let sourceFormatHint else {
            throw SwiftRecordError(.invalidArgument, operation: "AssetWriterInput",
                                   message: "a pass-through input (outputSettings: nil) needs the samples' format as sourceFormatHint (a reader track's formatDescription): the file's header describes the track before the first sample")
        }
        guard sourceFormatHint.mediaType == mediaType else {
            throw SwiftRecordError(.invalidArgument, operation: "AssetWriterInput",
                                   message: "mediaType is \(mediaType), but sourceFormatHint describes \(sourceFormatHint.mediaType) (\(sourceFormatHint))")
        }
        self.init(passingThrough: sourceFormatHint)
    }

    /// Appends a compressed sample to a pass-through input, waiting while the queue is
    /// full. Its decode time must come after the previous sample's.
    public func append(_ sample: CompressedSampleBuffer) throws(SwiftRecordError) {
        _ = try enqueue(.compressed(sample, decodeTicks: 0), at: sample.presentationTimeStamp, waiting: true)
    }

    /// Appends a compressed sample, suspending while the queue is full.
    public func append(_ sample: CompressedSampleBuffer) async throws(SwiftRecordError) {
        while try enqueue(.compressed(sample, decodeTicks: 0), at: sample.presentationTimeStamp, waiting: false) == .full {
            await suspendUntilRoom()
        }
    }

    /// Appends whatever a reader's track output gave (`append(_:)` with a `CMSampleBuffer`):
    /// a picture to a video input, PCM to an audio input, a compressed sample to a
    /// pass-through input. Waits while the queue is full.
    public func append(_ sample: MediaSample) throws(SwiftRecordError) {
        switch sample {
        case .video(let s): try append(s)
        case .audio(let a): try append(a)
        case .compressed(let c): try append(c)
        }
    }

    /// Appends a reader's sample, suspending while the queue is full.
    public func append(_ sample: MediaSample) async throws(SwiftRecordError) {
        switch sample {
        case .video(let s): try await append(s)
        case .audio(let a): try await append(a)
        case .compressed(let c): try await append(c)
        }
    }
}

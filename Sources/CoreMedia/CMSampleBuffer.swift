// Core Media's sample buffers as Apple's samples call them: a `CMSampleBuffer` is
// SwiftRecord's `MediaSample` (a picture, PCM, or a compressed sample).

/// A sample with its time (`CMSampleBuffer`): SwiftRecord's `MediaSample`.
public typealias CMSampleBuffer = MediaSample

/// When the sample is shown (`CMSampleBufferGetPresentationTimeStamp`).
public func CMSampleBufferGetPresentationTimeStamp(_ sbuf: CMSampleBuffer) -> CMTime { sbuf.presentationTimeStamp }
/// The picture of a video sample, nil for sound (`CMSampleBufferGetImageBuffer`).
public func CMSampleBufferGetImageBuffer(_ sbuf: CMSampleBuffer) -> CVImageBuffer? { sbuf.pixelBuffer }
/// How long the sample lasts (`CMSampleBufferGetDuration`): sound's length, a compressed
/// sample's duration; `kCMTimeInvalid` for a captured picture, as Apple's capture gives.
public func CMSampleBufferGetDuration(_ sbuf: CMSampleBuffer) -> CMTime { sbuf.duration }
/// Sound frames in an audio sample, 1 for a picture (`CMSampleBufferGetNumSamples`).
public func CMSampleBufferGetNumSamples(_ sbuf: CMSampleBuffer) -> CMItemCount { sbuf.numSamples }
/// Always true: a sample here is whole (`CMSampleBufferIsValid`).
public func CMSampleBufferIsValid(_ sbuf: CMSampleBuffer) -> Bool { true }
/// Always true: samples here carry their data (`CMSampleBufferDataIsReady`).
public func CMSampleBufferDataIsReady(_ sbuf: CMSampleBuffer) -> Bool { true }

extension MediaSample {
    /// The picture of a video sample (`imageBuffer`).
    public var imageBuffer: CVImageBuffer? { pixelBuffer }
    /// How long the sample lasts (`duration`); see `CMSampleBufferGetDuration`.
    public var duration: CMTime {
        switch self {
        case .video: .invalid
        case .audio(let sound): sound.duration
        case .compressed(let sample): sample.duration
        }
    }
    /// Sound frames, or 1 (`numSamples`).
    public var numSamples: CMItemCount {
        if case .audio(let sound) = self { return sound.frameCount }
        return 1
    }
}

import Foundation

/// What kind of sample a capture hands over: ReplayKit's `RPSampleBufferType`, which
/// keeps the screen, the app's sound and the microphone apart.
public enum SampleBufferType: String, Sendable, CaseIterable {
    /// A picture (ReplayKit's `.video`).
    case video
    /// Sound a program plays: the desktop's, or one program's (`.audioApp`).
    case audioApp
    /// Sound from a microphone (`.audioMic`).
    case audioMic
}

/// A source added to a ``MediaCaptureSession``: the pictures (a screen, the synthetic
/// scene, a file) or one sound source (`AVCaptureDeviceInput`, `AVCaptureScreenInput`).
public final class CaptureInput: Sendable {
    /// What the input captures.
    public enum Source: Sendable {
        case video(any CaptureSource)
        case audio(any AudioCaptureSource)
    }

    public let source: Source
    /// The kind its samples are handed over as: `.video` for pictures; `.audioApp` or
    /// `.audioMic` for sound, as the caller says.
    public let sampleType: SampleBufferType
    /// The track's title in a movie file (the container's title and handler name); nil:
    /// "Desktop" for `.audioApp`, "Microphone" for `.audioMic`.
    public let title: String?

    /// The pictures of `source`: the session's pictures (the first picture input), or a
    /// track of its own titled `title` beside them (a camera beside the screen).
    public init(source: any CaptureSource, title: String? = nil) {
        self.source = .video(source)
        sampleType = .video
        self.title = title
    }

    /// The sound of `source`, handed over as `type` (`.audioApp` or `.audioMic`).
    public init(audioSource: any AudioCaptureSource, type: SampleBufferType = .audioMic, title: String? = nil) {
        source = .audio(audioSource)
        sampleType = type == .video ? .audioMic : type
        self.title = title
    }

    /// The movie file's track title for this input: `title`, or the type's default
    /// ("Desktop", "Microphone"; "Camera" for a picture source on a track beside the first).
    public var trackTitle: String {
        title ?? (sampleType == .video ? "Camera" : sampleType == .audioApp ? "Desktop" : "Microphone")
    }
}

/// Something a ``MediaCaptureSession`` hands what it captures to: a movie file
/// (``CaptureMovieFileOutput``) or a handler (``CaptureDataOutput``).
public protocol CaptureOutput: AnyObject, Sendable {}

/// A movie file the session records into (`AVCaptureMovieFileOutput`): the pictures on the
/// session's timeline (constant frame rate, pauses without gaps) and each sound input on a
/// track of its own, titled, brought to the pictures' clock.
public final class CaptureMovieFileOutput: CaptureOutput {
    /// Where the file is written; its extension chooses the container unless `fileType` does.
    public let outputURL: URL
    public let fileType: FileType?
    /// The pictures' encoder settings; nil: H.264 at 2 Mb/s, the pictures' size, a key frame
    /// every 2 s.
    public let videoSettings: VideoSettings?
    /// Every sound track's settings; nil: the container's usual codec (AAC; Opus in WebM),
    /// 48 kHz stereo.
    public let audioSettings: AudioSettings?
    /// A crash-safe file: fragments of this length (MP4, MOV), nil: the container's default.
    public let movieFragmentInterval: MediaTime?

    private let result = Locked<CaptureStatistics?>(nil)

    public init(outputURL: URL, fileType: FileType? = nil, videoSettings: VideoSettings? = nil,
                audioSettings: AudioSettings? = nil, movieFragmentInterval: MediaTime? = MediaTime(seconds: 1)) {
        self.outputURL = outputURL
        self.fileType = fileType
        self.videoSettings = videoSettings
        self.audioSettings = audioSettings
        self.movieFragmentInterval = movieFragmentInterval
    }

    /// What the recording did, once the session stopped.
    public var statistics: CaptureStatistics? { result.withLock { $0 } }

    func finished(_ statistics: CaptureStatistics) { result.withLock { $0 = statistics } }
}

/// Hands every sample of the chosen kinds to a handler on a queue (a ``MediaSample``, a
/// picture or sound, with its time stamp on the capture clock: the monotonic host clock for
/// a live source): the
/// `AVCaptureVideoDataOutput`/`AVCaptureAudioDataOutput` delegate pattern. Samples carry the
/// capture clock's time stamps, in capture order per input.
///
/// Pictures come from the capturing source's pool: a handler that keeps them (appending
/// them to a writer is fine: the writer's queue holds them until encoded) keeps them from
/// the source, and while more than `maximumPicturesInFlight` wait for the handler, newer
/// pictures are dropped and counted (`alwaysDiscardsLateVideoFrames`). Sound is never dropped.
public final class CaptureDataOutput: CaptureOutput {
    /// The kinds handed over.
    public let sampleTypes: Set<SampleBufferType>
    /// Pictures handed over but not yet returned from the handler, beyond which newer ones are dropped.
    public let maximumPicturesInFlight: Int

    private struct State {
        var handler: (@Sendable (MediaSample, SampleBufferType) -> Void)?
        var queue: DispatchQueue?
        var picturesInFlight = 0
        var delivered: [SampleBufferType: Int] = [:]
        var droppedPictures = 0
    }
    private let state = Locked(State())

    /// An output for `sampleTypes` (all of them by default; `[.video]` is
    /// `AVCaptureVideoDataOutput`, `[.audioApp, .audioMic]` `AVCaptureAudioDataOutput`).
    public init(sampleTypes: Set<SampleBufferType> = Set(SampleBufferType.allCases), maximumPicturesInFlight: Int = 3) {
        self.sampleTypes = sampleTypes
        self.maximumPicturesInFlight = max(1, maximumPicturesInFlight)
    }

    /// Where samples go (`setSampleBufferDelegate(_:queue:)`): `handler`, called on `queue`
    /// (a serial queue keeps each kind in order).
    public func setSampleBufferHandler(queue: DispatchQueue, _ handler: @escaping @Sendable (MediaSample, SampleBufferType) -> Void) {
        state.withLock { s in
            s.handler = handler
            s.queue = queue
        }
    }

    /// Samples handed to the handler so far, by kind.
    public var deliveredSamples: [SampleBufferType: Int] { state[\.delivered] }
    /// Pictures dropped because the handler had `maximumPicturesInFlight` still to handle.
    public var droppedPictures: Int { state[\.droppedPictures] }

    /// Hands `sample` over, on the handler's queue (from a capturing thread).
    func deliver(_ sample: MediaSample, as type: SampleBufferType) {
        guard sampleTypes.contains(type) else { return }
        let isPicture = type == .video
        let target = state.withLock { s -> (@Sendable (MediaSample, SampleBufferType) -> Void, DispatchQueue)? in
            guard let handler = s.handler, let queue = s.queue else { return nil }
            if isPicture {
                guard s.picturesInFlight < maximumPicturesInFlight else {
                    s.droppedPictures += 1
                    return nil
                }
                s.picturesInFlight += 1
            }
            s.delivered[type, default: 0] += 1
            return (handler, queue)
        }
        guard let (handler, queue) = target else { return }
        queue.async { [state] in
            handler(sample, type)
            if isPicture { state.withLock { $0.picturesInFlight -= 1 } }
        }
    }
}

/// A picture source that hands every picture it delivers to data outputs too.
final class TappedCaptureSource: CaptureSource {
    let base: any CaptureSource
    let outputs: [CaptureDataOutput]

    init(_ base: any CaptureSource, outputs: [CaptureDataOutput]) {
        self.base = base
        self.outputs = outputs
    }

    var identifier: String { base.identifier }
    var nativeSize: VideoSize { base.nativeSize }
    var pixelFormat: PixelFormat { base.pixelFormat }
    var nativeFrameRate: Rational? { base.nativeFrameRate }
    var isLive: Bool { base.isLive }
    var captureDescription: String? { base.captureDescription }
    var notices: [String] { base.notices }
    var grabStatistics: GrabStatistics? { base.grabStatistics }
    func start() throws { try base.start() }
    func stop() { base.stop() }

    func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        guard let frame = try base.nextFrame(from: pool) else { return nil }
        let sample = MediaSample.video(SampleBuffer(pixelBuffer: frame.pixelBuffer, presentationTimeStamp: frame.captureTime))
        for output in outputs { output.deliver(sample, as: .video) }
        return frame
    }
}

/// A sound source that hands every buffer it delivers to data outputs too, as `type`.
final class TappedAudioSource: AudioCaptureSource {
    let base: any AudioCaptureSource
    let type: SampleBufferType
    let outputs: [CaptureDataOutput]

    init(_ base: any AudioCaptureSource, type: SampleBufferType, outputs: [CaptureDataOutput]) {
        self.base = base
        self.type = type
        self.outputs = outputs
    }

    var identifier: String { base.identifier }
    var format: AudioFormat { base.format }
    var isLive: Bool { base.isLive }
    var captureDescription: String? { base.captureDescription }
    var endReason: String? { base.endReason }
    func start() throws { try base.start() }
    func interrupt() { base.interrupt() }
    func stop() { base.stop() }

    func nextChunk() throws -> CapturedAudio? {
        guard let chunk = try base.nextChunk() else { return nil }
        for output in outputs { output.deliver(.audio(chunk.samples), as: type) }
        return chunk
    }
}

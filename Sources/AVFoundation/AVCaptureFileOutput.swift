import Foundation

/// Told when a file output starts and finishes a file (`AVCaptureFileOutputRecordingDelegate`).
/// Called on a serial queue of the output's, as Apple's.
public protocol AVCaptureFileOutputRecordingDelegate: AnyObject {
    /// The file is finished (or could not be written: `error` says why; what was recorded
    /// before an error is kept, playable).
    func fileOutput(_ output: AVCaptureFileOutput, didFinishRecordingTo outputFileURL: URL,
                    from connections: [AVCaptureConnection], error: (any Error)?)
    /// The file has started (optional).
    func fileOutput(_ output: AVCaptureFileOutput, didStartRecordingTo fileURL: URL, from connections: [AVCaptureConnection])
}

extension AVCaptureFileOutputRecordingDelegate {
    /// Optional in Apple's protocol: does nothing.
    public func fileOutput(_ output: AVCaptureFileOutput, didStartRecordingTo fileURL: URL, from connections: [AVCaptureConnection]) {}
}

/// An output recording files (`AVCaptureFileOutput`); ``AVCaptureMovieFileOutput`` is the one kind.
public class AVCaptureFileOutput: AVCaptureOutput, @unchecked Sendable {
    struct Recording: Sendable {
        let url: URL
        let delegate: DelegateReference<any AVCaptureFileOutputRecordingDelegate>
        /// The SwiftRecord session recording it and its movie output, once it runs.
        var session: MediaCaptureSession?
        var movie: CaptureMovieFileOutput?
    }
    private struct State: Sendable {
        var recording: Recording?
        var lastURL: URL?
        var lastDuration: CMTime = .zero
        var maxRecordedDuration: CMTime = .invalid
    }
    private let state = Locked(State())
    private let delegateQueue = DispatchQueue(label: "swift-record.AVCaptureFileOutput.delegate")

    override init() { super.init() }

    /// The file being recorded, or the last one (`outputFileURL`).
    public var outputFileURL: URL? { state.withLock { $0.recording?.url ?? $0.lastURL } }
    /// From `startRecording(to:recordingDelegate:)` until the file is finished (`isRecording`).
    public var isRecording: Bool { state.withLock { $0.recording != nil } }

    /// How much the file holds so far, or the last file held (`recordedDuration`).
    public var recordedDuration: CMTime {
        let (session, last) = state.withLock { ($0.recording?.session, $0.lastDuration) }
        guard let session else { return last }
        return CMTime(seconds: session.recordingStatistics?.mediaSeconds ?? 0, preferredTimescale: 600)
    }

    /// A file ends by itself when it holds this much (`maxRecordedDuration`); `kCMTimeInvalid`: no limit.
    public var maxRecordedDuration: CMTime {
        get { state.withLock { $0.maxRecordedDuration } }
        set { state.withLock { $0.maxRecordedDuration = newValue } }
    }

    /// Starts recording into `outputFileURL` (`startRecording(to:recordingDelegate:)`); the
    /// delegate is told when it starts and when the file is finished. The session must be
    /// running; a file output records one file at a time (else the delegate is told at
    /// once, with the error). The devices are opened again for the file (a moment with no
    /// samples for the data outputs).
    public func startRecording(to outputFileURL: URL, recordingDelegate delegate: any AVCaptureFileOutputRecordingDelegate) {
        let recording = Recording(url: outputFileURL, delegate: DelegateReference(delegate: delegate))
        let busy = state.withLock { s -> Bool in
            guard s.recording == nil else { return true }
            s.recording = recording
            return false
        }
        if busy {
            let error = SwiftRecordError(.invalidState, operation: "startRecording(to:recordingDelegate:)",
                                         message: "the output is recording \(self.outputFileURL?.lastPathComponent ?? "a file") already; stop it first")
            return tell(recording, .failure(error))
        }
        guard let session else {
            let error = SwiftRecordError(.invalidState, operation: "startRecording(to:recordingDelegate:)",
                                         message: "the output is not in a session; add it with addOutput(_:) first")
            return finish(.failure(error))
        }
        session.startRecording(self)
    }

    /// Ends the file (`stopRecording()`); the delegate is told when it is finished.
    public func stopRecording() {
        guard isRecording else { return }
        session?.stopRecording(self)
    }

    /// The file being asked for, nil when none is.
    var pendingRecording: Recording? { state.withLock { $0.recording } }

    /// The run recording the file into `movie` has started.
    func started(by session: MediaCaptureSession, into movie: CaptureMovieFileOutput?) {
        guard let recording = state.withLock({ s -> Recording? in
            s.recording?.session = session
            s.recording?.movie = movie
            return s.recording
        }) else { return }
        let connections = self.connections
        delegateQueue.async { recording.delegate.delegate.fileOutput(self, didStartRecordingTo: recording.url, from: connections) }
    }

    /// The file is finished (or failed): the delegate is told.
    func finish(_ result: Result<CaptureStatistics?, any Error>) {
        guard let recording = state.withLock({ s -> Recording? in
            defer { s.recording = nil }
            if let recording = s.recording {
                s.lastURL = recording.url
                // What the file holds, also when the run failed after writing some of it.
                let statistics = recording.movie?.statistics ?? (try? result.get()) ?? nil
                s.lastDuration = CMTime(seconds: statistics?.mediaSeconds ?? 0, preferredTimescale: 600)
            }
            return s.recording
        }) else { return }
        tell(recording, result)
    }

    private func tell(_ recording: Recording, _ result: Result<CaptureStatistics?, any Error>) {
        let connections = self.connections
        let error: (any Error)? = if case .failure(let failure) = result { failure } else { nil }
        if let error { log.error("\(type(of: self)): \(recording.url.lastPathComponent): \(error)") }
        delegateQueue.async {
            recording.delegate.delegate.fileOutput(self, didFinishRecordingTo: recording.url, from: connections, error: error)
        }
    }
}

/// Records the session's camera and microphone into a movie file (`AVCaptureMovieFileOutput`)
/// through SwiftRecord's ``CaptureMovieFileOutput``: H.264 and AAC, the container the file's
/// extension names (`.mov`, QuickTime, when it names none here), the pictures at a constant
/// rate on the session's timeline.
public final class AVCaptureMovieFileOutput: AVCaptureFileOutput, @unchecked Sendable {
    private let fragments = Locked<CMTime>(CMTime(seconds: 10))

    public override init() { super.init() }

    /// A crash-safe file: fragments this long (`movieFragmentInterval`, 10 s by default);
    /// `kCMTimeInvalid`: none.
    public var movieFragmentInterval: CMTime {
        get { fragments.withLock { $0 } }
        set { fragments.withLock { $0 = newValue } }
    }

    /// SwiftRecord's output for one file.
    func nativeOutput(_ url: URL) -> CaptureMovieFileOutput {
        let interval = movieFragmentInterval
        return CaptureMovieFileOutput(outputURL: url, fileType: FileType(pathExtension: url.pathExtension) ?? .mov,
                                      movieFragmentInterval: interval.isNumeric ? interval : nil)
    }
}

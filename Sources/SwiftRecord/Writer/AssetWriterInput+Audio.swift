import Foundation

// An audio input's side of `AssetWriterInput`: its settings, appending PCM, and what its
// synchronisation with the pictures did.
extension AssetWriterInput {
    /// An audio input's settings; nil for a video input.
    public var audioSettings: AudioSettings? {
        if case .audio(let a) = settings { return a }
        return nil
    }

    /// What an audio input's synchronisation did so far: the offsets measured between
    /// the times given and where the samples landed, and each correction made.
    public var audioSyncStatistics: AudioSyncStatistics { state[\.audioSync] }

    /// Called (on the writer's thread) for every correction an audio input makes, and
    /// about once a second with the resampling correction in force. Set before `startWriting()`.
    public var audioSyncHandler: (@Sendable (AudioSyncEvent) -> Void)? {
        get { state[\.audioSyncHandler] }
        set { state[\.audioSyncHandler] = newValue }
    }

    /// Appends PCM samples to an audio input, waiting while the queue is full. The first
    /// sample plays at the buffer's `presentationTimeStamp`: a gap from the previous
    /// buffer's end becomes silence, an overlap is dropped, and small drifts (a device
    /// clock that runs off) are steered away by resampling; see `AudioClockSync`.
    public func append(_ audioBuffer: AudioSampleBuffer) throws(SwiftRecordError) {
        _ = try enqueue(.audio(audioBuffer, followsGap: false), at: audioBuffer.presentationTimeStamp, waiting: true)
    }

    /// Appends PCM samples, suspending while the queue is full.
    public func append(_ audioBuffer: AudioSampleBuffer) async throws(SwiftRecordError) {
        while try enqueue(.audio(audioBuffer, followsGap: false), at: audioBuffer.presentationTimeStamp, waiting: false) == .full {
            await suspendUntilRoom()
        }
    }

    /// Appends samples a capture source delivered, telling the track when samples were
    /// lost before them (so the gap is closed at once rather than steered).
    public func append(_ captured: CapturedAudio, at presentationTime: MediaTime) throws(SwiftRecordError) {
        _ = try enqueue(.audio(captured.samples, followsGap: captured.followsGap), at: presentationTime, waiting: true)
    }

    /// The audio track made a correction (on the pipeline's thread).
    func audioSync(_ event: AudioSyncEvent?, _ statistics: AudioSyncStatistics) {
        let handler = state.withLock { s in
            s.audioSync = statistics
            return s.audioSyncHandler
        }
        if let event { handler?(event) }
    }
}

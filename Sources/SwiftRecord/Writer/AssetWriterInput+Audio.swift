import Foundation

// An audio input's side of `AssetWriterInput`: its settings, appending PCM, mixing several
// sources, and what its synchronisation with the pictures did.
extension AssetWriterInput {
    /// An audio input's settings; nil for a video input.
    public var audioSettings: AudioSettings? {
        if case .audio(let a) = settings { return a }
        return nil
    }

    /// An audio input that mixes several sources into its one track, each summed with its
    /// volume (a linear factor: 1 as recorded, 0.5 about −6 dB, 0 silent; at most
    /// `maximumMixVolume`). Append each source's buffers with its index in `mixVolumes`
    /// (`append(_:mixSource:)`). Each source is synchronised with the pictures on its own,
    /// exactly as a track of its own would be (drift steered, gaps filled with silence,
    /// overlaps dropped); only then are the sources summed, by libswresample, in 32-bit
    /// float. The sum is not limited: past full scale it is clipped where it becomes
    /// integers (an encoder's 16-bit input, a player's output), so volumes that add up to
    /// at most 1 never clip. A source more than half a second behind the others (one that
    /// stopped delivering) is taken as silent meanwhile, so the mix goes on.
    public convenience init(mediaType: MediaType = .audio, outputSettings: AudioSettings, mixVolumes: [Double]) throws(SwiftRecordError) {
        guard !mixVolumes.isEmpty else {
            throw SwiftRecordError(.invalidArgument, operation: "AssetWriterInput", message: "a mix needs at least one source volume")
        }
        for v in mixVolumes where !(v.isFinite && v >= 0 && v <= AssetWriterInput.maximumMixVolume) {
            throw SwiftRecordError(.invalidArgument, operation: "AssetWriterInput",
                                   message: "mix volume \(v) is out of range; expected a linear factor from 0 to \(AssetWriterInput.maximumMixVolume)")
        }
        self.init(mediaType: mediaType, outputSettings: outputSettings)
        state.withLock { s in
            s.mixVolumes = mixVolumes
            s.audioSync = Array(repeating: AudioSyncStatistics(), count: mixVolumes.count)
        }
    }

    /// The largest volume a mixed source may have: 4 (+12 dB).
    public static let maximumMixVolume = 4.0

    /// The volume of each source this input mixes; nil unless it mixes (`init(mediaType:outputSettings:mixVolumes:)`).
    public var mixVolumes: [Double]? { state[\.mixVolumes] }

    /// What an audio input's synchronisation did so far: the offsets measured between
    /// the times given and where the samples landed, and each correction made. For a mix,
    /// its first source's (`audioSyncStatistics(mixSource:)`).
    public var audioSyncStatistics: AudioSyncStatistics { state[\.audioSync][0] }

    /// What the synchronisation of source `mixSource` of a mix did so far (0 for an input of one source).
    public func audioSyncStatistics(mixSource: Int) -> AudioSyncStatistics {
        state.withLock { s in s.audioSync.indices.contains(mixSource) ? s.audioSync[mixSource] : AudioSyncStatistics() }
    }

    /// Called (on the writer's thread) for every correction an audio input makes, and
    /// about once a second with the resampling correction in force (for a mix, per source:
    /// the event's `mixSource`). Set before `startWriting()`.
    public var audioSyncHandler: (@Sendable (AudioSyncEvent) -> Void)? {
        get { state[\.audioSyncHandler] }
        set { state[\.audioSyncHandler] = newValue }
    }

    /// Appends PCM samples to an audio input, waiting while the queue is full. The first
    /// sample plays at the buffer's `presentationTimeStamp`: a gap from the previous
    /// buffer's end becomes silence, an overlap is dropped, and small drifts (a device
    /// clock that runs off) are steered away by resampling; see `AudioClockSync`.
    public func append(_ audioBuffer: AudioSampleBuffer) throws(SwiftRecordError) {
        _ = try enqueue(.audio(audioBuffer, followsGap: false, lane: 0), at: audioBuffer.presentationTimeStamp, waiting: true)
    }

    /// Appends PCM samples of source `mixSource` of a mix (its index in `mixVolumes`),
    /// waiting while the queue is full; each source's times are kept as `append(_:)` keeps a track's.
    public func append(_ audioBuffer: AudioSampleBuffer, mixSource: Int) throws(SwiftRecordError) {
        _ = try enqueue(.audio(audioBuffer, followsGap: false, lane: mixSource), at: audioBuffer.presentationTimeStamp, waiting: true)
    }

    /// Appends PCM samples, suspending while the queue is full.
    public func append(_ audioBuffer: AudioSampleBuffer) async throws(SwiftRecordError) {
        while try enqueue(.audio(audioBuffer, followsGap: false, lane: 0), at: audioBuffer.presentationTimeStamp, waiting: false) == .full {
            await suspendUntilRoom()
        }
    }

    /// Appends samples a capture source delivered, telling the track when samples were
    /// lost before them (so the gap is closed at once rather than steered); `mixSource`
    /// says which source of a mix they are (0 for an input of one source).
    public func append(_ captured: CapturedAudio, at presentationTime: MediaTime, mixSource: Int = 0) throws(SwiftRecordError) {
        _ = try enqueue(.audio(captured.samples, followsGap: captured.followsGap, lane: mixSource), at: presentationTime, waiting: true)
    }

    /// The audio track made a correction (on the pipeline's thread), for its source `lane`.
    func audioSync(_ event: AudioSyncEvent?, _ statistics: AudioSyncStatistics, lane: Int) {
        let handler = state.withLock { s in
            if s.audioSync.indices.contains(lane) { s.audioSync[lane] = statistics }
            return s.audioSyncHandler
        }
        if let event { handler?(event) }
    }
}

import AVFoundation

// row: AVURLAsset
// row: AVURLAsset.init
// row: AVAssetExportSession
// row: AVAssetExportSession.init(asset:presetName:)
// row: AVAssetExportPresetPassthrough
// row: AVAssetExportSession.timeRange
// row: AVAssetExportSession.export(to:as:)
func trimClip(_ input: URL, _ output: URL) async throws {
    let asset = AVURLAsset(url: input)
    guard let session = AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetPassthrough) else { return }
    session.timeRange = CMTimeRange(start: CMTime(seconds: 2, preferredTimescale: 600), end: CMTime(seconds: 10, preferredTimescale: 600))
    try await session.export(to: output, as: .mp4)
}

// row: AVAsset
// row: AVURLAsset.url
func assetURL(_ input: URL) -> URL { AVAsset(url: input).url }

// row: AVMutableComposition
// row: AVMutableComposition.init
// row: AVMutableComposition.duration
// row: AVMutableComposition.insertTimeRange(_:of:at:)
// row: AVMutableComposition.insertEmptyTimeRange(_:)
// row: AVMutableComposition.removeTimeRange(_:)
func joinClips(_ inputs: [URL], _ output: URL) async throws {
    let composition = AVMutableComposition()
    for url in inputs {
        let asset = AVURLAsset(url: url)
        try composition.insertTimeRange(CMTimeRange(start: .zero, duration: CMTime(seconds: 5, preferredTimescale: 600)), of: asset, at: composition.duration)
    }
    composition.removeTimeRange(CMTimeRange(start: .zero, duration: CMTime(seconds: 1, preferredTimescale: 600)))
    composition.insertEmptyTimeRange(CMTimeRange(start: .zero, duration: .zero))
    guard let session = AVAssetExportSession(asset: composition, presetName: AVAssetExportPresetPassthrough) else { return }
    try await session.export(to: output, as: .mp4)
}

// row: AVMutableComposition.mutableComposition
// row: AVAssetExportSession.assetExportSession
func nativeParts(_ composition: AVMutableComposition, _ session: AVAssetExportSession) -> (MutableComposition, AssetExportSession) {
    session.assetExportSession.overwritesExistingFile = true
    return (composition.mutableComposition, session.assetExportSession)
}

// row: AVAssetExportSession.outputURL
// row: AVAssetExportSession.outputFileType
// row: AVAssetExportSession.exportAsynchronously(completionHandler:)
// row: AVAssetExportSession.status
// row: AVAssetExportSession.Status
// row: AVAssetExportSession.error
func exportInBackground(_ session: AVAssetExportSession, to url: URL) {
    session.outputURL = url
    session.outputFileType = .mp4
    session.exportAsynchronously {
        let status: AVAssetExportSession.Status = session.status
        if status == .failed { print(session.error.map { "\($0)" } ?? "") }
    }
}

// row: AVAssetExportSession.progress
// row: AVAssetExportSession.cancelExport()
// row: AVAssetExportSession.presetName
// row: AVAssetExportSession.allExportPresets()
func stopIfSlow(_ session: AVAssetExportSession) {
    if session.progress < 0.5 && AVAssetExportSession.allExportPresets().contains(session.presetName) { session.cancelExport() }
}

// row: AVAssetExportPresetHighestQuality
// row: AVAssetExportSession.metadata
// row: AVAssetExportSession.states(updateInterval:)
/// TrimmingAndJoining.md: an Apple trim, written as on the Mac.
func exportTrimmedClip(from inputURL: URL, to outputURL: URL) async throws {
    let asset = AVURLAsset(url: inputURL)
    guard let exportSession = AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetHighestQuality) else {
        return
    }
    exportSession.timeRange = CMTimeRange(start: CMTime(seconds: 1, preferredTimescale: 600),
                                          duration: CMTime(seconds: 2, preferredTimescale: 600))
    let title = AVMutableMetadataItem()
    title.identifier = .commonIdentifierTitle
    title.value = "Trimmed" as NSString
    exportSession.metadata = [title]
    let monitor = Task {
        for await state in exportSession.states(updateInterval: 0.5) {
            if case .exporting(let progress) = state {
                print("Exported \(Int(progress.fractionCompleted * 100)) %")
            }
        }
    }
    try await exportSession.export(to: outputURL, as: .mp4)
    await monitor.value
}

// row: AVAssetExportPresetLowQuality
// row: AVAssetExportPresetMediumQuality
// row: AVAssetExportPresetHEVCHighestQuality
// row: AVAssetExportPreset640x480
// row: AVAssetExportPreset960x540
// row: AVAssetExportPreset1280x720
// row: AVAssetExportPreset1920x1080
// row: AVAssetExportPreset3840x2160
// row: AVAssetExportPresetHEVC1920x1080
// row: AVAssetExportPresetHEVC3840x2160
// row: AVAssetExportSession.exportPresets(compatibleWith:)
// row: AVAssetExportSession.compatibility(ofExportPreset:with:outputFileType:)
// row: AVAssetExportSession.supportedFileTypes
func pickPreset(_ asset: AVURLAsset) async -> String? {
    let wanted = [AVAssetExportPreset3840x2160, AVAssetExportPresetHEVC3840x2160, AVAssetExportPreset1920x1080, AVAssetExportPresetHEVC1920x1080,
                  AVAssetExportPreset1280x720, AVAssetExportPreset960x540, AVAssetExportPreset640x480,
                  AVAssetExportPresetHEVCHighestQuality, AVAssetExportPresetMediumQuality, AVAssetExportPresetLowQuality]
    let compatible = AVAssetExportSession.exportPresets(compatibleWith: asset)
    for preset in wanted where compatible.contains(preset) {
        if await AVAssetExportSession.compatibility(ofExportPreset: preset, with: asset, outputFileType: .mp4),
           AVAssetExportSession(asset: asset, presetName: preset)?.supportedFileTypes.contains(.mp4) == true {
            return preset
        }
    }
    return nil
}

// row: AVAssetTrack
// row: AVAssetTrack.trackID
// row: AVAssetTrack.mediaType
// row: AVAssetTrack.naturalSize
// row: AVAssetTrack.timeRange
// row: AVAssetTrack.assetReaderTrack
// row: AVURLAsset.loadTracks(withMediaType:)
// row: AVURLAsset.tracks(withMediaType:)
func describeTracks(_ asset: AVURLAsset) async throws -> [String] {
    let tracks: [AVAssetTrack] = try await asset.loadTracks(withMediaType: .video) + asset.tracks(withMediaType: .audio)
    return tracks.map { "\($0.trackID) \($0.mediaType) \($0.naturalSize) \($0.timeRange.duration.seconds) \($0.assetReaderTrack.codecName)" }
}

// row: CMPersistentTrackID
// row: kCMPersistentTrackID_Invalid
// row: AVMutableComposition.addMutableTrack(withMediaType:preferredTrackID:)
// row: AVMutableComposition.tracks
// row: AVMutableCompositionTrack
// row: AVMutableCompositionTrack.trackID
// row: AVMutableCompositionTrack.mediaType
// row: AVMutableCompositionTrack.timeRange
// row: AVMutableCompositionTrack.insertTimeRange(_:of:at:)
// row: AVMutableCompositionTrack.insertEmptyTimeRange(_:)
// row: AVMutableCompositionTrack.removeTimeRange(_:)
// row: AVMutableCompositionTrack.mutableCompositionTrack
func picturesWithOtherSound(_ screen: AVURLAsset, _ voice: AVURLAsset, _ output: URL) async throws {
    let composition = AVMutableComposition()
    guard let video = composition.addMutableTrack(withMediaType: .video, preferredTrackID: kCMPersistentTrackID_Invalid),
          let audio: AVMutableCompositionTrack = composition.addMutableTrack(withMediaType: .audio, preferredTrackID: CMPersistentTrackID(9)),
          let pictures = try await screen.loadTracks(withMediaType: .video).first,
          let sound = try await voice.loadTracks(withMediaType: .audio).first else { return }
    let range = CMTimeRange(start: .zero, duration: CMTime(seconds: 3, preferredTimescale: 600))
    try video.insertTimeRange(range, of: pictures, at: .zero)
    try audio.insertTimeRange(range, of: sound, at: .zero)
    video.insertEmptyTimeRange(CMTimeRange(start: video.timeRange.end, duration: CMTime(seconds: 1, preferredTimescale: 600)))
    audio.removeTimeRange(CMTimeRange(start: CMTime(seconds: 2, preferredTimescale: 600), duration: CMTime(seconds: 1, preferredTimescale: 600)))
    print(composition.tracks.map { "\($0.trackID) \($0.mediaType) \($0.mutableCompositionTrack.segmentCount)" }, audio.trackID)
    guard let session = AVAssetExportSession(asset: composition, presetName: AVAssetExportPresetHighestQuality) else { return }
    try await session.export(to: output, as: .mp4)
}

// row: AVAssetExportSession.State
func isExporting(_ state: AVAssetExportSession.State) -> Bool {
    if case .exporting = state { return true }
    return false
}

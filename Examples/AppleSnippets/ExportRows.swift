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

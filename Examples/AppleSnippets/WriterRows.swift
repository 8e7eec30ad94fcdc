import AVFoundation

// row: AVAssetWriter
// row: AVAssetWriter.init(outputURL:fileType:)
// row: AVFileType
func makeWriter(_ url: URL) throws -> AVAssetWriter {
    let writer: AVAssetWriter = try AVAssetWriter(outputURL: url, fileType: AVFileType.mov)
    return writer
}

// row: AVAssetWriter.init(url:fileType:)
func makeWriterWithURL(_ url: URL) throws -> AVAssetWriter { try AVAssetWriter(url: url, fileType: .mp4) }

// row: AVAssetWriter.init(assetWriter:)
// row: AVAssetWriter.assetWriter
func wrapNativeWriter(_ url: URL) -> AVAssetWriter {
    let writer = AVAssetWriter(assetWriter: AssetWriter(outputURL: url, fileType: .mp4))
    writer.assetWriter.overwritesExistingFile = true
    return writer
}

// row: AVAssetWriter.outputURL
// row: AVAssetWriter.outputFileType
// row: AVAssetWriter.inputs
func describe(_ writer: AVAssetWriter) -> String { "\(writer.outputURL.path) \(writer.outputFileType) \(writer.inputs.count)" }

// row: AVAssetWriter.status
// row: AVAssetWriter.Status
// row: AVAssetWriter.error
func report(_ assetWriter: AVAssetWriter) {
    let status: AVAssetWriter.Status = assetWriter.status
    if status == .failed, let error = assetWriter.error { print("writing failed: \(error.localizedDescription)") }
}

// row: AVAssetWriter.shouldOptimizeForNetworkUse
// row: AVAssetWriter.movieFragmentInterval
func configure(_ assetWriter: AVAssetWriter) {
    assetWriter.shouldOptimizeForNetworkUse = true
    assetWriter.movieFragmentInterval = CMTime(seconds: 2, preferredTimescale: 600)
}

// row: AVAssetWriter.canApply(outputSettings:forMediaType:)
// row: AVAssetWriter.canAdd(_:)
// row: AVAssetWriter.add(_:)
// row: AVMediaType
func addVideo(_ assetWriter: AVAssetWriter, settings: [String: Any]) -> AVAssetWriterInput? {
    guard assetWriter.canApply(outputSettings: settings, forMediaType: AVMediaType.video) else { return nil }
    let input = AVAssetWriterInput(mediaType: .video, outputSettings: settings)
    if assetWriter.canAdd(input) { assetWriter.add(input) }
    return input
}

// row: AVAssetWriter.startWriting()
// row: AVAssetWriter.startSession(atSourceTime:)
func start(_ assetWriter: AVAssetWriter, at time: CMTime) -> Bool {
    guard assetWriter.startWriting() else { return false }
    assetWriter.startSession(atSourceTime: time)
    return true
}

// row: AVAssetWriter.endSession(atSourceTime:)
// row: AVAssetWriter.finishWriting(completionHandler:)
func finish(_ assetWriter: AVAssetWriter, at end: CMTime) {
    assetWriter.endSession(atSourceTime: end)
    assetWriter.finishWriting {
        print("finished: \(assetWriter.status == .completed)")
    }
}

// row: AVAssetWriter.finishWriting()
func finishAsync(_ assetWriter: AVAssetWriter) async { await assetWriter.finishWriting() }

// row: AVAssetWriter.cancelWriting()
func cancel(_ assetWriter: AVAssetWriter) { assetWriter.cancelWriting() }

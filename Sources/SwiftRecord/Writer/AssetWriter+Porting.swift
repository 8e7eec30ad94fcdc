import Foundation

// Apple's other spellings of the writer's set-up.
extension AssetWriter {
    /// A writer for `url` in `fileType`: `AVAssetWriter(url:fileType:)`, Apple's Swift
    /// spelling of ``init(outputURL:fileType:)``. Does not throw: the output is checked at
    /// ``startWriting()``.
    public convenience init(url: URL, fileType: FileType) {
        self.init(outputURL: url, fileType: fileType)
    }

    /// Whether an input with these Apple-keyed settings can be added to this writer and
    /// started (`canApply(outputSettings:forMediaType:)`): the dictionary reads
    /// (``VideoSettings/init(outputSettings:)``, ``AudioSettings/init(outputSettings:)``),
    /// this container carries the codec, and this FFmpeg's encoder opens with them (it is
    /// opened and closed again, so a size, profile or encoder the build lacks is found
    /// here, as ``startWriting()`` would find it). `nil` settings (pass-through) are
    /// accepted: the sample's format is checked by ``canAdd(_:)-(AssetWriterInput)``.
    public func canApply(outputSettings: [String: Any]?, forMediaType mediaType: MediaType) -> Bool {
        guard let outputSettings else { return true }
        return (try? AssetWriter.check(outputSettings: outputSettings, mediaType: mediaType, fileType: fileType)) != nil
    }

    /// Reads `outputSettings` and opens (then closes) an encoder with them; throws why not.
    static func check(outputSettings: [String: Any], mediaType: MediaType, fileType: FileType) throws(SwiftRecordError) {
        // Every container here wants parameter sets in extradata.
        let globalHeader = true
        switch mediaType {
        case .video:
            let settings = try VideoSettings(outputSettings: outputSettings)
            guard fileType.supports(settings.codec) else {
                throw SwiftRecordError(.unsupported, operation: "canApply", message: "a .\(fileType) file cannot carry \(settings.codec)")
            }
            _ = try EncoderContext.video(settings: settings.resolved(realTime: false), globalHeader: globalHeader)
        case .audio:
            let settings = try AudioSettings(outputSettings: outputSettings)
            guard fileType.supports(settings.codec) else {
                throw SwiftRecordError(.unsupported, operation: "canApply", message: "a .\(fileType) file cannot carry \(settings.codec)")
            }
            _ = try EncoderContext.audio(settings: settings, globalHeader: globalHeader)
        case .subtitle:
            throw AssetWriterInput.subtitlesPassThrough
        }
    }
}

extension AssetWriter {
    /// Files to carry beside the tracks, written into the header (Matroska's attachments:
    /// the fonts an ASS subtitle track needs, cover art). Only a `.mkv` file can carry them:
    /// `startWriting()` refuses them for any other. Set before `startWriting()`.
    public var attachments: [AssetAttachment] {
        get { state[\.attachments] }
        set { state.withLock { s in if s.status == .unknown { s.attachments = newValue } } }
    }

    /// Throws unless this writer's file can carry `attachments` (each named, and typed).
    func checkAttachments(_ attachments: [AssetAttachment]) throws(SwiftRecordError) {
        guard !attachments.isEmpty else { return }
        guard fileType == .mkv else {
            throw SwiftRecordError(.unsupported, operation: "startWriting",
                                   message: "a .\(fileType) file cannot carry attachments (\(attachments.map(\.fileName).joined(separator: ", "))); only .mkv can")
        }
        if let bad = attachments.first(where: { $0.fileName.isEmpty || $0.mimeType.isEmpty || $0.data.isEmpty }) {
            throw SwiftRecordError(.invalidArgument, operation: "startWriting",
                                   message: "attachment \(bad) needs a file name, a MIME type and some bytes")
        }
    }
}

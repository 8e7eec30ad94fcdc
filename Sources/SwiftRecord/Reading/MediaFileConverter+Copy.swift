extension MediaFileConverter {
    /// Throws unless one `fileType` file can carry every one of `tracks` as it is (`--copy`),
    /// naming each codec it cannot carry and the containers that can carry them all.
    static func checkCopies(_ tracks: [AssetReaderTrack], fit fileType: FileType) throws(SwiftRecordError) {
        if fileType == .mkv || fileType == .webm,
           let turned = tracks.first(where: { $0.mediaType == .video && !$0.preferredTransform.isIdentity }) {
            throw SwiftRecordError(.unsupported, operation: "convert --copy",
                                   message: "\(turned) is turned by its display matrix, which a .\(fileType) file cannot carry; "
                                   + "name the output .mp4 or .mov, or drop --copy to re-encode (the pictures are then turned)")
        }
        let formats = tracks.map(\.formatDescription)
        guard !FormatDescription.canBeCarried(formats, in: fileType) else { return }
        let refused = tracks.filter { !$0.formatDescription.canBeCarried(in: fileType) }
        let what = refused.isEmpty
            ? "these tracks together (\(tracks.map(\.codecName).joined(separator: " + ")))"
            : refused.map { "\($0.codecName) (\($0))" }.joined(separator: " or ")
        let fits = FileType.allCases.filter { $0 != fileType && FormatDescription.canBeCarried(formats, in: $0) }.map { ".\($0)" }
        let all = tracks.count == 1 ? "it" : "every track"
        throw SwiftRecordError(.unsupported, operation: "convert --copy",
                               message: "a .\(fileType) file cannot carry \(what); "
                               + (fits.isEmpty ? "no container here can carry \(all) as it is" : "name the output \(fits.joined(separator: " or ")), which can carry \(all),")
                               + (fits.isEmpty ? "; drop --copy to re-encode" : " or drop --copy to re-encode"))
    }
}

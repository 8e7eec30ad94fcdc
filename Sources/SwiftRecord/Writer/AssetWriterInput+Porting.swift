// Apple's other spellings of an input's set-up.
extension AssetWriterInput {
    /// The track's language, an ISO 639-2/T code such as "eng" or "fra" (`languageCode`),
    /// written as the stream's `language` tag (MP4/MOV `mdhd`, Matroska `Language`). Set
    /// before `startWriting()`, which refuses anything but three lower-case letters.
    public var languageCode: String? {
        get { state[\.languageCode] }
        set { state[\.languageCode] = newValue }
    }

    /// Throws for a setting `startWriting()` cannot write into a `fileType` file.
    func validateSetUp(for fileType: FileType) throws(SwiftRecordError) {
        let transform = self.transform
        if mediaType == .video, !transform.isIdentity {
            guard transform.isQuarterTurnOrMirror else {
                throw SwiftRecordError(.unsupported, operation: "startWriting",
                                       message: "the input's transform \(transform) is not made of quarter turns and mirrors; a file can carry only those (a rotation by a multiple of 90°, scale ±1 on each axis)")
            }
            if sourceFormatHint != nil, fileType == .mkv || fileType == .webm, transform.rotationDegrees != 0 || transform.isMirrored {
                throw SwiftRecordError(.unsupported, operation: "startWriting",
                                       message: "a .\(fileType) file has no display matrix and a pass-through input's pictures cannot be turned; write .mp4 or .mov, or re-encode (outputSettings)")
            }
        }
        if let code = languageCode, code.count != 3 || !code.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) }) {
            throw SwiftRecordError(.invalidArgument, operation: "startWriting",
                                   message: "languageCode '\(code)' is not an ISO 639-2/T code; expected three lower-case letters such as \"eng\"")
        }
    }

    /// Asks for multi-pass encoding where it is supported (`performsMultiPassEncodingIfSupported`).
    /// No encoder here is run in several passes, so, as on an Apple device without it,
    /// ``canPerformMultiplePasses`` stays false and one pass is made.
    public var performsMultiPassEncodingIfSupported: Bool {
        get { state[\.multiPass] }
        set { state[\.multiPass] = newValue }
    }

    /// Whether the input will encode in several passes (`canPerformMultiplePasses`): never here.
    public var canPerformMultiplePasses: Bool { false }

    /// How the log names the input: "video input 1 of 2 (h264 1280x720, "Camera")".
    func logName(index: Int, of count: Int) -> String {
        var what: String = switch settings {
        case .video(let v): "\(v.codec) \(v.width)x\(v.height)"
        case .audio(let a): "\(a.codec)"
        case .passThrough(let f): "\(f.codecName), passed through"
        }
        if let title = metadata.title { what += ", \"\(title)\"" }
        return "\(mediaType) input \(index + 1) of \(count) (\(what))"
    }
}

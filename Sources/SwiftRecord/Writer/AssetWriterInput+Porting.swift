// Apple's other spellings of an input's set-up.
extension AssetWriterInput {
    /// The track's language, an ISO 639-2/T code such as "eng" or "fra" (`languageCode`),
    /// written as the stream's `language` tag (MP4/MOV `mdhd`, Matroska `Language`). Set
    /// before `startWriting()`, which refuses anything but three lower-case letters.
    public var languageCode: String? {
        get { state[\.languageCode] }
        set { state[\.languageCode] = newValue }
    }

    /// Throws for a setting `startWriting()` cannot write.
    func validateSetUp() throws(SwiftRecordError) {
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
}

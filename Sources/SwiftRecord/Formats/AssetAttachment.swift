/// A file a container carries beside its tracks (Matroska's attachments): the fonts an ASS
/// subtitle track is drawn with, cover art. Read with ``AssetReader/attachments``; written
/// into a Matroska file with ``AssetWriter/attachments``.
public struct AssetAttachment: Sendable, Hashable, CustomStringConvertible {
    /// Its file name ("DejaVuSans.ttf").
    public var fileName: String
    /// Its MIME type ("font/ttf", "application/x-truetype-font", "image/jpeg").
    public var mimeType: String
    /// Its bytes.
    public var data: [UInt8]

    public init(fileName: String, mimeType: String, data: [UInt8]) {
        self.fileName = fileName
        self.mimeType = mimeType
        self.data = data
    }

    public var description: String { "\(fileName) (\(mimeType), \(data.count) bytes)" }
}

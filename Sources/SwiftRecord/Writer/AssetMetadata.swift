import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Metadata written into the file's header (`AVAssetWriter.metadata`).
public struct AssetMetadata: Sendable, Hashable {
    /// The title (`AVMetadataCommonIdentifierTitle`).
    public var title: String?
    /// When the recording was made (`AVMetadataCommonIdentifierCreationDate`).
    public var creationDate: Date?
    /// Further container tags by FFmpeg's key names ("comment", "artist", …).
    public var custom: [String: String]

    public init(title: String? = nil, creationDate: Date? = nil, custom: [String: String] = [:]) {
        self.title = title
        self.creationDate = creationDate
        self.custom = custom
    }

    var dictionary: [String: String] {
        var d = custom
        if let title { d["title"] = title }
        if let creationDate {
            // ISO 8601 in UTC with microseconds, the form FFmpeg's muxers parse. Formatted by
            // hand: DateFormatter would load ICU, which costs more start-up time than encoding a frame.
            let seconds = creationDate.timeIntervalSince1970
            var whole = time_t(seconds.rounded(.down))
            let micros = Int(((seconds - Double(whole)) * 1_000_000).rounded(.down))
            var tm = Glibc.tm()
            gmtime_r(&whole, &tm)
            let pad = { (v: Int32, w: Int) in String(v).leftPadded(to: w) }
            d["creation_time"] = "\(pad(tm.tm_year + 1900, 4))-\(pad(tm.tm_mon + 1, 2))-\(pad(tm.tm_mday, 2))T"
                + "\(pad(tm.tm_hour, 2)):\(pad(tm.tm_min, 2)):\(pad(tm.tm_sec, 2)).\(String(micros).leftPadded(to: 6))Z"
        }
        return d
    }
}

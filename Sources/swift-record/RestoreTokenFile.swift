import Foundation
import SwiftRecord

/// `--restore-token FILE`: the desktop portal's restore token, kept between runs so that a
/// script records without the chooser after the first time. The file is read if it is there
/// (a regular file, links followed) and written, under the rule for every written file
/// (`OutputFile`: links followed, only regular files, replaced only once the new one is
/// complete), when the portal gives a new token.
enum RestoreTokenFile {
    /// The token in `path`, nil when there is no file (or it is empty).
    static func read(_ path: String) throws(SwiftRecordError) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else {
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            throw SwiftRecordError(.io, operation: "--restore-token", message: "cannot read '\(path)'")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty { return nil }
        guard UUID(uuidString: text) != nil else {
            throw SwiftRecordError(.invalidArgument, operation: "--restore-token",
                                   message: "'\(path)' does not hold a restore token (the UUID a desktop portal gives); remove it to choose in the chooser again")
        }
        return text
    }

    /// Writes `token` to `file` unless it already holds it.
    static func write(_ token: String, to file: OutputFile, previous: String?) throws(SwiftRecordError) {
        guard token != previous else { return }
        try file.write(Data((token + "\n").utf8))
    }
}

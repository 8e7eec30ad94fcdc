/// The command line's parsers for values that are not numbers of one kind: a name among
/// a few, a memory size, a fault-injection stall, a camera overlay's placement. Like the
/// others in `ValueParsing`, each throws a `SwiftRecordError` whose message names the
/// option, says what was wrong and what was expected; the fuzzer runs them all
/// (`exerciseValueParsers`).
extension ValueParsing {
    /// One of `cases` by its raw value (`ignoringCase`: as written in any case):
    /// "--capture 'fast' is not a capture method; expected damage or full".
    package static func choice<T: RawRepresentable>(_ text: String, among cases: [T], option: String, what: String,
                                                    ignoringCase: Bool = false) throws(SwiftRecordError) -> T where T.RawValue == String {
        let key = ignoringCase ? text.lowercased() : text
        guard let found = cases.first(where: { $0.rawValue == key }) else {
            let names = cases.map(\.rawValue)
            let listed = names.count > 1 ? names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "") : names.joined()
            throw SwiftRecordError(.invalidArgument, operation: option, message: "\(option) '\(text)' is not \(what); expected \(listed)")
        }
        return found
    }

    /// The most `byteSize` takes: 64 GB (more than any machine here would hold in memory).
    package static let largestByteSize = 64_000_000_000

    /// A size in bytes: `256M`, `1G`, `500k`, `1000000` (k, M, G: powers of 1000), from 1
    /// byte to 64 GB.
    package static func byteSize(_ text: String, option: String) throws(SwiftRecordError) -> Int {
        let units: [Character: Int] = ["k": 1_000, "K": 1_000, "m": 1_000_000, "M": 1_000_000, "g": 1_000_000_000, "G": 1_000_000_000]
        let unit = text.last.flatMap { units[$0] }
        guard let n = Int(unit == nil ? text : String(text.dropLast())), n > 0, n <= largestByteSize / (unit ?? 1) else {
            throw SwiftRecordError(.invalidArgument, operation: option,
                                   message: "\(option) '\(text)' is not valid; expected a size in bytes such as 256M or 1G")
        }
        return n * (unit ?? 1)
    }

    /// The longest stall `sourceStall` takes: a day, in milliseconds.
    package static let longestStallMilliseconds = 86_400_000

    /// `--simulate-source-stall FRAME:MS` (fault injection): a frame index (0 or more) and
    /// a stall in milliseconds (0 to a day).
    package static func sourceStall(_ text: String) throws(SwiftRecordError) -> (frame: Int64, milliseconds: Int) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let frame = Int64(parts[0]), let ms = Int(parts[1]), frame >= 0, ms >= 0, ms <= longestStallMilliseconds else {
            throw SwiftRecordError(.invalidArgument, operation: "--simulate-source-stall",
                                   message: "--simulate-source-stall '\(text)' is not valid; expected frame:milliseconds (at most \(longestStallMilliseconds)), e.g. 20:500")
        }
        return (frame, ms)
    }

    /// Where `--overlay CORNER[,WxH][,MARGIN]` puts a camera: a corner among `Corner`'s
    /// cases (`PictureOverlay.Corner` on the command line), a size with even sides of at
    /// least 2 (default 320x180) and a margin of 0 or more pixels (default 16).
    package static func overlay<Corner: RawRepresentable & CaseIterable>(_ text: String, corners: Corner.Type = Corner.self)
        throws(SwiftRecordError) -> (corner: Corner, size: VideoSize, margin: Int) where Corner.RawValue == String {
        func fail(_ message: String) -> SwiftRecordError {
            SwiftRecordError(.invalidArgument, operation: "--overlay", message: "--overlay '\(text)': " + message)
        }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard let corner = parts.first.flatMap(Corner.init(rawValue:)), parts.count <= 3 else {
            throw fail("expected CORNER[,WxH][,MARGIN] with CORNER one of \(Corner.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var size = VideoSize(width: 320, height: 180), margin = 16
        for part in parts.dropFirst() {
            if part.contains("x") {
                guard let s = try? ValueParsing.size(part), s.width >= 2, s.height >= 2, s.width % 2 == 0, s.height % 2 == 0 else {
                    throw fail("the size '\(part)' is not WxH with even sides of at least 2")
                }
                size = s
            } else {
                guard let m = Int(part), m >= 0 else {
                    throw fail("the margin '\(part)' is not a number of pixels (0 or more)")
                }
                margin = m
            }
        }
        return (corner, size, margin)
    }
}

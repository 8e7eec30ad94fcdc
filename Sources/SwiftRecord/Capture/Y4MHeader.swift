/// The stream header of a YUV4MPEG2 (`.y4m`) file: one text line
/// `YUV4MPEG2 W640 H360 F30000:1001 Ip A1:1 C420jpeg XYSCSS=420JPEG` before the frames,
/// each of which starts with its own `FRAME` line.
///
/// Fields are a letter and a value separated by single spaces. `W` and `H` are required;
/// the others default as the format says (`C420jpeg`, progressive, unknown rate and
/// aspect). `X` fields are extensions: `XCOLORRANGE=FULL|LIMITED` (written by ffmpeg) is
/// read, every other one is ignored, as are fields with letters the format does not define.
public struct Y4MStreamHeader: Sendable, Hashable {
    /// How the fields of a frame are ordered in time (`I`).
    public enum Interlacing: String, Sendable {
        case progressive, topFieldFirst, bottomFieldFirst, mixed, unknown
    }

    /// Where 4:2:0 chroma samples sit relative to luma (`C420jpeg`, `C420mpeg2`, `C420paldv`).
    public enum ChromaSiting: String, Sendable {
        case center, left, topLeft
    }

    public var width: Int
    public var height: Int
    /// `F`: frames per second as a ratio; nil when absent or `F0:0`.
    public var frameRate: Rational?
    /// `A`: the shape of a pixel (width:height); nil when absent or `A0:0` (unknown).
    public var pixelAspectRatio: Rational?
    /// `C`: the colour space token as written, `420jpeg` when absent.
    public var colorSpace: String
    /// The sample layout `colorSpace` stands for.
    public var pixelFormat: RawPixelFormat
    /// Chroma siting for 4:2:0 colour spaces.
    public var chromaSiting: ChromaSiting?
    /// `I`: interlacing.
    public var interlacing: Interlacing
    /// `XCOLORRANGE=FULL` / `LIMITED`, when present.
    public var fullRange: Bool?
    /// Fields that were skipped (extensions and letters the format does not define).
    public var ignoredFields: [String]
    /// Bytes of the header line, newline included: where the first frame starts.
    public var length: Int

    /// The first bytes of every YUV4MPEG2 stream.
    package static let signature: [UInt8] = Array("YUV4MPEG2".utf8)
    /// Longest header line accepted; real ones are well under 100 bytes.
    package static let maximumLineLength = 4096
    /// The first five bytes of every frame header.
    static let frameSignature: [UInt8] = Array("FRAME".utf8)

    /// Colour spaces (`C` values) and the layouts they stand for.
    static let colorSpaces: [(token: String, format: RawPixelFormat, siting: ChromaSiting?)] = [
        ("420jpeg", .yuv420p, .center), ("420mpeg2", .yuv420p, .left), ("420paldv", .yuv420p, .topLeft),
        ("420", .yuv420p, .center), ("422", .yuv422p, nil), ("444", .yuv444p, nil), ("mono", .gray, nil),
        ("420p10", .yuv420p10le, .center), ("422p10", .yuv422p10le, nil), ("444p10", .yuv444p10le, nil),
    ]

    /// True when `bytes` start like a YUV4MPEG2 stream (the signature and a space).
    package static func hasSignature(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.count > signature.count && bytes.prefix(signature.count).elementsEqual(signature)
            && bytes.dropFirst(signature.count).first == UInt8(ascii: " ")
    }

    static func fail(_ message: String) -> SwiftRecordError {
        SwiftRecordError(.invalidData, operation: "YUV4MPEG2 header", message: message)
    }

    /// Parses a header line (without its newline); `length` is recorded as given.
    package static func parse(line: some Collection<UInt8>, length: Int) throws(SwiftRecordError) -> Y4MStreamHeader {
        let text = String(decoding: line, as: UTF8.self)
        let tokens = text.split(separator: " ", omittingEmptySubsequences: true)
        guard tokens.first == "YUV4MPEG2" else {
            throw fail("the stream does not start with 'YUV4MPEG2 '; found '\(text.prefix(16))'")
        }
        guard !text.hasSuffix("\r") else {
            throw fail("the header line ends with CR LF (a Windows line ending); YUV4MPEG2 lines end with a bare LF")
        }
        var width: Int?, height: Int?
        var header = Y4MStreamHeader(width: 0, height: 0, frameRate: nil, pixelAspectRatio: nil, colorSpace: "420jpeg",
                                     pixelFormat: .yuv420p, chromaSiting: .center, interlacing: .unknown,
                                     fullRange: nil, ignoredFields: [], length: length)
        for token in tokens.dropFirst() {
            let tag = token.first ?? " "
            let value = String(token.dropFirst())
            switch tag {
            case "W":
                width = try dimension(value, field: "W (width)")
            case "H":
                height = try dimension(value, field: "H (height)")
            case "F":
                guard let (n, d) = ratio(value), (n > 0 && d > 0) || (n == 0 && d == 0), let rate = Rational(n, d == 0 ? 1 : d),
                      n == 0 || (rate.doubleValue <= 1000 && Int64(rate.numerator) * 86_400 >= Int64(rate.denominator)) else {
                    throw fail("field F (frame rate) 'F\(value)' is not valid; expected F<num>:<den> with a rate from 1/86400 (one frame a day) to 1000, such as F30000:1001")
                }
                header.frameRate = n == 0 ? nil : rate
            case "A":
                guard let (n, d) = ratio(value), (n > 0 && d > 0) || (n == 0 && d == 0) else {
                    throw fail("field A (pixel aspect) 'A\(value)' is not valid; expected A<width>:<height> such as A1:1, or A0:0 for unknown")
                }
                header.pixelAspectRatio = n == 0 ? nil : Rational(n, d)
            case "C":
                guard let entry = colorSpaces.first(where: { $0.token == value.lowercased() }) else {
                    throw fail("field C (colour space) 'C\(value)' is not supported; expected one of "
                               + colorSpaces.map { "C\($0.token)" }.joined(separator: ", "))
                }
                header.colorSpace = entry.token
                header.pixelFormat = entry.format
                header.chromaSiting = entry.siting
            case "I":
                switch value {
                case "p": header.interlacing = .progressive
                case "t": header.interlacing = .topFieldFirst
                case "b": header.interlacing = .bottomFieldFirst
                case "m": header.interlacing = .mixed
                case "?": header.interlacing = .unknown
                default:
                    throw fail("field I (interlacing) 'I\(value)' is not valid; expected Ip, It, Ib, Im or I?")
                }
            case "X":
                if value.uppercased() == "COLORRANGE=FULL" {
                    header.fullRange = true
                } else if value.uppercased() == "COLORRANGE=LIMITED" {
                    header.fullRange = false
                } else {
                    header.ignoredFields.append(String(token))
                }
            default:
                header.ignoredFields.append(String(token))
            }
        }
        guard let width else { throw fail("field W (width) is missing; a YUV4MPEG2 header needs W<width> and H<height>") }
        guard let height else { throw fail("field H (height) is missing; a YUV4MPEG2 header needs W<width> and H<height>") }
        header.width = width
        header.height = height
        return header
    }

    private static func dimension(_ value: String, field: String) throws(SwiftRecordError) -> Int {
        guard let v = Int(value), v >= 1, v <= 16384 else {
            throw fail("field \(field) '\(value)' is not valid; expected a whole number from 1 to 16384")
        }
        return v
    }

    private static func ratio(_ value: String) -> (Int32, Int32)? {
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let n = Int32(parts[0]), let d = Int32(parts[1]), n >= 0, d >= 0 else { return nil }
        return (n, d)
    }
}

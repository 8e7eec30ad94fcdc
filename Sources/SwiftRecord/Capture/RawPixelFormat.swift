/// How a raw video file lays out the samples of one frame: planes stored one after
/// the other, rows tightly packed (no padding), chroma planes rounded up for odd sizes,
/// as `ffmpeg -f rawvideo` reads and writes them. Names follow ffmpeg's `-pix_fmt`.
///
/// Every layout is read into a `PixelBuffer` of `pixelFormat`; YV12 is I420 with its
/// chroma planes in the other order, so it is read into `yuv420p` buffers with V and U
/// swapped on the way in (no copy).
public enum RawPixelFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    case yuv420p, yv12, nv12, nv21, yuv422p, yuv444p, yuyv422, uyvy422, gray
    case bgra, rgba, bgr0, rgb24, yuv420p10le, yuv422p10le, yuv444p10le

    /// Other names people use for the same layouts (FourCCs and ffmpeg's older names).
    static let aliases: [String: RawPixelFormat] = [
        "i420": .yuv420p, "iyuv": .yuv420p, "420": .yuv420p,
        "yuy2": .yuyv422, "yuyv": .yuyv422, "yuv422": .yuyv422,
        "uyvy": .uyvy422, "y422": .uyvy422,
        "gray8": .gray, "y8": .gray, "y800": .gray, "grey": .gray,
        "i422": .yuv422p, "i444": .yuv444p, "rgb": .rgb24, "bgrx": .bgr0, "bgr32": .bgra,
    ]

    public var description: String { rawValue }

    /// The format of the buffers frames are read into.
    public var pixelFormat: PixelFormat {
        switch self {
        case .yuv420p, .yv12: return .yuv420p
        case .nv12: return .nv12
        case .nv21: return .nv21
        case .yuv422p: return .yuv422p
        case .yuv444p: return .yuv444p
        case .yuyv422: return .yuyv422
        case .uyvy422: return .uyvy422
        case .gray: return .gray
        case .bgra: return .bgra
        case .rgba: return .rgba
        case .bgr0: return .bgr0
        case .rgb24: return .rgb24
        case .yuv420p10le: return .yuv420p10le
        case .yuv422p10le: return .yuv422p10le
        case .yuv444p10le: return .yuv444p10le
        }
    }

    /// The buffer planes in the order the file stores them (YV12: Y, V, U).
    var filePlaneOrder: [Int] {
        switch self {
        case .yv12: return [0, 2, 1]
        default: return Array(0..<pixelFormat.planeCount)
        }
    }

    /// A layout by name or alias (`i420`, `yuy2`, …), case-insensitive.
    public init?(name: String) {
        let n = name.lowercased()
        if let f = RawPixelFormat(rawValue: n) { self = f; return }
        guard let f = RawPixelFormat.aliases[n] else { return nil }
        self = f
    }

    /// Parses a `--pix-fmt` value; the error lists the supported names.
    public static func parse(_ text: String) throws(SwiftRecordError) -> RawPixelFormat {
        guard let f = RawPixelFormat(name: text.trimmingCharactersInSet()) else {
            throw SwiftRecordError(.invalidArgument, operation: "pixel format",
                                   message: "unknown pixel format '\(text)'; supported: \(supportedList)")
        }
        return f
    }

    /// The supported names, with the common aliases: "yuv420p (i420), yv12, …".
    public static var supportedList: String {
        allCases.map { f in
            let names = aliases.filter { $0.value == f && ["i420", "yuy2", "uyvy", "gray8"].contains($0.key) }.map(\.key).sorted()
            return names.isEmpty ? f.rawValue : "\(f.rawValue) (\(names.joined(separator: ", ")))"
        }.joined(separator: ", ")
    }

    /// Bytes of one `width`×`height` frame in the file; nil when the size is out of range.
    public func frameSize(width: Int, height: Int) -> Int? {
        pixelFormat.tightFrameSize(width: width, height: height)
    }
}

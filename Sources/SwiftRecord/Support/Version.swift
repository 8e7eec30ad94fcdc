internal import CFFmpeg

/// The library's version, and the FFmpeg libraries it runs on.
package enum SwiftRecordVersion {
    /// This release of swift-record (the command line's `--version`, `--stats-json`).
    package static let string = "0.3.0"

    /// The FFmpeg libraries linked at run time, e.g. "libavcodec 59.37.100, libavformat 59.27.100, …".
    package static var ffmpegLibraries: String {
        func text(_ v: UInt32) -> String { "\(v >> 16).\((v >> 8) & 0xFF).\(v & 0xFF)" }
        return ["libavcodec \(text(avcodec_version()))", "libavformat \(text(avformat_version()))",
                "libavutil \(text(avutil_version()))", "libswscale \(text(swscale_version()))",
                "libswresample \(text(swresample_version()))"].joined(separator: ", ")
    }
}

// The fuzz targets build a few of SwiftRecord's files with swiftc alone, without swift-log:
// FFmpeg's messages are not routed anywhere there (Sources/SwiftRecord/Support/Logging.swift
// does that in the library).
enum FFmpegLog {
    static let configure: Void = ()
}

import Foundation

/// GStreamer, the second independent reader of the files the tests write (its own
/// demuxers; libav, libvpx and aom decoders).
public enum GStreamer {
    public static var available: Bool { Proc.which("gst-launch-1.0") != nil }

    /// Plays `path` to its end through decodebin, every stream decoded (each behind a queue:
    /// with a pad left unlinked, matroskademux now and then stalls). Succeeds only when the
    /// whole file decodes.
    public static func decode(_ path: String, streams: (video: Int, audio: Int)) throws -> ProcessResult {
        var pipeline = "filesrc location=\(path) ! decodebin name=d"
        for _ in 0..<streams.video { pipeline += " d. ! queue ! video/x-raw ! fakesink" }
        for _ in 0..<streams.audio { pipeline += " d. ! queue ! audio/x-raw ! fakesink" }
        return try Proc.run("gst-launch-1.0", ["-q"] + pipeline.split(separator: " ").map(String.init), timeout: 60)
    }
}

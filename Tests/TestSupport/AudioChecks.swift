import Foundation

/// Audio checks made with ffprobe/ffmpeg, independent of swift-record's own code.
public enum AudioCheck {
    /// `ffprobe -show_streams` of the first audio stream, as JSON fields.
    public static func probe(_ path: String) throws -> [String: Any] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_streams", "-of", "json", path], timeout: 120)
        guard r.succeeded, let data = r.stdout.data(using: .utf8),
              let json = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let streams = json["streams"] as? [[String: Any]], let stream = streams.first else {
            throw TestError.failed("ffprobe found no audio stream in \(path): \(r.stderr)")
        }
        return stream
    }

    /// The file's first audio stream decoded by ffmpeg to mono 32-bit float at `rate`.
    public static func decode(_ path: String, rate: Int = 48_000) throws -> [Float] {
        let out = NSTemporaryDirectory() + "sr-pcm-\(UInt32.random(in: 0...UInt32.max)).f32"
        defer { unlink(out) }
        let r = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", path, "-map", "0:a:0", "-ac", "1", "-ar", "\(rate)",
                                         "-f", "f32le", out], timeout: 300)
        guard r.succeeded else { throw TestError.failed("ffmpeg could not decode the audio of \(path): \(r.stderr)") }
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Onsets (seconds) of clicks: a sample whose magnitude exceeds `threshold` after at
    /// least `quiet` seconds below it.
    public static func clickOnsets(_ samples: [Float], rate: Int, threshold: Float = 0.5, quiet: Double = 0.1) -> [Double] {
        var onsets: [Double] = []
        var lastLoud = -Int.max / 2
        let gap = Int(quiet * Double(rate))
        for (i, s) in samples.enumerated() where abs(s) > threshold {
            if i - lastLoud > gap { onsets.append(Double(i) / Double(rate)) }
            lastLoud = i
        }
        return onsets
    }

    /// Root mean square of `samples`.
    public static func rms(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }
}

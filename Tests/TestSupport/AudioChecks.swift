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

    /// The file's audio stream `track` (0: the first) decoded by ffmpeg to mono 32-bit float at `rate`.
    public static func decode(_ path: String, rate: Int = 48_000, track: Int = 0) throws -> [Float] {
        try decodeTimed(path, rate: rate, track: track).samples
    }

    /// The power of `frequency` in `samples` (a Goertzel filter), as a fraction of the
    /// samples' whole power: near 1 for a pure tone at that frequency, near 0 for another.
    public static func toneShare(_ samples: ArraySlice<Float>, frequency: Double, rate: Int = 48_000) -> Double {
        let n = samples.count
        guard n > 0 else { return 0 }
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(rate))
        var s1 = 0.0, s2 = 0.0, energy = 0.0
        for x in samples {
            let v = Double(x)
            energy += v * v
            let s0 = v + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
        // A pure tone's Goertzel power is n/2 times its energy (n²·A²/4 against n·A²/2).
        return energy > 0 ? power / (energy * Double(n) / 2) : 0
    }

    /// The decoded samples and the time of the first one on ffmpeg's timeline for the file
    /// (the one `flashTimes` reads too: the file's times less its earliest start), from
    /// `ashowinfo` on the first decoded frame (after any priming or pre-skip the container
    /// says to drop).
    public static func decodeTimed(_ path: String, rate: Int = 48_000, track: Int = 0) throws -> (samples: [Float], start: Double) {
        let out = NSTemporaryDirectory() + "sr-pcm-\(UInt32.random(in: 0...UInt32.max)).f32"
        defer { unlink(out) }
        let r = try Proc.run("ffmpeg", ["-nostdin", "-v", "info", "-y", "-i", path, "-map", "0:a:\(track)", "-af", "ashowinfo",
                                         "-ac", "1", "-ar", "\(rate)", "-f", "f32le", out], timeout: 300)
        guard r.succeeded else { throw TestError.failed("ffmpeg could not decode the audio of \(path): \(r.stderr)") }
        var start = 0.0
        if let line = r.stderr.split(separator: "\n").first(where: { $0.contains("Parsed_ashowinfo") && $0.contains("pts_time:") }),
           let range = line.range(of: "pts_time:") {
            start = Double(line[range.upperBound...].split(separator: " ").first ?? "") ?? 0
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        return (data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }, start)
    }

    /// When the first audio stream starts (ffprobe's `start_time`): the decoded samples
    /// begin there, not necessarily at 0.
    public static func startTime(_ path: String) throws -> Double {
        double(try probe(path)["start_time"]) ?? 0
    }

    /// Onsets (seconds from the first sample) of the 2-ms test clicks: where a sample's
    /// magnitude exceeds `threshold` after at least `quiet` seconds below it marks a click;
    /// its onset is the centre of its energy minus 1 ms (robust against an encoder's
    /// pre-echo, which smears the first crossing by a millisecond or two).
    public static func clickOnsets(_ samples: [Float], rate: Int, threshold: Float = 0.5, quiet: Double = 0.1) -> [Double] {
        var onsets: [Double] = []
        var lastLoud = -Int.max / 2
        let gap = Int(quiet * Double(rate))
        let before = rate / 200, after = rate / 100  // 5 ms before the crossing, 10 ms after
        for (i, s) in samples.enumerated() where abs(s) > threshold {
            if i - lastLoud > gap {
                var energy = 0.0, moment = 0.0
                for k in max(0, i - before)..<min(samples.count, i + after) {
                    // Only what rises above the background tone (amplitude 0.1) counts.
                    let e = max(0, Double(samples[k] * samples[k]) - 0.02)
                    energy += e
                    moment += e * Double(k)
                }
                let centre = energy > 0 ? moment / energy : Double(i)
                onsets.append((centre + 0.5) / Double(rate) - 0.001)
            }
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

extension AudioCheck {
    /// Presentation times of the frames where the synthetic scene's flash box (bottom
    /// right, 1/16 of each side, at least 16 pixels) is lit, read by ffmpeg's signalstats.
    public static func flashTimes(_ path: String, width: Int, height: Int) throws -> [Double] {
        let w = min(width, max(16, width / 16) & ~1), h = min(height, max(16, height / 16) & ~1)
        let r = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0",
                                         "-vf", "crop=\(w - 4):\(h - 4):\(width - w + 2):\(height - h + 2),signalstats,metadata=print:key=lavfi.signalstats.YAVG:file=-",
                                         "-f", "null", "-"], timeout: 300)
        guard r.succeeded else { throw TestError.failed("ffmpeg signalstats on \(path) failed: \(r.stderr)") }
        var times: [Double] = []
        var time: Double?
        for line in r.stdout.split(separator: "\n") {
            if let range = line.range(of: "pts_time:") {
                time = Double(line[range.upperBound...].trimmingCharacters(in: .whitespaces))
            } else if line.hasPrefix("lavfi.signalstats.YAVG="), let t = time,
                      let y = Double(line.dropFirst("lavfi.signalstats.YAVG=".count)), y > 128 {
                times.append(t)
            }
        }
        return times
    }

    /// For each flash, the offset (click minus flash, seconds) to the nearest click onset.
    public static func offsets(flashes: [Double], clicks: [Double]) -> [Double] {
        flashes.compactMap { f in clicks.min(by: { abs($0 - f) < abs($1 - f) }).map { $0 - f } }
    }

    /// Whether the first audio stream's esds says MPEG-4 audio (0x40) AAC-LC (object type
    /// 2): the `mp4a.40.2` a browser asks for. Read from the file's bytes.
    public static func isMP4A402(_ path: String) throws -> Bool {
        let d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard let esds = d.indices.dropLast(4).first(where: { d[$0] == 0x65 && d[$0 + 1] == 0x73 && d[$0 + 2] == 0x64 && d[$0 + 3] == 0x73 }) else {
            return false
        }
        var i = esds + 8
        func descriptor(_ tag: UInt8) -> Int? {
            while i < min(d.count, esds + 200) {
                if d[i] == tag {
                    i += 1
                    while i < d.count && d[i] & 0x80 != 0 { i += 1 }
                    return i + 1
                }
                i += 1
            }
            return nil
        }
        guard let config = descriptor(0x04), config < d.count, d[config] == 0x40 else { return false }
        i = config
        guard let specific = descriptor(0x05), specific < d.count else { return false }
        return d[specific] >> 3 == 2
    }
}

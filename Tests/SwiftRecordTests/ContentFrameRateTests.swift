import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// An offline source whose picture changes only at the given ticks; every other frame is
/// the previous picture, marked unchanged (as damage-driven screen capture marks it).
final class ChangingAtSource: CaptureSource {
    let changes: Set<Int>
    let nativeSize = VideoSize(width: 160, height: 96)
    let pixelFormat = PixelFormat.yuv420p
    let nativeFrameRate: Rational? = Rational(30)
    let isLive = false
    let identifier = "changing-at"
    private let state = Locked((tick: 0, version: 0, last: PixelBuffer?.none))

    init(changes: Set<Int>) { self.changes = changes.union([0]) }

    func start() throws {}
    func stop() {}

    func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        try state.withLock { (s: inout sending (tick: Int, version: Int, last: PixelBuffer?)) throws(SwiftRecordError) -> CapturedFrame? in
            defer { s.tick += 1 }
            let time = MediaTime(value: Int64(s.tick), timescale: 30)
            if !changes.contains(s.tick), let last = s.last {
                return CapturedFrame(pixelBuffer: last, captureTime: time, index: s.tick, isUnchanged: true)
            }
            s.version += 1
            let buffer = try pool.makePixelBuffer()
            fill(buffer, seed: UInt64(s.version))
            s.last = buffer
            return CapturedFrame(pixelBuffer: buffer, captureTime: time, index: s.tick)
        }
    }
}

/// `FrameRateMode.content`: unchanged ticks are left out, the frame before lasts longer, and
/// the decoded pictures on the session's grid are the constant-rate recording's.
final class ContentFrameRateTests: XCTestCase {
    let ticks = 120
    let changes: Set<Int> = [5, 6, 7, 40, 100, 119]

    func record(_ url: URL, mode: FrameRateMode, codec: VideoCodec, keyFrameSeconds: Double? = nil) async throws -> CaptureStatistics {
        let source = ChangingAtSource(changes: changes)
        var settings = VideoSettings(codec: codec, width: 160, height: 96, rateControl: codec == .ffv1 ? .encoderDefault : .constantQuantizer(0),
                                     maxKeyFrameInterval: 600, expectedSourceFrameRate: Rational(30), preset: "ultrafast", threads: 1)
        settings.maxKeyFrameIntervalDuration = keyFrameSeconds
        if codec == .h264 { settings.encoderOptions["bf"] = "0" }
        let writer = try AssetWriter(outputURL: url)
        writer.movieFragmentInterval = MediaTime(seconds: 1)
        let input = AssetWriterInput(outputSettings: settings)
        let adaptor = PixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes:
            PixelBufferAttributes(width: 160, height: 96, pixelFormat: .yuv420p))
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let session = CaptureSession(source: source, writer: writer, adaptor: adaptor, frameRate: Rational(30)!,
                                     limit: CaptureLimit(frames: ticks), frameRateMode: mode)
        let stats = try await session.run()
        try await writer.finishWriting()
        XCTAssertEqual(writer.status, .completed)
        return stats
    }

    /// The container's duration in seconds (ffprobe).
    func duration(_ path: String) throws -> Double {
        let r = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path])
        return Double(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// (presentation tick, MD5) of every decoded frame.
    func decodedFrames(_ path: String) throws -> [(tick: Int, hash: String)] {
        let r = try Proc.run("ffmpeg", ["-v", "error", "-i", path, "-fps_mode", "passthrough", "-f", "framemd5", "-"], timeout: 120)
        guard r.status == 0 else { throw TestError.failed("ffmpeg framemd5 \(path): \(r.stderr)") }
        var tb = 1.0
        var out: [(Int, String)] = []
        for line in r.stdout.split(separator: "\n") {
            if line.hasPrefix("#tb 0:") {
                let parts = line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: "/")
                if parts.count == 2, let n = Double(parts[0]), let d = Double(parts[1]) { tb = n / d }
            }
            if line.hasPrefix("#") { continue }
            let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard f.count >= 6, let pts = Double(f[2]) else { continue }
            out.append((Int((pts * tb * 30).rounded()), f[5]))
        }
        return out
    }

    func testContentRateLeavesOutUnchangedTicksAndShowsTheSamePictures() async throws {
        try XCTSkipUnless(FF.available, "ffmpeg/ffprobe not installed; run scripts/install-deps.sh")
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let constantURL = dir.appendingPathComponent("constant.mkv"), contentURL = dir.appendingPathComponent("content.mkv")
        let constant = try await record(constantURL, mode: .constant, codec: .ffv1)
        let content = try await record(contentURL, mode: .content(maximumInterval: MediaTime(seconds: 1)), codec: .ffv1)
        XCTAssertEqual(constant.framesWritten, ticks)
        XCTAssertEqual(content.framesWritten + content.ticksUnchanged, ticks, "\(content)")
        let every = try decodedFrames(constantURL.path), sparse = try decodedFrames(contentURL.path)
        XCTAssertEqual(every.map(\.tick), Array(0..<ticks))
        XCTAssertEqual(sparse.count, content.framesWritten, "the file holds the frames the session says it wrote")
        // Changes, the repeats that push each out of the encoder, and one a second.
        XCTAssertLessThan(sparse.count, ticks / 2, "\(sparse.map(\.tick))")
        XCTAssertTrue(changes.union([0]).isSubset(of: Set(sparse.map(\.tick))), "every change has its frame: \(sparse.map(\.tick))")
        let gaps = zip(sparse.dropFirst(), sparse).map { $0.tick - $1.tick }
        XCTAssertLessThanOrEqual(gaps.max() ?? 0, 30, "at least a frame a second: \(sparse.map(\.tick))")
        // On the grid, each tick shows the frame before or at it: the constant recording's picture.
        var shown: [String] = []
        var next = 0
        for tick in 0..<ticks {
            while next < sparse.count, sparse[next].tick <= tick { next += 1 }
            shown.append(next > 0 ? sparse[next - 1].hash : "")
        }
        XCTAssertEqual(shown, every.map(\.hash))
        // The last frame lasts until the end: the file is as long as the constant one.
        XCTAssertEqual(try duration(contentURL.path), 4.0, accuracy: 0.002)
    }

    func testKeyFramesKeepComingInTimeAndTheFileIsWhole() async throws {
        try XCTSkipUnless(FF.available, "ffmpeg/ffprobe not installed; run scripts/install-deps.sh")
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("content.mp4")
        let stats = try await record(url, mode: .content(maximumInterval: MediaTime(seconds: 1)), codec: .h264, keyFrameSeconds: 1)
        let packets = try FF.videoPackets(url.path)
        XCTAssertEqual(packets.count, stats.framesWritten)
        let keys = packets.filter(\.key).map(\.time)
        XCTAssertEqual(keys.first, 0)
        // A key frame at least every second (the encoder's own interval is 600 frames).
        XCTAssertLessThanOrEqual(zip(keys.dropFirst(), keys).map { $0 - $1 }.max() ?? 99, 1.0 + 1.0 / 60, "\(keys)")
        XCTAssertGreaterThanOrEqual(keys.count, 4, "\(keys)")
        let check = try Proc.run("ffmpeg", ["-v", "warning", "-i", url.path, "-f", "null", "-"], timeout: 120)
        XCTAssertEqual(check.status, 0)
        XCTAssertEqual(check.stderr.trimmingCharacters(in: .whitespacesAndNewlines), "", "decodes without a warning")
        XCTAssertEqual(try duration(url.path), 4.0, accuracy: 0.002)
    }
}

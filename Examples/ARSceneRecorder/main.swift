// ARSceneRecorder: the recorder from an iOS blog post about capturing an AR scene with
// AVAssetWriter, ported line for line. The scene renders at 60 fps (a display link's
// ticks; the synthetic scene over a noisy camera-like feed stands in for ARKit + SceneKit),
// every second frame is written, so the file is 30 fps, stamped with the host clock's
// time of the tick (`CACurrentMediaTime()` / `ARFrame.timestamp` on iOS). As in the
// original: 1280x720 H.264 High at 2 Mbit/s, a key frame every 60 frames,
// `expectsMediaDataInRealTime`, no expected frame rate and no preset. A frame is skipped
// (not queued) when the input is not ready, as a live recorder must.
//
//   swift run ARSceneRecorder [output.mp4] [seconds]
//
// Prints one line of JSON: frames rendered, written and skipped, and the first and last
// written tick, so a test can check the file against them.
import Foundation
import SwiftRecord

/// `CACurrentMediaTime()`: the host clock in seconds.
func currentMediaTime() -> Double { MonotonicClock().now().seconds }

final class ARSceneRecorder {
    let writer: AssetWriter
    let input: AssetWriterInput
    let adaptor: PixelBufferAdaptor
    let scene: SyntheticScene
    private var sessionStarted = false
    private(set) var written = 0
    private(set) var skipped = 0
    private(set) var firstTick: Int?
    private(set) var lastTick: Int?

    init(outputURL: URL, width: Int = 1280, height: Int = 720) throws {
        try? FileManager.default.removeItem(at: outputURL)
        writer = AssetWriter(outputURL: outputURL, fileType: .mp4)
        let settings: [String: Any] = [
            AVVideoCodecKey: AVVideoCodecType.h264,
            AVVideoWidthKey: width,
            AVVideoHeightKey: height,
            AVVideoCompressionPropertiesKey: [
                AVVideoAverageBitRateKey: 2_000_000,
                AVVideoMaxKeyFrameIntervalKey: 60,
                AVVideoProfileLevelKey: AVVideoProfileLevelH264HighAutoLevel,
            ] as [String: Any],
        ]
        input = try AssetWriterInput(mediaType: .video, outputSettings: settings)
        input.expectsMediaDataInRealTime = true
        adaptor = PixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: PixelBufferAttributes(
            width: width, height: height, pixelFormat: .yuv420p))
        scene = try SyntheticScene(width: width, height: height)
        if writer.canAdd(input) { try writer.add(input) }
        try writer.startWriting()
    }

    /// The renderer's per-frame callback (`renderer(_:didRenderScene:atTime:)`).
    func didRender(tick: Int, atTime timestamp: Double) throws {
        guard tick % 2 == 0 else { return }  // write every second frame: 60 → 30 fps
        let time = MediaTime(seconds: timestamp, preferredTimescale: 1_000_000_000)
        if !sessionStarted {
            try writer.startSession(atSourceTime: time)
            sessionStarted = true
        }
        guard input.isReadyForMoreMediaData, let pool = adaptor.pixelBufferPool,
              let pixelBuffer = pool.makePixelBufferIfAvailable() else {
            skipped += 1
            return
        }
        try scene.renderCameraFrame(tick, into: pixelBuffer)
        if try adaptor.appendIfReady(pixelBuffer, withPresentationTime: time) {
            written += 1
            if firstTick == nil { firstTick = tick }
            lastTick = tick
        } else {
            skipped += 1
        }
    }

    func finish() async throws {
        input.markAsFinished()
        try await writer.finishWriting()
    }
}

let arguments = CommandLine.arguments.dropFirst()
let output = URL(fileURLWithPath: arguments.first ?? "ar-scene.mp4")
let seconds = arguments.dropFirst().first.flatMap(Double.init) ?? 5
let renderRate = 60.0

do {
    let recorder = try ARSceneRecorder(outputURL: output)
    // The display link: tick k is due at start + k/60 on the host clock. A renderer that
    // falls behind renders the late ticks at once (their timestamps stay the ticks' own).
    let start = currentMediaTime()
    let ticks = Int(seconds * renderRate)
    for tick in 0..<ticks {
        let due = start + Double(tick) / renderRate
        let wait = due - currentMediaTime()
        if wait > 0 { try await Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000)) }
        try recorder.didRender(tick: tick, atTime: due)
    }
    try await recorder.finish()
    print("{\"rendered\": \(ticks), \"written\": \(recorder.written), \"skipped\": \(recorder.skipped), "
          + "\"firstTick\": \(recorder.firstTick ?? -1), \"lastTick\": \(recorder.lastTick ?? -1), \"output\": \"\(output.path)\"}")
} catch {
    print("ARSceneRecorder: \(error)")
    exit(1)
}

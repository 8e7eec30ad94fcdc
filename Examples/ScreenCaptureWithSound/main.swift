// ScreenCaptureWithSound: video and audio sample buffers written side by side, the way
// ReplayKit's capture handler samples do with AVAssetWriter.
//
// A capture API hands the app sample buffers of both kinds on its own threads, each
// stamped with the host clock (here the synthetic scene at 30 fps and the synthetic tone,
// which clicks on the scene's flashes, stand in for RPScreenRecorder's `.video` and
// `.audioApp` buffers). The handler starts the session at the first video buffer's time,
// appends each buffer to its input when the input is ready (and skips it otherwise, as a
// live recorder must), and the writer keeps both tracks in sync from their times alone.
//
//   swift run ScreenCaptureWithSound [output.mp4] [seconds]
import Foundation
import SwiftRecord
import Synchronization

let arguments = CommandLine.arguments.dropFirst()
let output = URL(fileURLWithPath: arguments.first ?? "capture.mp4")
let seconds = arguments.dropFirst().first.flatMap(Double.init) ?? 4
let width = 640, height = 360

/// What a capture handler receives (RPSampleBufferType's `.video` and `.audioApp`).
enum CapturedSample {
    case video(PixelBuffer, MediaTime)
    case audio(AudioSampleBuffer)
}

/// The app's side: an AVAssetWriter-style recorder fed from the capture threads.
final class Recorder: Sendable {
    let writer: AssetWriter
    let videoInput: AssetWriterInput
    let audioInput: AssetWriterInput
    let adaptor: PixelBufferAdaptor
    private let counts = Counts()

    init(url: URL) throws {
        // As with AVAssetWriter, writing fails if the file exists: remove an old one first.
        try? FileManager.default.removeItem(at: url)
        writer = AssetWriter(outputURL: url, fileType: .mp4)
        videoInput = try AssetWriterInput(mediaType: .video, outputSettings: [
            AVVideoCodecKey: AVVideoCodecType.h264,
            AVVideoWidthKey: width, AVVideoHeightKey: height,
            AVVideoCompressionPropertiesKey: [AVVideoAverageBitRateKey: 2_000_000] as [String: Any],
        ])
        videoInput.expectsMediaDataInRealTime = true
        audioInput = try AssetWriterInput(mediaType: .audio, outputSettings: [
            AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 48_000, AVNumberOfChannelsKey: 2, AVEncoderBitRateKey: 128_000,
        ])
        audioInput.expectsMediaDataInRealTime = true
        adaptor = PixelBufferAdaptor(assetWriterInput: videoInput)
        try writer.add(videoInput)
        try writer.add(audioInput)
        try writer.startWriting()
    }

    /// The capture handler: called on the capture threads.
    func process(_ sample: CapturedSample) {
        do {
            switch sample {
            case .video(let buffer, let time):
                // The session starts at the first picture; sound from before it is cut.
                if counts.startOnce() { try writer.startSession(atSourceTime: time) }
                if videoInput.isReadyForMoreMediaData {
                    try adaptor.append(buffer, withPresentationTime: time)
                    counts.add(video: 1)
                } else {
                    counts.add(skipped: 1)
                }
            case .audio(let buffer):
                guard counts.started, audioInput.isReadyForMoreMediaData else { return }
                try audioInput.append(buffer)
                counts.add(audio: buffer.frameCount)
            }
        } catch {
            print("ScreenCaptureWithSound: append failed: \(error)")
        }
    }

    func finish() async throws -> (video: Int, skipped: Int, audioFrames: Int) {
        videoInput.markAsFinished()
        audioInput.markAsFinished()
        try await writer.finishWriting()
        return counts.totals
    }
}

/// Counters shared by the capture threads (the app's own lock: the standard library's `Mutex`).
final class Counts: Sendable {
    private let state = Mutex((started: false, video: 0, skipped: 0, audio: 0))
    var started: Bool { state.withLock { $0.started } }
    func startOnce() -> Bool { state.withLock { s in defer { s.started = true }; return !s.started } }
    func add(video: Int = 0, skipped: Int = 0, audio: Int = 0) {
        state.withLock { $0.video += video; $0.skipped += skipped; $0.audio += audio }
    }
    var totals: (video: Int, skipped: Int, audioFrames: Int) { state.withLock { ($0.video, $0.skipped, $0.audio) } }
}

do {
    let recorder = try Recorder(url: output)
    let flashClock = SyntheticFlashClock()
    let fps = Rational(30)!
    let screen = try SyntheticSource(options: CaptureSourceOptions(size: VideoSize(width: width, height: height), frameRate: fps, realtime: true,
                                                                   configurations: [SyntheticSource.Configuration(flashClock: flashClock)]))
    let sound = try SyntheticAudioSource(options: AudioSourceOptions(frameRate: fps, realtime: true, flashClock: flashClock))
    try sound.start()
    let clock = MonotonicClock()
    let end = clock.now().seconds + seconds

    // The sound's capture thread: buffers every 10 ms, stamped with the host clock.
    let audioThread = Thread {
        while clock.now().seconds < end, let chunk = try? sound.nextChunk() {
            recorder.process(.audio(chunk.samples))
        }
    }
    audioThread.start()
    // The screen's: a picture every 1/30 s, drawn into a buffer of the adaptor's pool.
    let start = clock.now().seconds
    var frame = 0
    while clock.now().seconds < end {
        let due = start + Double(frame) / 30
        let wait = due - clock.now().seconds
        if wait > 0 { try await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
        frame += 1
        guard let pool = recorder.adaptor.pixelBufferPool, let captured = try screen.nextFrame(from: pool) else { continue }
        recorder.process(.video(captured.pixelBuffer, captured.captureTime))
    }
    sound.stop()
    while audioThread.isExecuting { try await Task.sleep(nanoseconds: 10_000_000) }
    let totals = try await recorder.finish()
    print("wrote \(output.path): \(totals.video) pictures (\(totals.skipped) skipped), \(String(format: "%.2f", Double(totals.audioFrames) / 48_000)) s of sound")
} catch {
    print("ScreenCaptureWithSound: \(error)")
    exit(1)
}

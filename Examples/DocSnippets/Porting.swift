// PortingFromAVFoundation.md.
import Dispatch
import Foundation
import SwiftRecord

/// "A recorder, ported": set-up with Apple's settings dictionary, the per-frame callback
/// and the finish, in the order the article shows them.
func portedRecorderSnippet() async throws {
    let url = URL(fileURLWithPath: "recording.mp4")
    let writer = AssetWriter(outputURL: url, fileType: .mp4)
    let input = try AssetWriterInput(mediaType: .video, outputSettings: [
        AVVideoCodecKey: AVVideoCodecType.h264,
        AVVideoWidthKey: 1280,
        AVVideoHeightKey: 720,
        AVVideoCompressionPropertiesKey: [
            AVVideoAverageBitRateKey: 2_000_000,
            AVVideoMaxKeyFrameIntervalKey: 60,
            AVVideoProfileLevelKey: AVVideoProfileLevelH264HighAutoLevel,
        ] as [String: Any],
    ])
    input.expectsMediaDataInRealTime = true
    let adaptor = PixelBufferAdaptor(
        assetWriterInput: input,
        sourcePixelBufferAttributes: PixelBufferAttributes(
            width: 1280, height: 720, pixelFormat: .bgra))
    if writer.canAdd(input) {
        try writer.add(input)
    }
    try writer.startWriting()

    let clock = MonotonicClock()        // the host clock of CACurrentMediaTime()
    try writer.startSession(atSourceTime: clock.now())

    /// Called for every frame rendered, as a display link's callback is.
    func didRenderFrame() throws {
        let time = clock.now()
        guard input.isReadyForMoreMediaData,
              let pool = adaptor.pixelBufferPool,
              let pixelBuffer = pool.makePixelBufferIfAvailable() else {
            return                                      // behind: drop this frame
        }
        try pixelBuffer.lockBaseAddress()
        if let base = pixelBuffer.baseAddress {         // BGRA, bytesPerRow apart
            for y in 0..<pixelBuffer.height {
                let row = base + y * pixelBuffer.bytesPerRow
                row.initializeMemory(as: UInt32.self, repeating: 0xFF00_00FF,
                                     count: pixelBuffer.width)     // blue
            }
        }
        try pixelBuffer.unlockBaseAddress()
        _ = try adaptor.appendIfReady(pixelBuffer, withPresentationTime: time)
    }

    for _ in 0..<3 { try didRenderFrame() }

    input.markAsFinished()
    do {
        try await writer.finishWriting()
    } catch {
        print("writing failed (\(writer.status)): \(error.kind): \(error.message)")
    }
}

/// "Pulling with requestMediaDataWhenReady", after the set-up the article describes.
func requestMediaDataSnippet() throws {
    let writer = try AssetWriter(outputURL: URL(fileURLWithPath: "scene.mov"))
    let input = AssetWriterInput(outputSettings: VideoSettings(codec: .hevc, width: 1280, height: 720))
    let adaptor = PixelBufferAdaptor(assetWriterInput: input)
    let scene = try SyntheticSource(options: CaptureSourceOptions(size: VideoSize(width: 1280, height: 720)))
    try writer.add(input)
    try writer.startWriting()
    try writer.startSession(atSourceTime: .zero)

    let queue = DispatchQueue(label: "media feeder")
    input.requestMediaDataWhenReady(on: queue) {
        while input.isReadyForMoreMediaData {
            guard let pool = adaptor.pixelBufferPool,
                  let frame = try? scene.nextFrame(from: pool),
                  frame.index < 300 else {
                input.markAsFinished()
                writer.finishWriting { print("finished: \(writer.status)") }
                return
            }
            do {
                try adaptor.append(frame.pixelBuffer,
                                   withPresentationTime: frame.captureTime)
            } catch {
                print("frame \(frame.index) not appended: \(error)")
            }
        }
    }
}

/// "Output settings": the typed form of the dictionary, and an audio input with Apple's keys.
func settingsSnippet() throws {
    var settings = VideoSettings(
        codec: .h264, width: 1280, height: 720,
        rateControl: .averageBitRate(2_000_000), maxKeyFrameInterval: 60)
    // AVVideoProfileLevelH264HighAutoLevel, typed:
    settings.profileLevel = .h264(.high, level: .auto)
    settings.preset = "veryfast"         // x264's presets: no Apple counterpart
    let videoInput = AssetWriterInput(outputSettings: settings)
    let audioInput = try AssetWriterInput(mediaType: .audio, outputSettings: [
        AVFormatIDKey: kAudioFormatMPEG4AAC,
        AVSampleRateKey: 48_000,
        AVNumberOfChannelsKey: 2,
        AVEncoderBitRateKey: 128_000,
    ])
    _ = (videoInput, audioInput)
}

/// "Pixel buffers".
func pixelBufferSnippet() throws {
    let pool = try PixelBufferPool(width: 640, height: 360, pixelFormat: .nv12,
                                   maximumBufferCount: 4)
    // CVPixelBufferPoolCreatePixelBuffer:
    let pixelBuffer = try pool.makePixelBuffer()
    // Lock, write, unlock:
    pixelBuffer.withWriteAccess { planes in
        for plane in planes {
            plane.baseAddress.initializeMemory(
                as: UInt8.self, repeating: 128,
                count: plane.bytesPerRow * plane.height)
        }
    }
    print(pixelBuffer.planeCount)               // 2
    print(pixelBuffer.bytesPerRow(ofPlane: 1))  // at least 640
}

/// "Time".
func timeSnippet() {
    // CMTime(value: 1, timescale: 30):
    let frameDuration = MediaTime(value: 1, timescale: 30)
    // CMTime(seconds: 1234.5678, preferredTimescale: 1_000_000_000):
    let hostTime = MediaTime(seconds: 1234.5678, preferredTimescale: 1_000_000_000)
    let tenFrames = frameDuration * 10        // CMTimeMultiply
    let fiveFrames = tenFrames / 2            // CMTimeMultiplyByRatio(_, 1, 2)
    let range = TimeRange(start: hostTime, duration: tenFrames)
    print(range.containsTime(hostTime + fiveFrames))              // true
    let end = range.end.convertScale(600, rounding: .towardZero)
    print(end.value, end.timescale)                               // 740940 600
    print(tenFrames.seconds)                                      // 0.333…
}

/// "Sample buffers and sound".
func audioSnippet(audioInput: AssetWriterInput) async throws {
    let format = AudioFormat(sampleType: .f32, sampleRate: 48_000,
                             channelLayout: .stereo)
    let tenMilliseconds = [Float](repeating: 0, count: 480 * format.channelCount)
    let buffer = try AudioSampleBuffer(format: format, presentationTimeStamp: .zero,
                                       interleaved: tenMilliseconds)
    try await audioInput.append(buffer)
    try await audioInput.append(buffer.withPresentationTimeStamp(buffer.duration))
}

/// "A flipped picture".
func flippedPictureSnippet() throws {
    let videoWriterInput = AssetWriterInput(outputSettings: VideoSettings(
        codec: .h264, width: 1280, height: 720))
    videoWriterInput.transform = CGAffineTransformMakeScale(1, -1)   // a vertical flip
    // or: CGAffineTransform(scaleX: 1, y: -1), CGAffineTransform(rotationAngle: .pi / 2)
    let flippedWriter = AssetWriter(url: URL(fileURLWithPath: "flipped.mp4"), fileType: .mp4)
    try flippedWriter.add(videoWriterInput)
}

/// "Segments in memory".
func segmentsSnippet() {
    final class Uploader: AssetWriterDelegate {
        func assetWriter(_ writer: AssetWriter, didOutputSegmentData segmentData: Data,
                         segmentType: AssetSegmentType, segmentReport: AssetSegmentReport?) {
            switch segmentType {
            case .initialization:
                print("EXT-X-MAP: \(segmentData.count) bytes")
            case .separable:
                let seconds = segmentReport?.trackReports.first?.duration.seconds ?? 0
                print("segment of \(seconds) s: \(segmentData.count) bytes")
            }
        }
    }

    let uploader = Uploader()
    let segmenter = AssetWriter(contentType: .mp4)
    segmenter.outputFileTypeProfile = .mpeg4AppleHLS
    segmenter.preferredOutputSegmentInterval = MediaTime(value: 6, timescale: 1)
    segmenter.initialSegmentStartTime = .zero
    segmenter.delegate = uploader
    _ = segmenter
}

// A ScreenCaptureKit capture engine as Mac screen recorders write one (the shape of Apple's
// "Capturing screen content in macOS" sample's CaptureEngine: an SCStream set up from a
// filter and a configuration, a stream output turning sample buffers into frames for an
// async stream, an AVAssetWriter behind it with the screen, the system audio and the
// microphone as three tracks). Written for the Mac; only the parts marked PLATFORM differ here.
import AVFoundation
import CoreMedia
import ScreenCaptureKit

/// A picture the engine hands its consumer.
struct EngineFrame {
    // PLATFORM: the Mac's engines keep the frame's IOSurface; Linux has none: the pixel buffer.
    let pixelBuffer: CVPixelBuffer
    let contentRect: CGRect
    let dirtyRectCount: Int
    let presentationTime: CMTime
}

/// Writes the stream's pictures, system audio and microphone to a movie with AVAssetWriter.
final class MovieWriter: @unchecked Sendable {
    // @unchecked: the sample queues call in one at a time (the lock), `finish()` after the stream stopped.
    private let assetWriter: AVAssetWriter
    private let videoInput: AVAssetWriterInput
    private let audioInput: AVAssetWriterInput?
    private let microphoneInput: AVAssetWriterInput?
    private let lock = NSLock()
    private var sessionStarted = false
    private(set) var framesWritten = 0
    private(set) var audioBuffersWritten = 0
    private(set) var microphoneBuffersWritten = 0

    private static func audioInput() -> AVAssetWriterInput {
        let settings: [String: Any] = [
            AVFormatIDKey: kAudioFormatMPEG4AAC,
            AVSampleRateKey: 48_000,
            AVNumberOfChannelsKey: 2,
            AVEncoderBitRateKey: 128_000,
        ]
        let input = AVAssetWriterInput(mediaType: .audio, outputSettings: settings)
        input.expectsMediaDataInRealTime = true
        return input
    }

    init(url: URL, width: Int, height: Int, capturesAudio: Bool, capturesMicrophone: Bool) throws {
        assetWriter = try AVAssetWriter(outputURL: url, fileType: .mov)
        let settings: [String: Any] = [
            AVVideoCodecKey: AVVideoCodecType.h264,
            AVVideoWidthKey: width,
            AVVideoHeightKey: height,
        ]
        videoInput = AVAssetWriterInput(mediaType: .video, outputSettings: settings)
        videoInput.expectsMediaDataInRealTime = true
        guard assetWriter.canAdd(videoInput) else { throw EngineError.cannotWrite(url) }
        assetWriter.add(videoInput)
        audioInput = capturesAudio ? MovieWriter.audioInput() : nil
        microphoneInput = capturesMicrophone ? MovieWriter.audioInput() : nil
        for input in [audioInput, microphoneInput].compactMap({ $0 }) {
            guard assetWriter.canAdd(input) else { throw EngineError.cannotWrite(url) }
            assetWriter.add(input)
        }
        guard assetWriter.startWriting() else { throw assetWriter.error ?? EngineError.cannotWrite(url) }
    }

    func append(_ sampleBuffer: CMSampleBuffer) {
        lock.lock()
        defer { lock.unlock() }
        if !sessionStarted {
            assetWriter.startSession(atSourceTime: CMSampleBufferGetPresentationTimeStamp(sampleBuffer))
            sessionStarted = true
        }
        if videoInput.isReadyForMoreMediaData, videoInput.append(sampleBuffer) { framesWritten += 1 }
    }

    /// Sound from the stream: written once the first picture started the session.
    func appendAudio(_ sampleBuffer: CMSampleBuffer, of outputType: SCStreamOutputType) {
        lock.lock()
        defer { lock.unlock() }
        guard sessionStarted, CMSampleBufferDataIsReady(sampleBuffer) else { return }
        switch outputType {
        case .audio:
            if let audioInput, audioInput.isReadyForMoreMediaData, audioInput.append(sampleBuffer) { audioBuffersWritten += 1 }
        case .microphone:
            if let microphoneInput, microphoneInput.isReadyForMoreMediaData, microphoneInput.append(sampleBuffer) { microphoneBuffersWritten += 1 }
        case .screen:
            break
        }
    }

    func finish() async {
        lock.withLock {
            videoInput.markAsFinished()
            audioInput?.markAsFinished()
            microphoneInput?.markAsFinished()
        }
        await assetWriter.finishWriting()
    }
}

enum EngineError: Error {
    case cannotWrite(URL)
}

/// Starts and stops a stream, handing its complete pictures to an async stream.
final class CaptureEngine: NSObject, @unchecked Sendable {
    // @unchecked: set up and torn down by one task at a time, as the Mac's engines are.
    private(set) var stream: SCStream?
    private var streamOutput: CaptureEngineStreamOutput?
    private let videoSampleBufferQueue = DispatchQueue(label: "CaptureEngine.VideoSampleBufferQueue")
    private let audioSampleBufferQueue = DispatchQueue(label: "CaptureEngine.AudioSampleBufferQueue")
    private let micSampleBufferQueue = DispatchQueue(label: "CaptureEngine.MicSampleBufferQueue")
    private var continuation: AsyncThrowingStream<EngineFrame, any Error>.Continuation?

    func startCapture(configuration: SCStreamConfiguration, filter: SCContentFilter,
                      movieWriter: MovieWriter?) -> AsyncThrowingStream<EngineFrame, any Error> {
        AsyncThrowingStream<EngineFrame, any Error> { continuation in
            self.continuation = continuation
            let streamOutput = CaptureEngineStreamOutput(continuation: continuation, movieWriter: movieWriter)
            self.streamOutput = streamOutput
            streamOutput.capturedFrameHandler = { continuation.yield($0) }
            let stream = SCStream(filter: filter, configuration: configuration, delegate: streamOutput)
            do {
                try stream.addStreamOutput(streamOutput, type: .screen, sampleHandlerQueue: videoSampleBufferQueue)
                if configuration.capturesAudio {
                    try stream.addStreamOutput(streamOutput, type: .audio, sampleHandlerQueue: audioSampleBufferQueue)
                }
                if configuration.captureMicrophone {
                    try stream.addStreamOutput(streamOutput, type: .microphone, sampleHandlerQueue: micSampleBufferQueue)
                }
                self.stream = stream
                Task {
                    do { try await stream.startCapture() } catch { continuation.finish(throwing: error) }
                }
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }

    func stopCapture() async {
        do {
            try await stream?.stopCapture()
            continuation?.finish()
        } catch {
            continuation?.finish(throwing: error)
        }
        await streamOutput?.movieWriter?.finish()
    }
}

/// The stream's output and delegate: complete pictures become frames, and go to the movie
/// with the sound.
private final class CaptureEngineStreamOutput: NSObject, SCStreamOutput, SCStreamDelegate, @unchecked Sendable {
    // @unchecked: each type is called on its own serial queue (SCStream's rule); the
    // handler is touched on the video queue only, the writer locks.
    var capturedFrameHandler: ((EngineFrame) -> Void)?
    let movieWriter: MovieWriter?
    private let continuation: AsyncThrowingStream<EngineFrame, any Error>.Continuation

    init(continuation: AsyncThrowingStream<EngineFrame, any Error>.Continuation, movieWriter: MovieWriter?) {
        self.continuation = continuation
        self.movieWriter = movieWriter
    }

    func stream(_ stream: SCStream, didOutputSampleBuffer sampleBuffer: CMSampleBuffer, of outputType: SCStreamOutputType) {
        switch outputType {
        case .screen:
            guard let frame = makeFrame(for: sampleBuffer) else { return }
            movieWriter?.append(sampleBuffer)
            capturedFrameHandler?(frame)
        case .audio, .microphone:
            movieWriter?.appendAudio(sampleBuffer, of: outputType)
        }
    }

    /// A frame for a complete picture; nil for idle and other statuses.
    private func makeFrame(for sampleBuffer: CMSampleBuffer) -> EngineFrame? {
        guard let attachmentsArray = CMSampleBufferGetSampleAttachmentsArray(sampleBuffer, createIfNecessary: false) as? [[SCStreamFrameInfo: Any]],
              let attachments = attachmentsArray.first,
              let statusRawValue = attachments[SCStreamFrameInfo.status] as? Int,
              let status = SCFrameStatus(rawValue: statusRawValue), status == .complete,
              let pixelBuffer = sampleBuffer.imageBuffer else { return nil }
        // PLATFORM: the Mac's attachments hold the rectangles as CGRect dictionary
        // representations (CGRect(dictionaryRepresentation:)); here they are CGRects.
        let contentRect = attachments[.contentRect] as? CGRect ?? .zero
        let dirtyRects = attachments[.dirtyRects] as? [CGRect] ?? []
        return EngineFrame(pixelBuffer: pixelBuffer, contentRect: contentRect, dirtyRectCount: dirtyRects.count,
                           presentationTime: CMSampleBufferGetPresentationTimeStamp(sampleBuffer))
    }

    func stream(_ stream: SCStream, didStopWithError error: any Error) {
        continuation.finish(throwing: error)
    }
}

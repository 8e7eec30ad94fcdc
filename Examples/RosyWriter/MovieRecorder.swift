// The writer half of Apple's RosyWriter sample (MovieRecorder: "a real-time movie recorder
// which is totally non-blocking"), ported to Swift. Every AVFoundation, Core Media and
// Core Video call is as Apple writes it; on Linux only the import line's module is
// swift-record's. Nothing in this file is platform-specific.
import AVFoundation

/// What the recorder tells its owner, on the callback queue.
protocol MovieRecorderDelegate: AnyObject, Sendable {
    func movieRecorderDidFinishPreparing(_ recorder: MovieRecorder)
    func movieRecorder(_ recorder: MovieRecorder, didFailWithError error: Error)
    func movieRecorderDidFinishRecording(_ recorder: MovieRecorder)
}

/// Records one video and one audio track to a QuickTime movie. Samples are appended on a
/// private serial queue, so a capture callback never waits for the writer; a sample that
/// arrives while the input is busy is dropped, as a live recorder must.
///
/// Its mutable state is guarded by `lock` (the original's `@synchronized (self)`), or only
/// touched on `writingQueue`; that is what makes it `Sendable`.
final class MovieRecorder: @unchecked Sendable {
    /// The recorder's life, in order; the last two are terminal.
    private enum RecorderStatus: Int, Comparable {
        case idle, preparingToRecord, recording
        case finishingRecordingPart1   // in-flight samples are still being appended
        case finishingRecordingPart2   // the writer is finishing the file
        case finished, failed
        static func < (a: RecorderStatus, b: RecorderStatus) -> Bool { a.rawValue < b.rawValue }
    }

    struct RecorderError: Error, CustomStringConvertible {
        let description: String
    }

    private let lock = NSLock()
    private var status = RecorderStatus.idle
    private let writingQueue = DispatchQueue(label: "movierecorder.writing")
    private let url: URL
    private weak var delegate: MovieRecorderDelegate?
    private let delegateCallbackQueue: DispatchQueue

    // Touched on writingQueue only, once prepared.
    private var assetWriter: AVAssetWriter?
    private var haveStartedSession = false
    private var videoInput: AVAssetWriterInput?
    private var audioInput: AVAssetWriterInput?

    // Set before prepareToRecord(), under the lock.
    private var videoTrackSourceFormatDescription: CMFormatDescription?
    private var videoTrackTransform = CGAffineTransform.identity
    private var videoTrackSettings: [String: Any]?
    private var audioTrackSourceFormatDescription: CMFormatDescription?
    private var audioTrackSettings: [String: Any]?

    /// Counts for whoever checks the movie afterwards.
    private(set) var appendedVideoFrames = 0
    private(set) var droppedVideoFrames = 0

    init(url: URL, delegate: MovieRecorderDelegate, callbackQueue: DispatchQueue) {
        self.url = url
        self.delegate = delegate
        self.delegateCallbackQueue = callbackQueue
    }

    // MARK: Tracks

    func addVideoTrack(sourceFormatDescription formatDescription: CMFormatDescription, transform: CGAffineTransform, settings videoSettings: [String: Any]?) {
        lock.withLock {
            guard status == .idle, videoTrackSourceFormatDescription == nil else {
                print("MovieRecorder: a video track can be added once, before preparing")
                return
            }
            videoTrackSourceFormatDescription = formatDescription
            videoTrackTransform = transform
            videoTrackSettings = videoSettings
        }
    }

    func addAudioTrack(sourceFormatDescription formatDescription: CMFormatDescription, settings audioSettings: [String: Any]?) {
        lock.withLock {
            guard status == .idle, audioTrackSourceFormatDescription == nil else {
                print("MovieRecorder: an audio track can be added once, before preparing")
                return
            }
            audioTrackSourceFormatDescription = formatDescription
            audioTrackSettings = audioSettings
        }
    }

    // MARK: Recording

    /// Sets the writer up off the caller's thread; the delegate hears when it is ready.
    func prepareToRecord() {
        let ready = lock.withLock { () -> Bool in
            guard status == .idle else { return false }
            transition(to: .preparingToRecord, error: nil)
            return true
        }
        guard ready else {
            print("MovieRecorder: already prepared")
            return
        }
        DispatchQueue.global(qos: .utility).async {
            var error: Error?
            // AVAssetWriter will not write over an existing file.
            try? FileManager.default.removeItem(at: self.url)
            do {
                self.assetWriter = try AVAssetWriter(url: self.url, fileType: .mov)
            } catch let e {
                error = e
            }
            let (videoFormat, transform, videoSettings, audioFormat, audioSettings) = self.lock.withLock {
                (self.videoTrackSourceFormatDescription, self.videoTrackTransform, self.videoTrackSettings,
                 self.audioTrackSourceFormatDescription, self.audioTrackSettings)
            }
            if error == nil, let videoFormat {
                error = self.setupAssetWriterVideoInput(sourceFormatDescription: videoFormat, transform: transform, settings: videoSettings)
            }
            if error == nil, let audioFormat {
                error = self.setupAssetWriterAudioInput(sourceFormatDescription: audioFormat, settings: audioSettings)
            }
            if error == nil, let writer = self.assetWriter {
                let success = writer.startWriting()
                if !success {
                    error = writer.error
                }
            }
            self.lock.withLock {
                self.transition(to: error == nil ? .recording : .failed, error: error)
            }
        }
    }

    func appendVideoSampleBuffer(_ sampleBuffer: CMSampleBuffer) {
        appendSampleBuffer(sampleBuffer, ofMediaType: .video)
    }

    /// Wraps a rendered picture in a sample buffer stamped `presentationTime` and appends it.
    func appendVideoPixelBuffer(_ pixelBuffer: CVPixelBuffer, withPresentationTime presentationTime: CMTime) {
        guard let formatDescription = lock.withLock({ videoTrackSourceFormatDescription }) else { return }
        var sampleBuffer: CMSampleBuffer?
        var timingInfo = CMSampleTimingInfo(duration: .invalid, presentationTimeStamp: presentationTime, decodeTimeStamp: .invalid)
        let err = CMSampleBufferCreateForImageBuffer(allocator: kCFAllocatorDefault, imageBuffer: pixelBuffer, dataReady: true,
                                                     makeDataReadyCallback: nil, refcon: nil, formatDescription: formatDescription,
                                                     sampleTiming: &timingInfo, sampleBufferOut: &sampleBuffer)
        if let sampleBuffer {
            appendSampleBuffer(sampleBuffer, ofMediaType: .video)
        } else {
            print("MovieRecorder: sample buffer create failed (\(err))")
        }
    }

    func appendAudioSampleBuffer(_ sampleBuffer: CMSampleBuffer) {
        appendSampleBuffer(sampleBuffer, ofMediaType: .audio)
    }

    /// Appends what is in flight, then finishes the file; the delegate hears how it went.
    func finishRecording() {
        let shouldFinish = lock.withLock { () -> Bool in
            switch status {
            case .recording:
                transition(to: .finishingRecordingPart1, error: nil)
                return true
            case .failed:
                // An append may have failed the recorder meanwhile: nothing to finish.
                print("MovieRecorder: recording has failed, nothing to do")
                return false
            default:
                print("MovieRecorder: not recording")
                return false
            }
        }
        guard shouldFinish else { return }
        writingQueue.async {
            let writer: AVAssetWriter? = self.lock.withLock {
                // An in-flight append may have failed the recorder.
                guard self.status == .finishingRecordingPart1 else { return nil }
                // No append may run concurrently with finishWriting: none is queued after this.
                self.transition(to: .finishingRecordingPart2, error: nil)
                return self.assetWriter
            }
            guard let writer else { return }
            writer.finishWriting {
                self.lock.withLock {
                    if let error = writer.error {
                        self.transition(to: .failed, error: error)
                    } else {
                        self.transition(to: .finished, error: nil)
                    }
                }
            }
        }
    }

    /// How many video frames went in and how many were dropped (read after finishing).
    var videoFrameCounts: (appended: Int, dropped: Int) { lock.withLock { (appendedVideoFrames, droppedVideoFrames) } }

    // MARK: Internal

    private func appendSampleBuffer(_ sampleBuffer: CMSampleBuffer, ofMediaType mediaType: AVMediaType) {
        guard lock.withLock({ status >= .recording }) else {
            print("MovieRecorder: not ready to record yet")
            return
        }
        writingQueue.async {
            // The recorder may have failed or finished meanwhile: the sample is let go.
            guard self.lock.withLock({ self.status <= .finishingRecordingPart1 }), let writer = self.assetWriter else { return }
            if !self.haveStartedSession {
                writer.startSession(atSourceTime: CMSampleBufferGetPresentationTimeStamp(sampleBuffer))
                self.haveStartedSession = true
            }
            guard let input = mediaType == .video ? self.videoInput : self.audioInput else { return }
            if input.isReadyForMoreMediaData {
                let success = input.append(sampleBuffer)
                if !success {
                    let error = writer.error
                    self.lock.withLock { self.transition(to: .failed, error: error) }
                } else if mediaType == .video {
                    self.lock.withLock { self.appendedVideoFrames += 1 }
                }
            } else {
                print("MovieRecorder: \(mediaType) input not ready for more media data, dropping buffer")
                if mediaType == .video { self.lock.withLock { self.droppedVideoFrames += 1 } }
            }
        }
    }

    /// Call with the lock held.
    private func transition(to newStatus: RecorderStatus, error: Error?) {
        guard newStatus != status else { return }
        status = newStatus
        var notify = newStatus == .recording
        if newStatus == .finished || newStatus == .failed {
            notify = true
            // Tear the writer down once no sample is in flight; a failed movie is removed.
            writingQueue.async {
                self.assetWriter = nil
                self.videoInput = nil
                self.audioInput = nil
                if newStatus == .failed {
                    try? FileManager.default.removeItem(at: self.url)
                }
            }
        }
        guard notify, let delegate else { return }
        delegateCallbackQueue.async {
            switch newStatus {
            case .recording: delegate.movieRecorderDidFinishPreparing(self)
            case .finished: delegate.movieRecorderDidFinishRecording(self)
            case .failed: delegate.movieRecorder(self, didFailWithError: error ?? RecorderError(description: "unknown error"))
            default: break
            }
        }
    }

    private func setupAssetWriterAudioInput(sourceFormatDescription audioFormatDescription: CMFormatDescription, settings: [String: Any]?) -> Error? {
        var audioSettings = settings
        if audioSettings == nil {
            print("MovieRecorder: no audio settings provided, using default settings")
            audioSettings = [AVFormatIDKey: kAudioFormatMPEG4AAC]
        }
        guard let writer = assetWriter, writer.canApply(outputSettings: audioSettings, forMediaType: .audio) else {
            return RecorderError(description: "cannot set up the audio input")
        }
        let input = AVAssetWriterInput(mediaType: .audio, outputSettings: audioSettings, sourceFormatHint: audioFormatDescription)
        input.expectsMediaDataInRealTime = true
        guard writer.canAdd(input) else { return RecorderError(description: "cannot add the audio input") }
        writer.add(input)
        audioInput = input
        return nil
    }

    private func setupAssetWriterVideoInput(sourceFormatDescription videoFormatDescription: CMFormatDescription, transform: CGAffineTransform,
                                            settings: [String: Any]?) -> Error? {
        var videoSettings = settings
        if videoSettings == nil {
            print("MovieRecorder: no video settings provided, using default settings")
            let dimensions = CMVideoFormatDescriptionGetDimensions(videoFormatDescription)
            let numPixels = Int(dimensions.width) * Int(dimensions.height)
            // Below SD is taken to be for streaming: fewer bits per pixel.
            let bitsPerPixel: Double = numPixels < 640 * 480 ? 4.05 : 10.1
            let bitsPerSecond = Int(Double(numPixels) * bitsPerPixel)
            let compressionProperties: [String: Any] = [
                AVVideoAverageBitRateKey: bitsPerSecond,
                AVVideoExpectedSourceFrameRateKey: 30,
                AVVideoMaxKeyFrameIntervalKey: 30,
            ]
            videoSettings = [
                AVVideoCodecKey: AVVideoCodecType.h264,
                AVVideoWidthKey: dimensions.width,
                AVVideoHeightKey: dimensions.height,
                AVVideoCompressionPropertiesKey: compressionProperties,
            ]
        }
        guard let writer = assetWriter, writer.canApply(outputSettings: videoSettings, forMediaType: .video) else {
            return RecorderError(description: "cannot set up the video input")
        }
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: videoSettings, sourceFormatHint: videoFormatDescription)
        input.expectsMediaDataInRealTime = true
        input.transform = transform
        guard writer.canAdd(input) else { return RecorderError(description: "cannot add the video input") }
        writer.add(input)
        videoInput = input
        return nil
    }
}

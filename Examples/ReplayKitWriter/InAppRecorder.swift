// The port: an in-app screen recorder written as Apple's ReplayKit samples write one —
// RPScreenRecorder's capture handler switching on RPSampleBufferType into an AVAssetWriter
// with a flipped video track (a pixel buffer adaptor), the app's sound and the microphone
// as two titled AAC tracks, the session started at the first picture. Only the imports are
// this package's modules; nothing below is platform part.
import AVFoundation
import ReplayKit

final class InAppRecorder: @unchecked Sendable {
    private let recorder = RPScreenRecorder.shared()
    private var assetWriter: AVAssetWriter?
    private var videoInput: AVAssetWriterInput?
    private var pixelBufferAdaptor: AVAssetWriterInputPixelBufferAdaptor?
    private var appAudioInput: AVAssetWriterInput?
    private var micAudioInput: AVAssetWriterInput?
    // Touched only on the capture handler's queue until capture has stopped.
    private var sessionStarted = false
    private(set) var videoFrames = 0
    private(set) var audioBuffers: [RPSampleBufferType: Int] = [:]

    private func audioInput(titled title: String) -> AVAssetWriterInput {
        let settings: [String: Any] = [
            AVFormatIDKey: kAudioFormatMPEG4AAC,
            AVSampleRateKey: 48_000,
            AVNumberOfChannelsKey: 2,
            AVEncoderBitRateKey: 128_000,
        ]
        let input = AVAssetWriterInput(mediaType: .audio, outputSettings: settings)
        input.expectsMediaDataInRealTime = true
        let item = AVMutableMetadataItem()
        item.identifier = .commonIdentifierTitle
        item.value = title as NSString
        input.metadata = [item]
        return input
    }

    func startRecording(to url: URL, width: Int, height: Int, completion: @escaping @Sendable (Error?) -> Void) {
        guard recorder.isAvailable else {
            completion(NSError(domain: "InAppRecorder", code: 1, userInfo: [NSLocalizedDescriptionKey: "screen recording is not available"]))
            return
        }
        let writer: AVAssetWriter
        do {
            writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
        } catch {
            completion(error)
            return
        }
        let videoSettings: [String: Any] = [
            AVVideoCodecKey: AVVideoCodecType.h264,
            AVVideoWidthKey: width,
            AVVideoHeightKey: height,
            AVVideoCompressionPropertiesKey: [AVVideoAverageBitRateKey: 2_000_000],
        ]
        let video = AVAssetWriterInput(mediaType: .video, outputSettings: videoSettings)
        video.expectsMediaDataInRealTime = true
        // The captured picture is upside down for the player: flip it with the track's matrix.
        video.transform = CGAffineTransform(scaleX: 1, y: -1)
        let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: video, sourcePixelBufferAttributes: [
            kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA,
            kCVPixelBufferWidthKey as String: width,
            kCVPixelBufferHeightKey as String: height,
        ])
        let appAudio = audioInput(titled: "App Audio")
        let micAudio = audioInput(titled: "Microphone")
        for input in [video, appAudio, micAudio] where writer.canAdd(input) {
            writer.add(input)
        }
        (assetWriter, videoInput, pixelBufferAdaptor, appAudioInput, micAudioInput) = (writer, video, adaptor, appAudio, micAudio)

        recorder.isMicrophoneEnabled = true
        recorder.startCapture(handler: { [weak self] sampleBuffer, bufferType, error in
            guard let self, error == nil, let writer = self.assetWriter else { return }
            switch bufferType {
            case .video:
                if !self.sessionStarted {
                    guard writer.startWriting() else { return }
                    writer.startSession(atSourceTime: CMSampleBufferGetPresentationTimeStamp(sampleBuffer))
                    self.sessionStarted = true
                }
                guard let input = self.videoInput, input.isReadyForMoreMediaData,
                      let pixelBuffer = CMSampleBufferGetImageBuffer(sampleBuffer) else { return }
                if self.pixelBufferAdaptor?.append(pixelBuffer, withPresentationTime: CMSampleBufferGetPresentationTimeStamp(sampleBuffer)) == true {
                    self.videoFrames += 1
                }
            case .audioApp:
                guard self.sessionStarted, let input = self.appAudioInput, input.isReadyForMoreMediaData else { return }
                if input.append(sampleBuffer) { self.audioBuffers[.audioApp, default: 0] += 1 }
            case .audioMic:
                guard self.sessionStarted, let input = self.micAudioInput, input.isReadyForMoreMediaData else { return }
                if input.append(sampleBuffer) { self.audioBuffers[.audioMic, default: 0] += 1 }
            }
        }, completionHandler: { error in
            completion(error)
        })
    }

    func stopRecording(completion: @escaping @Sendable (URL?, Error?) -> Void) {
        recorder.stopCapture { [weak self] error in
            guard let self, let writer = self.assetWriter else {
                completion(nil, error)
                return
            }
            guard self.sessionStarted else {
                writer.cancelWriting()
                completion(nil, error ?? writer.error)
                return
            }
            self.videoInput?.markAsFinished()
            self.appAudioInput?.markAsFinished()
            self.micAudioInput?.markAsFinished()
            writer.finishWriting {
                completion(writer.status == .completed ? writer.outputURL : nil, error ?? writer.error)
            }
        }
    }
}

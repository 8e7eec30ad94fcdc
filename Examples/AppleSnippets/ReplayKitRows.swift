import AVFoundation
import ReplayKit

// row: RPScreenRecorder
// row: RPScreenRecorder.shared()
// row: RPScreenRecorder.isAvailable
// row: RPScreenRecorder.isMicrophoneEnabled
func prepareRecorder() -> RPScreenRecorder? {
    let recorder = RPScreenRecorder.shared()
    guard recorder.isAvailable else { return nil }
    recorder.isMicrophoneEnabled = true
    return recorder
}

// row: RPScreenRecorder.setSources(screen:appAudio:microphone:frameRate:)
func platformPart(screen: any CaptureSource, desktop: any AudioCaptureSource, microphone: any AudioCaptureSource) {
    RPScreenRecorder.shared().setSources(screen: screen, appAudio: desktop, microphone: microphone, frameRate: Rational(60)!)
}

// row: RPScreenRecorder.startCapture(handler:completionHandler:)
// row: RPSampleBufferType
func capture(into videoInput: AVAssetWriterInput, app appInput: AVAssetWriterInput, mic micInput: AVAssetWriterInput) {
    RPScreenRecorder.shared().startCapture(handler: { sampleBuffer, bufferType, error in
        guard error == nil else { return }
        let type: RPSampleBufferType = bufferType
        switch type {
        case .video: if videoInput.isReadyForMoreMediaData { videoInput.append(sampleBuffer) }
        case .audioApp: if appInput.isReadyForMoreMediaData { appInput.append(sampleBuffer) }
        case .audioMic: if micInput.isReadyForMoreMediaData { micInput.append(sampleBuffer) }
        }
    }) { error in
        if let error { print("capture did not start: \(error)") }
    }
}

// row: RPScreenRecorder.isRecording
// row: RPScreenRecorder.stopCapture(handler:)
func stop() {
    guard RPScreenRecorder.shared().isRecording else { return }
    RPScreenRecorder.shared().stopCapture { error in
        if let error { print("capture ended with \(error)") }
    }
}

// row: RPScreenRecorder.stopCapture()
func stopAndWait() async throws { try await RPScreenRecorder.shared().stopCapture() }

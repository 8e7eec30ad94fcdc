// CapturingWithScreenCaptureKit.md: the article's blocks, compiled.
import ScreenCaptureKit

final class SoundAndPictures: SCStreamOutput, SCStreamDelegate {
    func stream(_ stream: SCStream, didOutputSampleBuffer sampleBuffer: CMSampleBuffer, of type: SCStreamOutputType) {
        switch type {
        case .screen:
            print("picture at \(CMSampleBufferGetPresentationTimeStamp(sampleBuffer).seconds)")
        case .audio, .microphone:
            // The same clock as the pictures': hand both to one AVAssetWriter.
            print("\(CMSampleBufferGetNumSamples(sampleBuffer)) sound frames of \(type)")
        }
    }

    func stream(_ stream: SCStream, didStopWithError error: any Error) {
        print("the stream stopped: \(error)")
    }
}

func captureScreenAndSound() async throws {
    let content = try await SCShareableContent.excludingDesktopWindows(false, onScreenWindowsOnly: true)
    guard let display = content.displays.first else { return }
    let filter = try SCContentFilter(display: display, excludingWindows: [])

    let configuration = SCStreamConfiguration()
    configuration.width = 1280
    configuration.height = 720
    configuration.minimumFrameInterval = CMTime(value: 1, timescale: 30)
    configuration.capturesAudio = true          // the default sink's monitor
    configuration.captureMicrophone = true      // the default source
    configuration.sampleRate = 48_000
    configuration.channelCount = 2

    let output = SoundAndPictures()
    let stream = SCStream(filter: filter, configuration: configuration, delegate: output)
    for type in [SCStreamOutputType.screen, .audio, .microphone] {
        try stream.addStreamOutput(output, type: type, sampleHandlerQueue: DispatchQueue(label: "samples"))
    }

    let recording = SCRecordingOutputConfiguration()
    recording.outputURL = URL(fileURLWithPath: "capture.mp4")
    recording.outputFileType = .mp4
    try stream.addRecordingOutput(SCRecordingOutput(configuration: recording, delegate: RecordingEvents()))

    try await stream.startCapture()   // throws when PulseAudio cannot give the sound asked for
    try await Task.sleep(for: .seconds(10))
    try await stream.stopCapture()    // capture.mp4: H.264, and "Audio" and "Microphone" in AAC
}

final class RecordingEvents: SCRecordingOutputDelegate {
    func recordingOutputDidFinishRecording(_ recordingOutput: SCRecordingOutput) {
        print("\(recordingOutput.recordedDuration.seconds) s written")
    }
}

func unscaledCorner() -> SCStreamConfiguration {
    let configuration = SCStreamConfiguration()
    configuration.sourceRect = CGRect(x: 0, y: 0, width: 640, height: 360)
    configuration.width = 1280
    configuration.height = 720
    configuration.scalesToFit = false   // 640x360 at the top left, black around it
    configuration.queueDepth = 3        // at most 3 pictures wait; older ones are dropped
    return configuration
}

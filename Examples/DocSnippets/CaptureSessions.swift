// PortingFromAVFoundation.md: "A capture session with several inputs" and "A ReplayKit
// recorder, ported".
import Dispatch
import Foundation
import SwiftRecord

func mediaCaptureSessionSnippet(screen: any CaptureSource, desktop: any AudioCaptureSource,
                                microphone: any AudioCaptureSource) async throws {
    let session = MediaCaptureSession(frameRate: Rational(30)!)
    try session.addInput(CaptureInput(source: screen))
    try session.addInput(CaptureInput(audioSource: desktop, type: .audioApp))
    try session.addInput(CaptureInput(audioSource: microphone, type: .audioMic))
    let movie = CaptureMovieFileOutput(outputURL: URL(fileURLWithPath: "talk.mkv"))
    if session.canAddOutput(movie) { try session.addOutput(movie) }
    let pictures = CaptureDataOutput(sampleTypes: [.video])
    pictures.setSampleBufferHandler(queue: DispatchQueue(label: "frames")) { sample, _ in
        print("picture captured at \(sample.presentationTimeStamp.seconds)")
    }
    try session.addOutput(pictures)
    try session.startRunning()
    // … later:
    let statistics = try await session.stopRunning()
    print(statistics?.framesWritten ?? 0, "frames in", movie.outputURL.path)
}

func replayKitPortSnippet(screen: any CaptureSource, desktop: any AudioCaptureSource,
                          microphone: any AudioCaptureSource) async throws {
    let recorder = ScreenRecorder(screen: screen, appAudio: desktop, microphone: microphone)
    let writer = try AssetWriter(outputURL: URL(fileURLWithPath: "replay.mp4"))
    let videoInput = AssetWriterInput(outputSettings: VideoSettings(
        codec: .h264, width: screen.nativeSize.width, height: screen.nativeSize.height))
    let adaptor = PixelBufferAdaptor(assetWriterInput: videoInput,
                                     sourcePixelBufferAttributes: PixelBufferAttributes(
                                         width: screen.nativeSize.width,
                                         height: screen.nativeSize.height,
                                         pixelFormat: screen.pixelFormat))
    let appInput = AssetWriterInput(outputSettings: AudioSettings(codec: .aac))
    let micInput = AssetWriterInput(outputSettings: AudioSettings(codec: .aac))
    for input in [videoInput, appInput, micInput] {
        input.expectsMediaDataInRealTime = true
        try writer.add(input)
    }
    try writer.startWriting()
    let started = Locked(false)
    recorder.startCapture(handler: { sample, type in
        switch (sample, type) {
        case (.video(let picture), .video):
            if !started.withLock({ s in defer { s = true }; return s }) {
                try? writer.startSession(atSourceTime: picture.presentationTimeStamp)
            }
            if videoInput.isReadyForMoreMediaData {
                try? adaptor.append(picture.pixelBuffer,
                                    withPresentationTime: picture.presentationTimeStamp)
            }
        case (.audio(let sound), .audioApp):
            if started.withLock({ $0 }) { try? appInput.append(sound) }
        case (.audio(let sound), .audioMic):
            if started.withLock({ $0 }) { try? micInput.append(sound) }
        default:
            break
        }
    }, completionHandler: { error in
        if let error { print("capture did not start: \(error)") }
    })
    // … later:
    try await recorder.stopCapture()
    for input in [videoInput, appInput, micInput] { input.markAsFinished() }
    try await writer.finishWriting()
}

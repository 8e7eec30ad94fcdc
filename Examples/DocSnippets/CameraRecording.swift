// RecordingACamera.md.
import Foundation
import SwiftRecord
import SwiftRecordCamera
import SwiftRecordPulse

func cameraTutorialSnippet() async throws {
    let camera = try CameraSource.open(configuration: .init(
        size: VideoSize(width: 1280, height: 720), frameRate: 30))
    let microphone = try PulseAudioSource(options: AudioSourceOptions(device: nil))
    let session = MediaCaptureSession(frameRate: Rational(30)!)
    try session.addInput(CaptureInput(source: camera))
    try session.addInput(CaptureInput(audioSource: microphone, type: .audioMic))
    let movie = CaptureMovieFileOutput(outputURL: URL(fileURLWithPath: "camera.mp4"))
    try session.addOutput(movie)
    try session.startRunning()
    // … later:
    let statistics = try await session.stopRunning()
    print(statistics?.framesWritten ?? 0, "frames;", camera.notices)
}

func cameraTrackSnippet(screen: any CaptureSource, camera: any CaptureSource) async throws {
    let session = MediaCaptureSession(frameRate: Rational(30)!)
    try session.addInput(CaptureInput(source: screen))
    try session.addInput(CaptureInput(source: camera, title: "Speaker"))
    try session.addOutput(CaptureMovieFileOutput(outputURL: URL(fileURLWithPath: "talk.mkv")))
    let statistics = try await session.run()
    print(statistics?.videoTracks.first?.framesWritten ?? 0, "camera frames")
}

func cameraOverlaySnippet(screen: any CaptureSource, camera: any CaptureSource,
                          screenPicture: PixelBuffer, cameraPicture: PixelBuffer, composed: PixelBuffer) throws {
    let talk = OverlaySource(base: screen, overlay: camera, corner: .bottomRight,
                             overlaySize: VideoSize(width: 320, height: 180), margin: 24)
    let overlay = try PictureOverlay(corner: .topLeft, size: VideoSize(width: 160, height: 90), margin: 8,
                                     baseSize: VideoSize(width: 1920, height: 1080), baseFormat: .yuv420p)
    try overlay.compose(screenPicture, cameraPicture, into: composed)
    _ = talk
}

func cameraListingSnippet() throws {
    for node in try CameraSource.cameras() { print(node.name ?? "?", node.description ?? "") }
    for device in V4L2Device.all() { print(device.listing) }
}

func pipeWireProducerSnippet() async throws {
    for node in try PipeWireNodeSource.nodes() { print(node.name ?? "?", node.mediaClass ?? "?") }
    let producer = try PipeWireNodeSource(configuration: .init(node: "gst-src"))
    let session = MediaCaptureSession(frameRate: Rational(30)!)
    try session.addInput(CaptureInput(source: producer))
    try session.addOutput(CaptureMovieFileOutput(outputURL: URL(fileURLWithPath: "producer.mp4")))
    let statistics = try await session.run()   // throws once the node goes away; the file is finished
    print(statistics?.framesWritten ?? 0, "frames")
}

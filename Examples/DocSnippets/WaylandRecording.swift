// RecordingAWaylandScreen.md: the steps of the article (the first two in one function).
import Foundation
import SwiftRecord
import SwiftRecordWayland

func waylandRecordingSnippets() async throws {
    let tokenFile = URL(fileURLWithPath: "screen.token")
    let saved = try? String(contentsOf: tokenFile, encoding: .utf8)
    let screen = try WaylandSource(configuration: WaylandSource.Configuration(
        screenCast: .portal,
        portal: ScreenCastPortal.Options(
            sourceTypes: .monitor,
            restoreToken: saved?.trimmingCharacters(in: .whitespacesAndNewlines)),
        showsCursor: true))
    if let token = screen.restoreToken {
        try token.write(to: tokenFile, atomically: true, encoding: .utf8)
    }
    // the screen the desktop portal granted (PipeWire node 42) at 1920x1080
    print(screen.captureDescription ?? screen.identifier)

    let size = screen.nativeSize
    let writer = try AssetWriter(outputURL: URL(fileURLWithPath: "wayland.mp4"))
    let input = AssetWriterInput(outputSettings: VideoSettings(
        codec: .h264, width: size.width, height: size.height,
        rateControl: .averageBitRate(4_000_000),
        expectedSourceFrameRate: Rational(30)))
    input.expectsMediaDataInRealTime = true
    let adaptor = PixelBufferAdaptor(
        assetWriterInput: input,
        sourcePixelBufferAttributes: PixelBufferAttributes(
            width: size.width, height: size.height,
            pixelFormat: screen.pixelFormat))
    try writer.add(input)
    try writer.startWriting()
    try writer.startSession(atSourceTime: .zero)
    let session = CaptureSession(
        source: screen, writer: writer, adaptor: adaptor,
        frameRate: Rational(30)!,
        limit: CaptureLimit(duration: MediaTime(seconds: 10)))
    _ = try? await session.run()     // the frames so far are kept on an error
    screen.stop()                    // ends the screen cast
    try await writer.finishWriting()
}

func waylandCancelledSnippet() throws {
    do {
        let screen = try WaylandSource(configuration: .init(screenCast: .portal))
        print(screen.nativeSize)
    } catch {                 // a SwiftRecordError: all the initialiser throws
        guard error.kind == .cancelled else { throw error }
        print("the chooser was closed: \(error.message)")
    }
}

func screenCastPortalSnippet() throws {
    let portal = try ScreenCastPortal(options: ScreenCastPortal.Options(
        sourceTypes: [.monitor, .window], cursor: .embedded))
    let remote = try portal.openPipeWireRemote()   // a FileDescriptor, yours
    for stream in portal.streams {
        print("PipeWire node \(stream.node)", stream.size.map { "at \($0)" } ?? "")
    }
    // Connect with pw_context_connect_fd(context, remote.rawValue, nil, 0), which takes the
    // descriptor over, and pw_stream_connect(…, stream.node, …); or, to give it up:
    try remote.close()
    portal.close()
}

func portalGrantSnippet() throws {
    let grant = try ScreenCastPortal.Grant(options: ScreenCastPortal.Options(sourceTypes: .window))
    var settings = WaylandSource.Configuration()
    settings.grant = grant
    let first = try WaylandSource(configuration: settings)   // reads the picked window
    first.stop()
    let second = try WaylandSource(configuration: settings)  // the same pick, no chooser
    second.stop()
    grant.close()
}

func cameraSnippet(screen: any CaptureSource) throws {
    for camera in try CameraSource.cameras() {
        print(camera.name ?? "?", camera.description ?? "", camera.serial ?? "")
    }
    let camera = try CameraSource(configuration: .init(
        camera: "v4l2_input.pci-0000_00_14.0-usb-0_1_1.0",
        size: VideoSize(width: 1280, height: 720), frameRate: 30))
    print(camera.captureDescription ?? "", camera.notices)   // the mode it took
    let talk = OverlaySource(base: screen, overlay: camera, corner: .bottomRight,
                             overlaySize: VideoSize(width: 320, height: 180), margin: 24)
    _ = talk
}

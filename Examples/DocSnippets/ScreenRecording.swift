// RecordingTheScreen.md: the steps of the article (the first three in one function).
import Foundation
import SwiftRecord
import SwiftRecordPulse
import SwiftRecordX11

func screenRecordingSnippets() async throws {
    let screen = try X11Source(configuration: X11Source.Configuration(
        display: ":0",
        area: .region(PixelRegion(x: 0, y: 0, width: 1280, height: 720)),
        showsCursor: true))
    // region 0,0,1280,720 of display :0 at 1280x720
    print(screen.captureDescription ?? screen.identifier)
    for notice in screen.notices { print(notice) }

    let size = screen.nativeSize
    let writer = try AssetWriter(outputURL: URL(fileURLWithPath: "screen.mp4"))
    writer.movieFragmentInterval = MediaTime(seconds: 1)         // crash-safe
    writer.shouldOptimizeForNetworkUse = true
    let input = AssetWriterInput(outputSettings: VideoSettings(
        codec: .h264, width: size.width, height: size.height,
        rateControl: .averageBitRate(2_000_000), maxKeyFrameInterval: 60,
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
    do {
        _ = try await session.run()
    } catch {
        print("recording stopped: \(error)")      // what was captured is kept
    }
    try await writer.finishWriting()
    let stats = session.statistics
    print("\(stats.framesWritten) frames, \(stats.framesRepeated) repeated,",
          "\(stats.framesDropped) dropped")
}

func stopAndPauseSnippet(session: CaptureSession) {
    signal(SIGINT, SIG_IGN)
    let interrupt = DispatchSource.makeSignalSource(signal: SIGINT,
                                                    queue: .global())
    interrupt.setEventHandler { session.stop() }    // Ctrl-C finishes the file
    interrupt.resume()

    Task {
        try await Task.sleep(for: .seconds(5))
        session.pause()
        try await Task.sleep(for: .seconds(2))
        session.resume()                            // no gap in the file
    }
}

func liveOutputSnippet(writer: AssetWriter) throws {
    let stream = try LiveOutput(url: URL(string: "rtmp://127.0.0.1/live/screen")!)
    let replay = try ReplayBuffer(duration: MediaTime(seconds: 30))
    try writer.add(stream)
    try writer.add(replay)
    try writer.startWriting()                       // connects the stream
    // … while recording, from any thread:
    try replay.save(to: URL(fileURLWithPath: "last-30-seconds.mp4"))
    print(stream.status, stream.statistics.videoFramesDropped)
}

func soundSnippet(screen: X11Source, writer: AssetWriter, adaptor: PixelBufferAdaptor) throws {
    let monitor = try PulseAudioSource(options: AudioSourceOptions(
        sampleRate: 48_000, channelLayout: .stereo))
    let audioInput = AssetWriterInput(outputSettings: AudioSettings(
        codec: .aac, sampleRate: 48_000, channelLayout: .stereo,
        bitRate: 128_000))
    try writer.add(audioInput)                      // before startWriting()
    let session = CaptureSession(
        source: screen, writer: writer, adaptor: adaptor,
        frameRate: Rational(30)!,
        audio: AudioCapture(source: monitor, input: audioInput))
    _ = session
}

func mixSnippet(screen: X11Source, writer: AssetWriter, adaptor: PixelBufferAdaptor) throws {
    let desktop = try PulseAudioSource(options: AudioSourceOptions(
        device: "alsa_output.pci.analog-stereo.monitor"))
    let voice = try PulseAudioSource(options: AudioSourceOptions(
        device: "alsa_input.usb-mic"))
    let mix = try AssetWriterInput(outputSettings: AudioSettings(),
                                   mixVolumes: [1, 0.5])  // the voice at −6 dB
    try writer.add(mix)                             // one track for both
    let session = CaptureSession(
        source: screen, writer: writer, adaptor: adaptor,
        frameRate: Rational(30)!,
        audioCaptures: [AudioCapture(source: desktop, input: mix, mixSource: 0),
                        AudioCapture(source: voice, input: mix, mixSource: 1)])
    _ = session
}

func timingLogSnippet(screen: X11Source, writer: AssetWriter, adaptor: PixelBufferAdaptor) throws {
    let log = try TimingLog(path: "screen-timing.csv")
    let session = CaptureSession(
        source: screen, writer: writer, adaptor: adaptor,
        frameRate: Rational(30000, 1001)!, timingLog: log)
    _ = session
}

func registrySnippet() throws {
    X11Source.register()
    SwiftRecordPulse.register()
    var options = CaptureSourceOptions(frameRate: Rational(60)!)
    options.configure(X11Source.Configuration(area: .window(0x2a0_0007),
                                              showsCursor: false))
    let source = try CaptureSourceRegistry.shared.makeSource(
        named: "x11", options: options)
    let sound = try AudioSourceRegistry.shared.makeSource(
        named: "pulse", options: AudioSourceOptions())
    print(source.captureDescription ?? source.identifier)
    print(sound.captureDescription ?? sound.identifier)
}

func syntheticSnippet() throws {
    let scene = try SyntheticSource(options: CaptureSourceOptions(
        size: VideoSize(width: 1280, height: 720),
        frameRate: Rational(30)!, realtime: true))
    print(scene.isLive)              // true: paced by the clock, as a screen is
}

func framesSnippet(scene: SyntheticSource) async throws {
    let frames = scene.frames(frameRate: Rational(30)!, bufferingNewest: 3)
    for try await frame in frames {
        print(frame.index, frame.captureTime.seconds)
        if frame.index >= 90 { break }                  // the source stops
    }
    print("\(frames.droppedCount) pictures dropped behind a slow loop")
}

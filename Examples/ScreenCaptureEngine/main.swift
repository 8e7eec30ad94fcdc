// ScreenCaptureEngine MOVIE SECONDS [sound]: records the first display (X11's, or Mutter's in a
// Wayland session) for SECONDS from its first picture through CaptureEngine
// (CaptureEngine.swift, written as for the Mac) into MOVIE, with `sound` the system audio and
// the microphone too, and prints how many frames the stream gave and the movie took (and,
// with sound, how many sound buffers each sound track took).
// PLATFORM: the Mac's apps drive the engine from their interface; this is a command.
import Foundation
import ScreenCaptureKit

let arguments = CommandLine.arguments
guard arguments.count == 3 || (arguments.count == 4 && arguments[3] == "sound"), let seconds = Double(arguments[2]), seconds > 0 else {
    FileHandle.standardError.write(Data("usage: ScreenCaptureEngine MOVIE SECONDS [sound] (SECONDS > 0)\n".utf8))
    exit(2)
}
// PLATFORM: the Mac's apps set these from their interface's switches.
let withSound = arguments.count == 4
do {
    let content = try await SCShareableContent.excludingDesktopWindows(false, onScreenWindowsOnly: true)
    guard let display = content.displays.first else {
        FileHandle.standardError.write(Data("ScreenCaptureEngine: no display to capture\n".utf8))
        exit(1)
    }
    let configuration = SCStreamConfiguration()
    configuration.width = display.width
    configuration.height = display.height
    configuration.minimumFrameInterval = CMTime(value: 1, timescale: 30)
    configuration.queueDepth = 5
    configuration.capturesAudio = withSound
    configuration.sampleRate = 48_000
    configuration.channelCount = 2
    configuration.excludesCurrentProcessAudio = true
    configuration.captureMicrophone = withSound
    let filter = try SCContentFilter(display: display, excludingWindows: [])
    let writer = try MovieWriter(url: URL(fileURLWithPath: arguments[1]), width: display.width, height: display.height,
                                 capturesAudio: configuration.capturesAudio, capturesMicrophone: configuration.captureMicrophone)
    let engine = CaptureEngine()
    let frames = engine.startCapture(configuration: configuration, filter: filter, movieWriter: writer)
    // SECONDS count from the first picture (a Wayland screen cast takes a moment to start);
    // a stream that gives none is stopped after 30 s more.
    let stop = { (after: Double) in Task { try await Task.sleep(for: .seconds(after)); await engine.stopCapture() } }
    let watchdog = stop(seconds + 30)
    var stopper: Task<Void, any Error>?
    var count = 0
    for try await frame in frames where frame.contentRect.width > 0 {
        count += 1
        if stopper == nil { stopper = stop(seconds) }
    }
    watchdog.cancel()
    try await stopper?.value
    if withSound {
        print("frames: \(count), written: \(writer.framesWritten), audio: \(writer.audioBuffersWritten), microphone: \(writer.microphoneBuffersWritten)")
        exit(count > 0 && writer.framesWritten > 0 && writer.audioBuffersWritten > 0 && writer.microphoneBuffersWritten > 0 ? 0 : 1)
    }
    print("frames: \(count), written: \(writer.framesWritten)")
    exit(count > 0 && writer.framesWritten > 0 ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("ScreenCaptureEngine: \(error)\n".utf8))
    exit(1)
}

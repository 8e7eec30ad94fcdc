// ScreenCaptureEngine MOVIE SECONDS: records the first display of $DISPLAY, the system
// audio and the microphone for SECONDS through CaptureEngine (CaptureEngine.swift, written
// as for the Mac) into MOVIE, and prints how many frames the stream gave and the movie took,
// and how many sound buffers each sound track took.
// PLATFORM: the Mac's apps drive the engine from their interface; this is a command.
import Foundation
import ScreenCaptureKit

let arguments = CommandLine.arguments
guard arguments.count == 3, let seconds = Double(arguments[2]), seconds > 0 else {
    FileHandle.standardError.write(Data("usage: ScreenCaptureEngine MOVIE SECONDS (SECONDS > 0)\n".utf8))
    exit(2)
}
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
    configuration.capturesAudio = true
    configuration.sampleRate = 48_000
    configuration.channelCount = 2
    configuration.excludesCurrentProcessAudio = true
    configuration.captureMicrophone = true
    let filter = try SCContentFilter(display: display, excludingWindows: [])
    let writer = try MovieWriter(url: URL(fileURLWithPath: arguments[1]), width: display.width, height: display.height,
                                 capturesAudio: configuration.capturesAudio, capturesMicrophone: configuration.captureMicrophone)
    let engine = CaptureEngine()
    let frames = engine.startCapture(configuration: configuration, filter: filter, movieWriter: writer)
    let stopper = Task {
        try await Task.sleep(for: .seconds(seconds))
        await engine.stopCapture()
    }
    var count = 0
    for try await frame in frames where frame.contentRect.width > 0 { count += 1 }
    try await stopper.value
    print("frames: \(count), written: \(writer.framesWritten), audio: \(writer.audioBuffersWritten), microphone: \(writer.microphoneBuffersWritten)")
    exit(count > 0 && writer.framesWritten > 0 && writer.audioBuffersWritten > 0 && writer.microphoneBuffersWritten > 0 ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("ScreenCaptureEngine: \(error)\n".utf8))
    exit(1)
}

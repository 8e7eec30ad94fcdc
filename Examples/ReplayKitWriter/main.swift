// A ReplayKit in-app capture writer: InAppRecorder.swift is the port (Apple's calls as
// written, only its imports are this package's modules); this file is the platform part.
//
// PLATFORM PART — on iOS the app's own views are what ReplayKit captures and its own
// sound (an AVAudioPlayer, say) is `.audioApp`. Here the app's view is a small X11 window
// of this process (it says so in `_NET_WM_PID`, as toolkits do) drawing a moving bar, and
// its sound is a 1 kHz tone this process plays through PulseAudio: RPScreenRecorder finds
// both by this process's id. The microphone is PulseAudio's default source.
//
//   swift run ReplayKitWriter [output.mp4] [seconds]
//
// Prints one line of JSON: pictures and sound buffers written, and whether it finished.
import Foundation
import ReplayKit
import SwiftRecordPulse
import SwiftRecordX11

let arguments = CommandLine.arguments
let url = URL(fileURLWithPath: arguments.count > 1 ? arguments[1] : "replay.mp4")
let seconds = arguments.count > 2 ? max(1, Double(arguments[2]) ?? 2) : 2
let width = 320, height = 240

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ReplayKitWriter: \(message)\n".utf8))
    exit(1)
}

// PLATFORM PART: the app's view and its sound.
let window: X11AppWindow
let sound: PulseClickPlayer
do {
    window = try X11AppWindow(title: "ReplayKitWriter", x: 40, y: 30, width: width, height: height)
    try window.draw(step: 0)
    sound = try PulseClickPlayer(toneFrequency: 1000, name: "ReplayKitWriter")
} catch {
    fail("\(error)")
}

// PLATFORM PART: the app has been running a while when recording starts (a null sink that
// was idle hands its monitor the first sound up to a second late).
try await Task.sleep(for: .seconds(1))

let recorder = InAppRecorder()
let started: (any Error)? = await withCheckedContinuation { done in
    recorder.startRecording(to: url, width: width, height: height) { done.resume(returning: $0) }
}
if let started { fail("capture did not start: \(started)") }

// PLATFORM PART: the app runs; its view changes every 1/30 s.
let clock = ContinuousClock()
let end = clock.now + .seconds(seconds)
var step = 1
while clock.now < end {
    do { try window.draw(step: step) } catch { fail("\(error)") }
    step += 1
    try await Task.sleep(for: .milliseconds(33))
}

let (written, failure): (URL?, (any Error)?) = await withCheckedContinuation { done in
    recorder.stopRecording { done.resume(returning: ($0, $1)) }
}
sound.stop()
print("{\"finished\": \(written != nil), \"videoFrames\": \(recorder.videoFrames), \"appAudioBuffers\": \(recorder.audioBuffers[.audioApp] ?? 0), \"micAudioBuffers\": \(recorder.audioBuffers[.audioMic] ?? 0)}")
if let failure { fail("\(failure)") }
if written == nil { exit(1) }

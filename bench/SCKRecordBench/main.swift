// SCKRecordBench MOVIE SECONDS FPS: records the first display of $DISPLAY for SECONDS (the
// pictures of [0, SECONDS) after the first)
// through SCStream + SCRecordingOutput (H.264 in MP4, at most FPS pictures a second), as
// bench/sck-record measures it beside the same recording through swift-record's command line.
import Foundation
import ScreenCaptureKit

final class Events: SCRecordingOutputDelegate, SCStreamDelegate, @unchecked Sendable {
    // @unchecked: its one field is written under the lock.
    let failure = NSLock()
    var error: (any Error)?
    func recordingOutput(_ recordingOutput: SCRecordingOutput, didFailWithError error: any Error) { failure.withLock { self.error = error } }
    func stream(_ stream: SCStream, didStopWithError error: any Error) { failure.withLock { self.error = error } }
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let seconds = Double(arguments[2]), seconds > 0, let fps = Int32(arguments[3]), fps > 0 else {
    FileHandle.standardError.write(Data("usage: SCKRecordBench MOVIE SECONDS FPS\n".utf8))
    exit(2)
}
do {
    let content = try await SCShareableContent.excludingDesktopWindows(false, onScreenWindowsOnly: true)
    guard let display = content.displays.first else { throw CocoaError(.featureUnsupported) }
    let configuration = SCStreamConfiguration()
    configuration.minimumFrameInterval = CMTime(value: 1, timescale: fps)
    let events = Events()
    let stream = SCStream(filter: try SCContentFilter(display: display, excludingWindows: []), configuration: configuration, delegate: events)
    let recording = SCRecordingOutputConfiguration()
    recording.outputURL = URL(fileURLWithPath: arguments[1])
    recording.outputFileType = .mp4
    let output = SCRecordingOutput(configuration: recording, delegate: events)
    try stream.addRecordingOutput(output)
    try await stream.startCapture()
    // Half a picture short of SECONDS after the first picture: the file has the pictures the
    // command line's --duration SECONDS has (a picture at SECONDS itself would be one more).
    try await Task.sleep(for: .seconds(seconds - 0.5 / Double(fps)))
    try await stream.stopCapture()
    if let error = events.failure.withLock({ events.error }) { throw error }
    print("duration: \(output.recordedDuration.seconds), skipped: \(output.skippedFrameCount), dropped: \(stream.droppedFrameCount)")
} catch {
    FileHandle.standardError.write(Data("SCKRecordBench: \(error)\n".utf8))
    exit(1)
}

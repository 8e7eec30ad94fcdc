// AVCamRecorder: Apple's AVCam movie recording ported (MovieCaptureController.swift, as
// written but for its import). This file is the platform part.
//
// PLATFORM PART — on iOS a SwiftUI or UIKit view shows the preview and a record button the
// user taps twice, and the delegate saves the movie to the photo library. Here the program
// presses the button itself: it records for the seconds asked, into the file named,
// from the first camera (PipeWire's, else /dev/videoN) and PulseAudio's default source.
//
//   swift run AVCamRecorder [output.mov] [seconds]
//
// Prints one line of JSON: the file, its recorded duration, and the error if there was one;
// exits 0 only when the movie was recorded without one.
import AVFoundation

let arguments = CommandLine.arguments
let url = URL(fileURLWithPath: arguments.count > 1 ? arguments[1] : "movie.mov")
let seconds = arguments.count > 2 ? max(0.5, Double(arguments[2]) ?? 2) : 2

/// What the delegate reported.
final class Outcome: @unchecked Sendable {
    let started = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var result: (URL, CMTime, Error?)?
    var value: (URL, CMTime, Error?)? { lock.withLock { result } }
    func finish(_ url: URL, _ duration: CMTime, _ error: Error?) {
        lock.withLock { result = (url, duration, error) }
        started.signal()
        finished.signal()
    }
}

let outcome = Outcome()
let controller = MovieCaptureController()
controller.onStart = { _ in outcome.started.signal() }
controller.onFinish = { url, duration, error in outcome.finish(url, duration, error) }
controller.prepare()
guard controller.start() else {
    FileHandle.standardError.write(Data("AVCamRecorder: the capture session could not be set up (see above)\n".utf8))
    exit(1)
}
controller.toggleMovieRecording(to: url)
if outcome.started.wait(timeout: .now() + 30) == .timedOut {
    FileHandle.standardError.write(Data("AVCamRecorder: the recording did not start within 30 s\n".utf8))
}
Thread.sleep(forTimeInterval: seconds)
controller.toggleMovieRecording(to: url)
_ = outcome.finished.wait(timeout: .now() + 60)
controller.stop()

guard let (file, duration, error) = outcome.value else {
    FileHandle.standardError.write(Data("AVCamRecorder: the movie was not finished within 60 s\n".utf8))
    exit(1)
}
let errorText = error.map { "\"\(String(describing: $0).replacingOccurrences(of: "\"", with: "'"))\"" } ?? "null"
print("{\"file\": \"\(file.path)\", \"recordedSeconds\": \(CMTimeGetSeconds(duration)), \"error\": \(errorText)}")
exit(error == nil ? 0 : 1)

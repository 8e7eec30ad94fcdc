// Issue 39: the AVFoundation module's capture family in process, against the tests' own
// PipeWire camera (swift-record-test-camera, 320x240 at 30 fps) on a private PipeWire, which
// this process reaches through XDG_RUNTIME_DIR for the length of a test.
//
// Catalogue:
// - testMovieStartsAndStopsWhileTheSessionRuns: the camera (AVCaptureDevice.default(for: .video),
//   found by DiscoverySession too), a video data output and a movie file output; startRunning
//   → the delegate gets pictures (320x240, times increasing); startRecording(to:) → didStart,
//   isRecording, recordedDuration growing while it records; stopRecording() → didFinish without
//   an error, and the data output's pictures resume; ffprobe: H.264 320x240, as long as
//   recordedDuration said (within 0.2 s), 30 frames a second. maxRecordedDuration 1 s → the
//   file ends by itself at 1 s and the delegate is told. A file that exists is refused (the
//   delegate's error), left as it was. stopRunning() → isRunning false, no more pictures.
// - testAudioDataOutputHearsTheDefaultMicrophone: a private PulseAudio whose default source
//   (the null sink's monitor) hears a 1 kHz tone: AVCaptureDevice.default(for: .audio) is
//   `@DEFAULT_SOURCE@`; with the camera, an audio data output's delegate gets 48 kHz buffers
//   back to back (times increasing, within 2 ms of where the one before ended) as long as
//   the run within 0.3 s, holding the tone (Goertzel share over 0.5); the video data output
//   on the same delegate gets pictures; each output has its one connection.
// - testRecordingWithoutARunningSessionTellsTheDelegate: startRecording before startRunning →
//   didFinish at once with an error saying the session is not running, no file.
import AVFoundation
import Foundation
import TestSupport
import XCTest

final class AVCaptureSessionTests: CameraTestCase {
    /// Counts pictures and keeps their times; records what the recording delegate hears.
    final class Observer: NSObject, AVCaptureVideoDataOutputSampleBufferDelegate, AVCaptureFileOutputRecordingDelegate, @unchecked Sendable {
        let lock = NSLock()
        var pictures: [(time: Double, width: Int)] = []
        var started: [URL] = []
        var finished: [(URL, CMTime, (any Error)?)] = []
        let finishedSignal = DispatchSemaphore(value: 0)

        var pictureCount: Int { lock.withLock { pictures.count } }

        func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection) {
            guard let buffer = CMSampleBufferGetImageBuffer(sampleBuffer) else { return }
            let time = CMTimeGetSeconds(CMSampleBufferGetPresentationTimeStamp(sampleBuffer))
            lock.withLock { pictures.append((time, CVPixelBufferGetWidth(buffer))) }
        }
        func fileOutput(_ output: AVCaptureFileOutput, didStartRecordingTo fileURL: URL, from connections: [AVCaptureConnection]) {
            lock.withLock { started.append(fileURL) }
        }
        func fileOutput(_ output: AVCaptureFileOutput, didFinishRecordingTo outputFileURL: URL,
                        from connections: [AVCaptureConnection], error: (any Error)?) {
            lock.withLock { finished.append((outputFileURL, output.recordedDuration, error)) }
            finishedSignal.signal()
        }
    }

    /// Runs `body` with this process's PipeWire clients pointed at `desktop`'s PipeWire.
    private func withPipeWire(of desktop: HeadlessGNOME, _ body: () throws -> Void) rethrows {
        let previous = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"]
        setenv("XDG_RUNTIME_DIR", desktop.runtimeDirectory.path, 1)
        defer { if let previous { setenv("XDG_RUNTIME_DIR", previous, 1) } else { unsetenv("XDG_RUNTIME_DIR") } }
        try body()
    }

    private func waitUntil(_ what: String, timeout: Double = 20, _ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertTrue(condition(), "timed out waiting for \(what)")
    }

    func testMovieStartsAndStopsWhileTheSessionRuns() throws {
        let desktop = try pipeWireWithCamera()
        defer { desktop.stop() }
        try withPipeWire(of: desktop) {
            let found = AVCaptureDevice.DiscoverySession(deviceTypes: [.builtInWideAngleCamera], mediaType: .video, position: .unspecified).devices
            XCTAssertEqual(found.map(\.uniqueID), ["pipewire:sr-test-cam"])
            let camera = try XCTUnwrap(AVCaptureDevice.default(for: .video))
            XCTAssertEqual(camera.uniqueID, "pipewire:sr-test-cam")
            let session = AVCaptureSession()
            let observer = Observer()
            session.beginConfiguration()
            session.sessionPreset = .qvga320x240
            let input = try AVCaptureDeviceInput(device: camera)
            XCTAssertTrue(session.canAddInput(input))
            session.addInput(input)
            XCTAssertFalse(session.canAddInput(input), "an input once")
            let pictures = AVCaptureVideoDataOutput()
            pictures.setSampleBufferDelegate(observer, queue: DispatchQueue(label: "pictures"))
            session.addOutput(pictures)
            let movie = AVCaptureMovieFileOutput()
            XCTAssertTrue(session.canAddOutput(movie))
            session.addOutput(movie)
            XCTAssertFalse(session.canAddOutput(AVCaptureMovieFileOutput()), "one movie file output")
            session.commitConfiguration()
            XCTAssertEqual(movie.connections.count, 1, "the camera's; no microphone")

            session.startRunning()
            XCTAssertTrue(session.isRunning)
            waitUntil("pictures before recording") { observer.pictureCount >= 15 }
            let first = observer.lock.withLock { observer.pictures }
            XCTAssertTrue(first.allSatisfy { $0.width == 320 }, "\(first.map(\.width))")
            XCTAssertTrue(zip(first, first.dropFirst()).allSatisfy { $0.time < $1.time }, "capture times increase")

            let url = URL(fileURLWithPath: path("recorded.mov"))
            movie.startRecording(to: url, recordingDelegate: observer)
            XCTAssertTrue(movie.isRecording)
            waitUntil("didStartRecordingTo") { observer.lock.withLock { !observer.started.isEmpty } }
            waitUntil("a second recorded") { CMTimeGetSeconds(movie.recordedDuration) >= 1 }
            Thread.sleep(forTimeInterval: 1)
            movie.stopRecording()
            XCTAssertEqual(observer.finishedSignal.wait(timeout: .now() + 30), .success, "didFinishRecordingTo")
            XCTAssertFalse(movie.isRecording)
            let (finishedURL, duration, error) = try XCTUnwrap(observer.lock.withLock { observer.finished.first })
            XCTAssertEqual(finishedURL, url)
            XCTAssertNil(error)
            let seconds = CMTimeGetSeconds(duration)
            XCTAssertGreaterThanOrEqual(seconds, 1.8)
            let (stream, format) = try FF.probe(url.path)
            XCTAssertEqual(stream["codec_name"] as? String, "h264")
            XCTAssertEqual(int(stream["width"]), 320)
            XCTAssertEqual(double(format["duration"]) ?? 0, seconds, accuracy: 0.2, "the file holds what recordedDuration said")
            XCTAssertEqual(Double(int(stream["nb_read_frames"]) ?? 0), seconds * 30, accuracy: 1.5)
            let afterFile = observer.pictureCount
            waitUntil("pictures after the file") { observer.pictureCount >= afterFile + 15 }

            // A limit ends the file by itself; the delegate is told.
            movie.maxRecordedDuration = CMTime(seconds: 1, preferredTimescale: 600)
            let limited = URL(fileURLWithPath: path("limited.mov"))
            movie.startRecording(to: limited, recordingDelegate: observer)
            XCTAssertEqual(observer.finishedSignal.wait(timeout: .now() + 30), .success, "the limited file's didFinishRecordingTo")
            XCTAssertNil(observer.lock.withLock { observer.finished.last?.2 })
            XCTAssertEqual(double(try FF.probe(limited.path).format["duration"]) ?? 0, 1, accuracy: 0.1)

            // A file that exists is not replaced.
            movie.startRecording(to: url, recordingDelegate: observer)
            XCTAssertEqual(observer.finishedSignal.wait(timeout: .now() + 30), .success)
            XCTAssertNotNil(observer.lock.withLock { observer.finished.last?.2 }, "an existing file is refused")
            XCTAssertEqual(double(try FF.probe(url.path).format["duration"]) ?? 0, seconds, accuracy: 0.2, "and left as it was")

            session.stopRunning()
            XCTAssertFalse(session.isRunning)
            let stopped = observer.pictureCount
            Thread.sleep(forTimeInterval: 0.5)
            XCTAssertLessThanOrEqual(observer.pictureCount, stopped + 1, "no pictures once stopped")
        }
    }

    /// Keeps the sound the audio data output hands over.
    final class Listener: NSObject, AVCaptureAudioDataOutputSampleBufferDelegate, @unchecked Sendable {
        let lock = NSLock()
        var buffers: [(time: Double, frames: Int)] = []
        var samples: [Float] = []

        func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection) {
            guard case .audio(let sound) = sampleBuffer, connection.output === output else { return }
            let time = CMTimeGetSeconds(CMSampleBufferGetPresentationTimeStamp(sampleBuffer))
            // PulseAudio's samples: interleaved floats; the first channel.
            guard sound.format.sampleType == .f32, !sound.format.isPlanar, let bytes = sound.planes.first else { return }
            let channels = sound.format.channelLayout.channelCount
            let left = bytes.withUnsafeBytes { raw in stride(from: 0, to: sound.frameCount * channels, by: channels).map { raw.load(fromByteOffset: $0 * 4, as: Float.self) } }
            lock.withLock {
                buffers.append((time, CMSampleBufferGetNumSamples(sampleBuffer)))
                samples += left
            }
        }
    }

    func testAudioDataOutputHearsTheDefaultMicrophone() throws {
        let (desktop, pulse) = try cameraAndMicrophone()
        setenv("PULSE_SERVER", pulse.address, 1)
        defer { unsetenv("PULSE_SERVER") }
        try withPipeWire(of: desktop) {
            let microphone = try XCTUnwrap(AVCaptureDevice.default(for: .audio))
            XCTAssertEqual(microphone.uniqueID, "@DEFAULT_SOURCE@")
            XCTAssertTrue(microphone.hasMediaType(.audio))
            let session = AVCaptureSession()
            session.addInput(try AVCaptureDeviceInput(device: try XCTUnwrap(AVCaptureDevice.default(for: .video))))
            session.addInput(try AVCaptureDeviceInput(device: microphone))
            XCTAssertEqual(session.inputs.count, 2)
            let observer = Observer(), listener = Listener()
            let pictures = AVCaptureVideoDataOutput(), sound = AVCaptureAudioDataOutput()
            pictures.setSampleBufferDelegate(observer, queue: DispatchQueue(label: "pictures"))
            sound.setSampleBufferDelegate(listener, queue: DispatchQueue(label: "sound"))
            session.addOutput(pictures)
            session.addOutput(sound)
            XCTAssertEqual(sound.connections.count, 1)
            XCTAssertNotNil(sound.connection(with: .audio))
            XCTAssertNil(sound.connection(with: .video))
            let started = Date()
            session.startRunning()
            Thread.sleep(forTimeInterval: 2)
            session.stopRunning()
            let ran = Date().timeIntervalSince(started)
            Thread.sleep(forTimeInterval: 0.3)   // what was queued for the delegates
            XCTAssertGreaterThan(observer.pictureCount, 30)
            let (buffers, samples) = listener.lock.withLock { (listener.buffers, listener.samples) }
            let frames = buffers.reduce(0) { $0 + $1.frames }
            XCTAssertEqual(Double(frames) / 48_000, ran, accuracy: 0.5, "sound for as long as the session ran")
            for (a, b) in zip(buffers, buffers.dropFirst()) {
                XCTAssertLessThan(abs(b.time - a.time - Double(a.frames) / 48_000), 0.002, "buffers back to back: \(a) then \(b)")
            }
            XCTAssertGreaterThan(AudioCheck.medianToneShare(samples[...], frequency: 1000), 0.5, "the default source's tone")
        }
    }

    func testRecordingWithoutARunningSessionTellsTheDelegate() throws {
        let desktop = try pipeWireWithCamera()
        defer { desktop.stop() }
        try withPipeWire(of: desktop) {
            let session = AVCaptureSession()
            session.addInput(try AVCaptureDeviceInput(device: try XCTUnwrap(AVCaptureDevice.default(for: .video))))
            let movie = AVCaptureMovieFileOutput()
            session.addOutput(movie)
            let observer = Observer()
            let url = URL(fileURLWithPath: path("never.mov"))
            movie.startRecording(to: url, recordingDelegate: observer)
            XCTAssertEqual(observer.finishedSignal.wait(timeout: .now() + 10), .success)
            let error = try XCTUnwrap(observer.lock.withLock { observer.finished.first?.2 })
            XCTAssertTrue("\(error)".contains("not running"), "\(error)")
            XCTAssertFalse(movie.isRecording)
            XCTAssertFalse(FileManager.default.fileExists(atPath: url.path))
        }
    }
}

// Issue 28: the capture session shaped like AVCaptureSession (MediaCaptureSession: inputs and
// outputs, canAddInput/addInput, a movie-file output, data outputs) and ReplayKit's
// startCapture(handler:) (ScreenRecorder), with the synthetic scene and two test tones of the
// tests' own (a live AudioCaptureSource, 440 Hz and 1000 Hz) as the app's sound and the
// microphone.
//
// Catalogue:
// - testInputsAndOutputsFollowAVCaptureSessionsRules: an input or output once, one movie
//   file, a second picture source accepted (titled "Camera"); refused with a reason (canAddInput/canAddOutput false, addInput
//   throws); nothing added while running; no picture source → run throws.
// - testDataOutputReceivesEverySampleWithItsTypeInOrder: 1.5 s, no movie file: the handler
//   gets every picture the source gave (45 at 30 fps, none dropped) and both sounds, each type's
//   time stamps increasing, each sound's buffers back to back (within 1 ms) and lasting as long
//   as the pictures within 100 ms; a video-only output gets no sound.
// - testMovieFileWithTwoSoundInputsAndADataOutput: a movie file (MKV) and a data output at
//   once: ffprobe finds one video and two audio tracks titled Desktop and Microphone, each
//   holding only its own tone (Goertzel, ffmpeg's decode), the data output got every captured
//   picture and the movie's statistics are on the output.
// - testWaitingForARunThatEndsByItself: startRunning() with a 1-s limit; recordingStatistics
//   while the file records, waitUntilStopped() returns the run's statistics (30 frames)
//   without a stop, nil when no run was started; recordingStatistics nil once finished.
// - testSecondPictureSourceIsATrackOfItsOwn: the scene at 320x240 and a second scene at
//   160x120 titled "Webcam" into an MP4 for 1 s: ffprobe finds two H.264 tracks of those
//   sizes, 30 frames each, the second titled Webcam, both decoding without an error; with
//   data outputs only, a second picture source is refused with the reason.
// - testReplayKitPortWritesTwoAudioTracks: the porting guide's ReplayKit port: ScreenRecorder's
//   handler appends pictures and both sounds into an AssetWriter with two audio inputs,
//   starting the writer's session at the first picture's time: an MP4 with one video and two
//   AAC tracks, each with its own tone, as long as the video within 0.1 s.
import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// A live sine tone of the tests' own: 10-ms buffers of interleaved stereo floats, each
/// delivered when its last sample is due and stamped on the host clock.
final class ToneSource: AudioCaptureSource {
    let identifier = "tone"
    let format = AudioFormat(sampleType: .f32, sampleRate: 48_000, channelLayout: .stereo)
    let isLive = true
    let frequency: Double
    private let state = Locked<(start: Int64?, next: Int, interrupted: Bool)>((nil, 0, false))

    init(frequency: Double) { self.frequency = frequency }

    func start() throws { state.withLock { $0.start = MonotonicClock.nanoseconds() } }
    func interrupt() { state.withLockNotifying { $0.interrupted = true } }
    func stop() { interrupt() }

    func nextChunk() throws -> CapturedAudio? {
        let count = 480
        guard let (first, start) = state.withLock({ s -> (Int, Int64)? in
            guard !s.interrupted, let start = s.start else { return nil }
            defer { s.next += count }
            return (s.next, start)
        }) else { return nil }
        let due = start + Int64(first + count) * 1_000_000_000 / 48_000
        let stopped = state.wait(untilNanoseconds: due) { s -> Bool? in
            s.interrupted ? true : (MonotonicClock.nanoseconds() >= due ? false : nil)
        } ?? false
        if stopped { return nil }
        var samples = [Float](repeating: 0, count: count * 2)
        for i in 0..<count {
            let v = Float(0.3 * sin(2 * Double.pi * frequency * Double(first + i) / 48_000))
            samples[2 * i] = v
            samples[2 * i + 1] = v
        }
        let pts = MediaTime(value: start + Int64(first) * 1_000_000_000 / 48_000, timescale: 1_000_000_000)
        return CapturedAudio(samples: try AudioSampleBuffer(format: format, presentationTimeStamp: pts, interleaved: samples))
    }
}

/// What a data output's handler received, in order.
final class SampleLog: Sendable {
    struct Entry { var type: SampleBufferType; var time: Double; var duration: Double }
    private let entries = Locked<[Entry]>([])
    func add(_ sample: MediaSample, _ type: SampleBufferType) {
        let duration: Double
        if case .audio(let a) = sample { duration = Double(a.frameCount) / Double(a.format.sampleRate) } else { duration = 0 }
        entries.withLock { $0.append(Entry(type: type, time: sample.presentationTimeStamp.seconds, duration: duration)) }
    }
    func of(_ type: SampleBufferType) -> [Entry] { entries.withLock { $0.filter { $0.type == type } } }
}

final class MediaCaptureSessionTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mcs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func scene(realtime: Bool = true) throws -> SyntheticSource {
        try SyntheticSource(options: CaptureSourceOptions(size: VideoSize(width: 320, height: 240), frameRate: Rational(30)!, realtime: realtime))
    }

    func testInputsAndOutputsFollowAVCaptureSessionsRules() async throws {
        // No limit and a paced source: the session runs until stopRunning(), so `isRunning` is
        // checked while it runs (3 unpaced frames were done before the check on a busy machine).
        let session = MediaCaptureSession(frameRate: Rational(30)!)
        let screen = CaptureInput(source: try scene())
        XCTAssertTrue(session.canAddInput(screen))
        try session.addInput(screen)
        XCTAssertFalse(session.canAddInput(screen), "the same input twice")
        // A second picture source: a track of its own in a movie file, titled "Camera" by default.
        let second = CaptureInput(source: try scene())
        XCTAssertTrue(session.canAddInput(second))
        try session.addInput(second)
        XCTAssertEqual(second.trackTitle, "Camera")
        session.removeInput(second)
        let mic = CaptureInput(audioSource: ToneSource(frequency: 440), type: .audioMic)
        let app = CaptureInput(audioSource: ToneSource(frequency: 1000), type: .audioApp)
        try session.addInput(mic)
        try session.addInput(app)
        XCTAssertEqual(session.inputs.count, 3)
        XCTAssertEqual(mic.trackTitle, "Microphone")
        XCTAssertEqual(app.trackTitle, "Desktop")
        let movie = CaptureMovieFileOutput(outputURL: directory.appendingPathComponent("a.mkv"))
        try session.addOutput(movie)
        XCTAssertFalse(session.canAddOutput(CaptureMovieFileOutput(outputURL: directory.appendingPathComponent("b.mkv"))), "one movie file")
        let data = CaptureDataOutput()
        XCTAssertTrue(session.canAddOutput(data))
        try session.addOutput(data)
        XCTAssertFalse(session.canAddOutput(data), "the same output twice")
        session.removeOutput(movie)
        session.removeInput(mic)
        session.removeInput(app)
        XCTAssertEqual(session.outputs.count, 1)

        // Running: nothing can be added.
        let late = CaptureDataOutput(sampleTypes: [.video])
        try session.startRunning()
        XCTAssertTrue(session.isRunning)
        XCTAssertFalse(session.canAddOutput(late))
        XCTAssertThrowsError(try session.startRunning(), "running already")
        _ = try await session.stopRunning()
        XCTAssertFalse(session.isRunning)

        let empty = MediaCaptureSession()
        try empty.addOutput(CaptureDataOutput())
        do {
            _ = try await empty.run()
            XCTFail("a session without a picture source should not run")
        } catch {
            XCTAssertTrue("\(error)".contains("no picture source"), "\(error)")
        }
    }

    func testDataOutputReceivesEverySampleWithItsTypeInOrder() async throws {
        let session = MediaCaptureSession(frameRate: Rational(30)!, limit: CaptureLimit(frames: 45))
        try session.addInput(CaptureInput(source: try scene()))
        try session.addInput(CaptureInput(audioSource: ToneSource(frequency: 1000), type: .audioApp))
        try session.addInput(CaptureInput(audioSource: ToneSource(frequency: 440), type: .audioMic))
        let log = SampleLog(), videoOnly = SampleLog()
        let all = CaptureDataOutput(), pictures = CaptureDataOutput(sampleTypes: [.video])
        all.setSampleBufferHandler(queue: DispatchQueue(label: "all")) { log.add($0, $1) }
        pictures.setSampleBufferHandler(queue: DispatchQueue(label: "pictures")) { videoOnly.add($0, $1) }
        try session.addOutput(all)
        try session.addOutput(pictures)
        let statistics = try await session.run()
        XCTAssertNil(statistics, "no movie file")
        try await Task.sleep(for: .milliseconds(200))   // the handlers' queues empty

        let video = log.of(.video)
        XCTAssertEqual(video.count, 45, "every picture")
        XCTAssertEqual(all.droppedPictures, 0)
        XCTAssertEqual(all.deliveredSamples[.video], 45)
        XCTAssertEqual(videoOnly.of(.video).count, 45)
        XCTAssertTrue(videoOnly.of(.audioApp).isEmpty && videoOnly.of(.audioMic).isEmpty, "a video-only output gets no sound")
        XCTAssertTrue(zip(video, video.dropFirst()).allSatisfy { $0.time < $1.time }, "pictures in order")
        let span = video.last!.time - video.first!.time + 1.0 / 30
        for type in [SampleBufferType.audioApp, .audioMic] {
            let sound = log.of(type)
            XCTAssertGreaterThan(sound.count, 10, "\(type)")
            for (a, b) in zip(sound, sound.dropFirst()) {
                XCTAssertEqual(b.time, a.time + a.duration, accuracy: 0.001, "\(type): buffers back to back, in order")
            }
            let length = sound.reduce(0) { $0 + $1.duration }
            XCTAssertEqual(length, span, accuracy: 0.1, "\(type) lasts as long as the pictures")
        }
    }

    func testMovieFileWithTwoSoundInputsAndADataOutput() async throws {
        let url = directory.appendingPathComponent("two.mkv")
        let session = MediaCaptureSession(frameRate: Rational(30)!, limit: CaptureLimit(duration: MediaTime(seconds: 2)))
        try session.addInput(CaptureInput(source: try scene()))
        try session.addInput(CaptureInput(audioSource: ToneSource(frequency: 1000), type: .audioApp))
        try session.addInput(CaptureInput(audioSource: ToneSource(frequency: 440), type: .audioMic))
        let movie = CaptureMovieFileOutput(outputURL: url)
        let data = CaptureDataOutput(sampleTypes: [.video])
        let log = SampleLog()
        data.setSampleBufferHandler(queue: DispatchQueue(label: "pictures")) { log.add($0, $1) }
        try session.addOutput(movie)
        try session.addOutput(data)
        let ran = try await session.run()
        let statistics = try XCTUnwrap(ran)
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertEqual(movie.statistics?.framesWritten, statistics.framesWritten)
        XCTAssertEqual(statistics.framesWritten, 60)
        XCTAssertEqual(log.of(.video).count, statistics.framesCaptured, "the data output saw every captured picture")
        XCTAssertEqual(data.droppedPictures, 0)

        let probe = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type:stream_tags=title", "-of", "csv=p=0", url.path])
        XCTAssertEqual(probe.stdout.split(separator: "\n").map(String.init), ["video", "audio,Desktop", "audio,Microphone"], probe.stdout + probe.stderr)
        for (track, frequency, other) in [(0, 1000.0, 440.0), (1, 440.0, 1000.0)] {
            let samples = try AudioCheck.decode(url.path, track: track)
            let middle = samples[samples.count / 4 ..< samples.count * 3 / 4]
            XCTAssertGreaterThan(AudioCheck.medianToneShare(middle, frequency: frequency), 0.9, "track \(track) holds \(frequency) Hz")
            XCTAssertLessThan(AudioCheck.medianToneShare(middle, frequency: other), 0.05, "track \(track) holds no \(other) Hz")
        }
        let decode = try Proc.run("ffmpeg", ["-v", "error", "-i", url.path, "-map", "0", "-f", "null", "-"])
        XCTAssertEqual(decode.stderr, "")
    }

    func testWaitingForARunThatEndsByItself() async throws {
        let url = directory.appendingPathComponent("limited.mkv")
        let session = MediaCaptureSession(frameRate: Rational(30)!, limit: CaptureLimit(duration: MediaTime(seconds: 1)))
        try session.addInput(CaptureInput(source: try scene()))
        let movie = CaptureMovieFileOutput(outputURL: url)
        try session.addOutput(movie)
        let idle = try await session.waitUntilStopped()
        XCTAssertNil(idle, "no run started")
        try session.startRunning()
        var seen: CaptureStatistics?
        for _ in 0..<100 where seen == nil {
            seen = session.recordingStatistics
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertNotNil(seen, "the file's figures while it records")
        let ended = try await session.waitUntilStopped()
        let statistics = try XCTUnwrap(ended, "the limit ended the run, no stop asked")
        XCTAssertEqual(statistics.framesWritten, 30)
        XCTAssertFalse(session.isRunning)
        XCTAssertNil(session.recordingStatistics, "none once the file is finished")
        XCTAssertEqual(movie.statistics?.framesWritten, 30)
    }

    func testSecondPictureSourceIsATrackOfItsOwn() async throws {
        let url = directory.appendingPathComponent("two-video.mp4")
        let session = MediaCaptureSession(frameRate: Rational(30)!, limit: CaptureLimit(duration: MediaTime(seconds: 1)))
        try session.addInput(CaptureInput(source: try scene()))
        let small = try SyntheticSource(options: CaptureSourceOptions(size: VideoSize(width: 160, height: 120), frameRate: Rational(30)!, realtime: true))
        try session.addInput(CaptureInput(source: small, title: "Webcam"))
        let movie = CaptureMovieFileOutput(outputURL: url)
        try session.addOutput(movie)
        let ran = try await session.run()
        let statistics = try XCTUnwrap(ran)
        XCTAssertEqual(statistics.framesWritten, 30)
        XCTAssertEqual(statistics.videoTracks.map(\.framesWritten), [30])
        let probe = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                             "stream=codec_name,width,height,nb_read_frames:stream_tags=handler_name", "-of", "csv=p=0", url.path])
        XCTAssertEqual(probe.stdout.split(separator: "\n").map(String.init), ["h264,320,240,30,VideoHandler", "h264,160,120,30,Webcam"],
                       probe.stdout + probe.stderr)
        let decode = try Proc.run("ffmpeg", ["-v", "error", "-i", url.path, "-map", "0", "-f", "null", "-"])
        XCTAssertEqual(decode.stderr, "")

        let pictures = MediaCaptureSession(limit: CaptureLimit(frames: 3))
        try pictures.addInput(CaptureInput(source: try scene(realtime: false)))
        try pictures.addInput(CaptureInput(source: try scene(realtime: false)))
        try pictures.addOutput(CaptureDataOutput())
        do {
            _ = try await pictures.run()
            XCTFail("two picture sources without a movie file should be refused")
        } catch {
            XCTAssertTrue("\(error)".contains("a second picture source is recorded only into a movie file"), "\(error)")
        }
    }

    func testReplayKitPortWritesTwoAudioTracks() async throws {
        // The porting guide's ReplayKit port (PortingFromAVFoundation.md, "ReplayKit").
        let url = directory.appendingPathComponent("replaykit.mp4")
        let screen = try scene()
        let recorder = ScreenRecorder(screen: screen, appAudio: ToneSource(frequency: 1000), microphone: ToneSource(frequency: 440))
        let writer = try AssetWriter(outputURL: url)
        let videoInput = AssetWriterInput(outputSettings: VideoSettings(codec: .h264, width: 320, height: 240))
        videoInput.expectsMediaDataInRealTime = true
        let adaptor = PixelBufferAdaptor(assetWriterInput: videoInput, sourcePixelBufferAttributes: PixelBufferAttributes(
            width: 320, height: 240, pixelFormat: screen.pixelFormat))
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
                    try? adaptor.append(picture.pixelBuffer, withPresentationTime: picture.presentationTimeStamp)
                }
            case (.audio(let sound), .audioApp):
                if started.withLock({ $0 }) { try? appInput.append(sound) }
            case (.audio(let sound), .audioMic):
                if started.withLock({ $0 }) { try? micInput.append(sound) }
            default:
                break
            }
        }, completionHandler: { error in
            if let error { XCTFail("capture did not start: \(error)") }
        })
        try await Task.sleep(for: .seconds(2))
        try await recorder.stopCapture()
        for input in [videoInput, appInput, micInput] { input.markAsFinished() }
        try await writer.finishWriting()
        XCTAssertEqual(recorder.droppedPictures, 0)

        let probe = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,codec_name,duration", "-of", "csv=p=0", url.path])
        let streams = probe.stdout.split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
        XCTAssertEqual(streams.map { $0.prefix(2).joined(separator: ",") }, ["h264,video", "aac,audio", "aac,audio"], probe.stdout + probe.stderr)
        let durations = streams.compactMap { $0.last.flatMap(Double.init) }
        XCTAssertEqual(durations.count, 3)
        if durations.count == 3 {
            XCTAssertEqual(durations[1], durations[0], accuracy: 0.1)
            XCTAssertEqual(durations[2], durations[0], accuracy: 0.1)
        }
        for (track, frequency, other) in [(0, 1000.0, 440.0), (1, 440.0, 1000.0)] {
            let samples = try AudioCheck.decode(url.path, track: track)
            let middle = samples[samples.count / 4 ..< samples.count * 3 / 4]
            XCTAssertGreaterThan(AudioCheck.medianToneShare(middle, frequency: frequency), 0.9, "track \(track) holds \(frequency) Hz")
            XCTAssertLessThan(AudioCheck.medianToneShare(middle, frequency: other), 0.05, "track \(track) holds no \(other) Hz")
        }
    }
}

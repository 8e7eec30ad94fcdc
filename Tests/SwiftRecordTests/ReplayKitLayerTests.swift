import AVFoundation
import Foundation
import ReplayKit
import TestSupport
import XCTest

/// A ReplayKit writer as Apple's samples write it (the screen, the app's sound and the
/// microphone into an AVAssetWriter with a flip), through the ReplayKit and AVFoundation
/// modules; only `setSources` (the platform part) is not Apple's.
final class ReplayKitLayerTests: XCTestCase {
    func testStartCaptureIntoAnAssetWriterWithTwoSoundTracksAndAFlip() async throws {
        try XCTSkipUnless(FF.available, "ffmpeg/ffprobe not installed")
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("replay.mp4")
        // PLATFORM PART: what stands for the app's screen, its sound and the microphone.
        let screen = try SyntheticSource(options: CaptureSourceOptions(size: VideoSize(width: 320, height: 240), frameRate: Rational(30)!, realtime: true))
        RPScreenRecorder.shared().setSources(screen: screen, appAudio: ToneSource(frequency: 1000), microphone: ToneSource(frequency: 440))

        let recorder = RPScreenRecorder.shared()
        recorder.isMicrophoneEnabled = true
        let assetWriter = try AVAssetWriter(outputURL: url, fileType: .mp4)
        let videoInput = AVAssetWriterInput(mediaType: .video, outputSettings: [
            AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 320, AVVideoHeightKey: 240,
        ])
        videoInput.expectsMediaDataInRealTime = true
        videoInput.transform = CGAffineTransformMakeScale(1, -1)
        let audioSettings: [String: Any] = [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 48_000, AVNumberOfChannelsKey: 2]
        let appAudioInput = AVAssetWriterInput(mediaType: .audio, outputSettings: audioSettings)
        let micAudioInput = AVAssetWriterInput(mediaType: .audio, outputSettings: audioSettings)
        for input in [videoInput, appAudioInput, micAudioInput] {
            input.expectsMediaDataInRealTime = true
            if assetWriter.canAdd(input) { assetWriter.add(input) }
        }
        XCTAssertTrue(assetWriter.startWriting())
        let sessionStarted = Locked(false)
        let started = expectation(description: "capture started")
        recorder.startCapture(handler: { sampleBuffer, bufferType, error in
            guard error == nil else { return }
            switch bufferType {
            case .video:
                if !sessionStarted.withLock({ s in defer { s = true }; return s }) {
                    assetWriter.startSession(atSourceTime: CMSampleBufferGetPresentationTimeStamp(sampleBuffer))
                }
                if videoInput.isReadyForMoreMediaData { videoInput.append(sampleBuffer) }
            case .audioApp:
                if sessionStarted.withLock({ $0 }), appAudioInput.isReadyForMoreMediaData { appAudioInput.append(sampleBuffer) }
            case .audioMic:
                if sessionStarted.withLock({ $0 }), micAudioInput.isReadyForMoreMediaData { micAudioInput.append(sampleBuffer) }
            }
        }, completionHandler: { error in
            XCTAssertNil(error)
            started.fulfill()
        })
        await fulfillment(of: [started], timeout: 10)
        XCTAssertTrue(recorder.isRecording)
        try await Task.sleep(for: .seconds(2))
        try await recorder.stopCapture()
        for input in [videoInput, appAudioInput, micAudioInput] { input.markAsFinished() }
        await assetWriter.finishWriting()
        XCTAssertEqual(assetWriter.status, .completed, "\(String(describing: assetWriter.error))")

        let probe = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                             "stream=codec_type,codec_name,nb_read_frames:stream_side_data=side_data_type,displaymatrix:format=duration",
                                             "-of", "json", url.path])
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any], probe.stderr)
        let streams = try XCTUnwrap(json["streams"] as? [[String: Any]])
        XCTAssertEqual(streams.map { $0["codec_type"] as? String }, ["video", "audio", "audio"])
        XCTAssertGreaterThanOrEqual(int(streams[0]["nb_read_frames"]) ?? 0, 45, "about two seconds at 30 fps")
        XCTAssertTrue(probe.stdout.contains("Display Matrix"), "the flip is the track's display matrix: \(probe.stdout)")
        let duration = Double((json["format"] as? [String: Any])?["duration"] as? String ?? "") ?? 0
        XCTAssertEqual(duration, 2, accuracy: 0.4)
    }

    /// Sets (or, with nil, removes) environment variables for `body`, then puts them back.
    private func withEnvironment<T>(_ values: [String: String?], _ body: () async throws -> T) async rethrows -> T {
        let saved = values.keys.map { ($0, getenv($0).map { String(cString: $0) }) }
        for (name, value) in values {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        defer { for (name, value) in saved { if let value { setenv(name, value, 1) } else { unsetenv(name) } } }
        return try await body()
    }

    /// startCapture's completion handler error, if any, for in-app capture.
    private func startInApp() async -> (any Error)? {
        let recorder = RPScreenRecorder.shared()
        recorder.setSources(screen: nil, appAudio: nil, microphone: nil)
        let error: (any Error)? = await withCheckedContinuation { done in
            recorder.startCapture(handler: { _, _, _ in }, completionHandler: { done.resume(returning: $0) })
        }
        if error == nil { try? await recorder.stopCapture() }
        return error
    }

    /// In-app capture with no display server named, or no sound server, says so to the
    /// completion handler and captures nothing.
    func testInAppCaptureWithoutADisplayOrSoundServerSaysWhy() async throws {
        await withEnvironment(["DISPLAY": nil, "WAYLAND_DISPLAY": nil]) {
            XCTAssertFalse(RPScreenRecorder.shared().isAvailable)
            let error = await startInApp()
            XCTAssertTrue("\(String(describing: error))".contains("$DISPLAY"), "\(String(describing: error))")
            XCTAssertFalse(RPScreenRecorder.shared().isRecording)
        }
        try XCTSkipUnless(XvfbServer.isInstalled, "Xvfb is not installed; run scripts/install-deps.sh")
        let xvfb = try XvfbServer(size: "320x240")
        defer { xvfb.stop() }
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let noServer = "unix:" + dir.appendingPathComponent("no-such-socket").path
        await withEnvironment(["DISPLAY": xvfb.display, "WAYLAND_DISPLAY": nil, "PULSE_SERVER": noServer]) {
            XCTAssertTrue(RPScreenRecorder.shared().isAvailable)
            let error = await startInApp()
            let text = "\(String(describing: error))"
            XCTAssertNotNil(error)
            XCTAssertTrue(text.lowercased().contains("pulse"), text)
            print("ReplayKitLayerTests: without a sound server: \(text)")
            XCTAssertFalse(RPScreenRecorder.shared().isRecording)
        }
    }
}

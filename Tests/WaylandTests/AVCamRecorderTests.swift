// Issue 39: Examples/AVCamRecorder, AVCam's movie recording ported with only its import and
// its marked platform parts changed, run as built against the tests' own PipeWire camera
// (swift-record-test-camera on a private PipeWire, 320x240 at 30 fps) and a private
// PulseAudio whose default source (the null sink's monitor) hears a 1 kHz tone.
//
// Catalogue:
// - testPortedAVCamRecordsCameraAndMicrophone: AVCaptureDevice.default picks the camera and
//   PulseAudio's default source, AVCaptureMovieFileOutput.startRecording(to:recordingDelegate:)
//   and stopRecording() 3 s apart → exit 0, the delegate's recordedDuration about 3 s; ffprobe:
//   a QuickTime file with an H.264 320x240 track (frames = duration × 30 within a frame) and
//   an AAC track, both as long as the recording; the pictures are the camera's (red, its
//   frame blocks advancing), the sound is the tone (Goertzel share over 0.5) in over 80 % of
//   its 50-ms windows.
// - testPortedAVCamWithoutACameraSaysSo: no PipeWire and no /dev/video* → exit 1 saying the
//   default video device is unavailable, no file written.
import Foundation
import SwiftRecord
import TestSupport
import XCTest

final class AVCamRecorderTests: CameraTestCase {
    static let recorder = PackagePaths.product("AVCamRecorder")

    func testPortedAVCamRecordsCameraAndMicrophone() throws {
        let (desktop, pulse) = try cameraAndMicrophone()
        var environment = desktop.clientEnvironment()
        environment["PULSE_SERVER"] = pulse.address

        let out = path("avcam.mov")
        let run = try Proc.run(Self.recorder, [out, "3"], environment: environment, timeout: 120)
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        let line = try XCTUnwrap(run.stdout.split(separator: "\n").last { $0.hasPrefix("{") }.map(String.init), run.stdout + run.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
        XCTAssertTrue(report["error"] is NSNull, line)
        let recorded = try XCTUnwrap(double(report["recordedSeconds"]), line)
        XCTAssertEqual(recorded, 3, accuracy: 0.7, "the delegate's recordedDuration: \(line)")

        let probe = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                             "stream=codec_type,codec_name,width,height,nb_read_frames,duration:format=duration,format_name",
                                             "-of", "json", out])
        XCTAssertTrue(probe.succeeded, probe.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let streams = try XCTUnwrap(json["streams"] as? [[String: Any]])
        XCTAssertEqual(streams.map { $0["codec_type"] as? String }, ["video", "audio"], probe.stdout)
        guard streams.count == 2 else { return }
        XCTAssertEqual(streams[0]["codec_name"] as? String, "h264")
        XCTAssertEqual(int(streams[0]["width"]), 320)
        XCTAssertEqual(int(streams[0]["height"]), 240)
        XCTAssertEqual(streams[1]["codec_name"] as? String, "aac")
        let format = try XCTUnwrap(json["format"] as? [String: Any])
        XCTAssertTrue((format["format_name"] as? String ?? "").contains("mov"), "\(format)")
        let duration = try XCTUnwrap(double(format["duration"]))
        XCTAssertEqual(duration, recorded, accuracy: 0.2, "the file holds what the delegate said")
        XCTAssertEqual(duration, 3, accuracy: 0.7)
        let frames = try XCTUnwrap(int(streams[0]["nb_read_frames"]))
        XCTAssertEqual(Double(frames), (double(streams[0]["duration"]) ?? 0) * 30, accuracy: 1.5, "30 fps, constant")
        XCTAssertEqual(double(streams[1]["duration"]) ?? 0, double(streams[0]["duration"]) ?? 0, accuracy: 0.25, "sound as long as the pictures")

        // The camera's pictures: red below its frame blocks, the blocks advancing.
        let rgb = try FF.rgb(out, x: 300, y: 230, at: 1.0)
        XCTAssertGreaterThan(rgb.0, 200, "\(rgb)")
        XCTAssertLessThan(rgb.1, 80, "\(rgb)")
        let numbers = try lumaFrames(out, width: 320, height: 240).map { frameNumber($0, width: 320) }
        XCTAssertGreaterThanOrEqual(Set(numbers).count, frames * 2 / 3, "the camera's pictures advance: \(numbers)")
        // The microphone's sound: the tone, in the middle of the file.
        let samples = try AudioCheck.decode(out)
        XCTAssertGreaterThan(samples.count, 96_000)
        let middle = samples[(samples.count / 4)..<(samples.count * 3 / 4)]
        XCTAssertGreaterThan(AudioCheck.medianToneShare(middle, frequency: 1000), 0.5, "the default source's tone")
        // And through the whole file: sound in nearly every 50-ms window.
        let windows = stride(from: 0, to: samples.count - 2400, by: 2400).map { AudioCheck.rms(samples[$0..<($0 + 2400)]) }
        XCTAssertGreaterThan(Double(windows.filter { $0 > 0.05 }.count), Double(windows.count) * 0.8, "\(windows)")
    }

    func testPortedAVCamWithoutACameraSaysSo() throws {
        try XCTSkipIf(!V4L2Device.all().isEmpty, "this machine has a V4L2 camera")
        let out = path("none.mov")
        let environment = try withoutPipeWire(ProcessInfo.processInfo.environment)
        let run = try Proc.run(Self.recorder, [out, "1"], environment: environment, timeout: 60)
        XCTAssertEqual(run.status, 1, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("Default video device is unavailable."), run.stdout)
        XCTAssertTrue(run.stderr.contains("could not be set up"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }
}

import Foundation
import TestSupport
import XCTest

/// Examples/ReplayKitWriter, a ReplayKit in-app capture writer ported with only its imports
/// changed, run as built under a private Xvfb and a private PulseAudio server: the port
/// opens its own window (`_NET_WM_PID`) and plays a 1 kHz tone itself; the default
/// microphone is the monitor of a sink `mic` where `pacat` plays 440 Hz. ffprobe and ffmpeg
/// check the file: a flipped H.264 track of the window's pictures (not the screen's), an
/// "App Audio" track holding 1 kHz and not 440 Hz, a "Microphone" track the other way round.
final class ReplayKitWriterExampleTests: PulseCLITestCase {
    override class var runsTheBinary: Bool { false }

    func testInAppCaptureWritesTheWindowTheAppsSoundAndTheMicrophone() throws {
        try XCTSkipUnless(XvfbServer.isInstalled, "Xvfb is not installed; run scripts/install-deps.sh")
        let example = PackagePaths.product("ReplayKitWriter")
        guard FileManager.default.isExecutableFile(atPath: example) else {
            throw TestError.failed("\(example) is not built; run `swift build --build-tests` first (make test does)")
        }
        let xvfb = try XvfbServer(size: "640x480")
        defer { xvfb.stop() }
        try server.pactl(["load-module", "module-null-sink", "sink_name=mic", "rate=48000", "channels=2"])
        try server.pactl(["set-default-sink", "test"])
        try server.pactl(["set-default-source", "mic.monitor"])
        track(try server.playTone(440, into: "mic", writingTo: path("mic-440.raw"), settle: 1))

        var environment = server.environment
        environment["DISPLAY"] = xvfb.display
        let movie = path("replay.mp4")
        let run = try Proc.run(example, [movie, "3"], environment: environment, timeout: 120)
        XCTAssertTrue(run.succeeded, run.stdout + run.stderr)
        XCTAssertTrue(run.stderr.contains("in-app capture: this process's X11 window"), run.stderr)
        let line = try XCTUnwrap(run.stdout.split(separator: "\n").last { $0.hasPrefix("{") }.map(String.init), run.stdout)
        let stats = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
        XCTAssertEqual(stats["finished"] as? Bool, true, line)
        let frames = try XCTUnwrap(int(stats["videoFrames"]), line)
        XCTAssertGreaterThanOrEqual(frames, 60, "three seconds at 30 fps, a busy machine may drop some: \(line)")

        let probe = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                             "stream=codec_type,codec_name,width,height,nb_read_frames,duration:stream_tags=handler_name:stream_side_data=displaymatrix:format=duration",
                                             "-of", "json", movie])
        XCTAssertTrue(probe.succeeded, probe.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let streams = try XCTUnwrap(json["streams"] as? [[String: Any]])
        XCTAssertEqual(streams.map { $0["codec_type"] as? String }, ["video", "audio", "audio"])
        XCTAssertEqual(streams.map { $0["codec_name"] as? String }, ["h264", "aac", "aac"])
        XCTAssertEqual(int(streams[0]["width"]), 320, "the window's size, not the screen's")
        XCTAssertEqual(int(streams[0]["height"]), 240)
        XCTAssertEqual(int(streams[0]["nb_read_frames"]), frames, "every picture appended is in the file")
        let titles = streams.dropFirst().map { ($0["tags"] as? [String: Any])?["handler_name"] as? String }
        XCTAssertEqual(titles, ["App Audio", "Microphone"])
        // CGAffineTransform(scaleX: 1, y: -1): d = -1 in 16.16 fixed point.
        let matrix = try XCTUnwrap((streams[0]["side_data_list"] as? [[String: Any]])?.first?["displaymatrix"] as? String, probe.stdout)
        XCTAssertTrue(matrix.contains("-65536"), matrix)
        let duration = try XCTUnwrap(Double((json["format"] as? [String: Any])?["duration"] as? String ?? ""))
        XCTAssertEqual(duration, 3, accuracy: 0.5)
        for stream in streams {
            XCTAssertEqual(Double(stream["duration"] as? String ?? "") ?? 0, duration, accuracy: 0.25, "every track runs the whole recording: \(stream)")
        }

        // The window's ground (0x204060 or 0x604020, the bar elsewhere at that time), not the root's.
        let (red, green, blue) = try FF.rgb(movie, x: 300, y: 120, at: 1.5)
        XCTAssertEqual(Double(green), 64, accuracy: 24, "rgb \(red) \(green) \(blue)")
        XCTAssertGreaterThan(abs(red - blue), 32, "rgb \(red) \(green) \(blue)")

        // Each sound where it belongs: the app's tone alone on App Audio, the microphone's on Microphone.
        let app = try AudioCheck.decode(movie, track: 0), mic = try AudioCheck.decode(movie, track: 1)
        // Both sounds were playing a second before capture started: heard from the start.
        let middle = { (pcm: [Float]) in pcm[min(pcm.count, 24_000)..<min(pcm.count, 120_000)] }
        let levels = "rms app \(AudioCheck.rms(middle(app))), mic \(AudioCheck.rms(middle(mic))); \(run.stderr)"
        XCTAssertGreaterThan(AudioCheck.medianToneShare(middle(app), frequency: 1000), 0.8, levels)
        XCTAssertLessThan(AudioCheck.medianToneShare(middle(app), frequency: 440), 0.1, levels)
        XCTAssertGreaterThan(AudioCheck.medianToneShare(middle(mic), frequency: 440), 0.8, levels)
        XCTAssertLessThan(AudioCheck.medianToneShare(middle(mic), frequency: 1000), 0.1, levels)
    }
}

import SwiftRecord
import XCTest
@testable import swift_record

/// `record`'s argument rules, checked in process: each case parses an argument array as
/// the binary does (`SwiftRecordCommand.attachingNegativeValues`, then `Record.parse`, which
/// reports the plan's usage errors) and makes the `RecordingPlan`, with no file, device or
/// server opened and no process spawned. A refusal is the exit status and the message the
/// binary prints (64 usage, 2 refused). The spawned tests keep a few of these end to end
/// (RecordCommandTests.testBadValuesExitNonZeroNamingTheOption, ExitStatusTests,
/// RequestRulesTests.testCodecsFollowTheContainer): the binary wires the plan in.
///
/// Moved here from spawned runs: the bad-value table of RecordCommandTests (24 cases), the
/// three codec/container refusals of RequestRulesTests.testCodecsFollowTheContainer, the
/// out-of-range volumes of testTimesAndVolumesAreExact, the comma in a title of
/// testCommaInATitleIsEscapedOrExplained.
final class RecordingPlanTests: XCTestCase {
    struct Refusal: Error, Equatable {
        let status: Int32
        let message: String
    }

    /// The plan `swift-record record args` makes in `environment`, or its refusal.
    func plan(_ args: [String], environment: [String: String] = [:]) -> Result<RecordingPlan, Refusal> {
        let command: Record
        do {
            command = try Record.parse(SwiftRecordCommand.attachingNegativeValues(args))
        } catch {
            return .failure(Refusal(status: Record.exitCode(for: error).rawValue, message: Record.message(for: error)))
        }
        do throws(RecordingPlan.Problem) {
            let made = try RecordingPlan(command, environment: environment)
            return .success(made)
        } catch {
            return .failure(Refusal(status: error.status.rawValue, message: error.message))
        }
    }

    func made(_ args: [String], environment: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) throws -> RecordingPlan {
        switch plan(args, environment: environment) {
        case .success(let p): return p
        case .failure(let r):
            XCTFail("\(args): refused (\(r.status)): \(r.message)", file: file, line: line)
            throw XCTSkip("no plan")
        }
    }

    func refusal(_ args: [String], file: StaticString = #filePath, line: UInt = #line) -> Refusal? {
        guard case .failure(let r) = plan(args) else {
            XCTFail("\(args) made a plan", file: file, line: line)
            return nil
        }
        return r
    }

    /// Was RecordCommandTests.testBadValuesExitNonZeroNamingTheOption's table (spawned): a
    /// bad value is a usage error naming the option and saying what is expected.
    func testBadValuesAreUsageErrorsNamingTheOption() {
        let cases: [([String], String)] = [
            (["--fps", "0"], "--fps"), (["--fps", "abc"], "--fps"), (["--size", "12x"], "--size"), (["--size", "0x100"], "--size"),
            (["--size", "641x360"], "--size"), (["--bitrate", "fast"], "--bitrate"), (["--bitrate", "2MB"], "--bitrate"),
            (["--codec", "mpeg2"], "--codec"), (["--duration", "1x"], "--duration"), (["--duration", "5sec"], "--duration"),
            (["--duration=-3"], "--duration"), (["--bitrate", "2Mbps"], "--bitrate"), (["--bitrate", "2 M"], "--bitrate"),
            (["--fps", "30fps"], "--fps"), (["--fps", "1/0"], "--fps"), (["--fps", "1000000/1"], "--fps"),
            (["--size", "1280*720"], "--size"), (["--size", "16385x720"], "--size"), (["--fragment-interval", "0"], "--fragment-interval"),
            (["--frames", "0"], "--frames"), (["--preset", "quick"], "--preset"), (["--keyint", "0"], "--keyint"),
            (["-o", "/tmp/out.avi"], "--output"), (["--source", "webcam"], "--source"),
        ]
        for (args, option) in cases {
            guard let r = refusal(["--source", "synthetic", "--frames", "5", "-o", "/tmp/bad.mp4"] + args) else { continue }
            XCTAssertEqual(r.status, 64, "\(args): \(r.message)")
            XCTAssertTrue(r.message.contains(option), "\(args): message should name \(option): \(r.message)")
            let said = r.message.lowercased()
            XCTAssertTrue(said.contains("expected") || said.contains("provide one of"), "\(args): message should say what is expected: \(r.message)")
        }
        XCTAssertEqual(refusal(["--source", "webcam"])?.message,
                       "--source: unknown source 'webcam'; expected one of: broadcast, camera, pipewire, synthetic, wayland, x11, yuv")
    }

    /// `--source broadcast:NAME`: another process's pictures, on the name given.
    func testABroadcastSourceNeedsAName() throws {
        XCTAssertEqual(try made(["--source", "broadcast:demo", "-o", "/tmp/b.mp4"]).source, .broadcast("demo"))
        for text in ["broadcast", "broadcast:"] {
            let r = refusal(["--source", text, "-o", "/tmp/b.mp4"])
            XCTAssertEqual(r?.status, 64)
            XCTAssertEqual(r?.message, "--source broadcast needs a name: --source broadcast:NAME (the name the sender connects to)")
        }
    }

    /// `--source pipewire:NODE`: any PipeWire picture producer, the node named as written.
    func testAPipeWireSourceNeedsANode() throws {
        XCTAssertEqual(try made(["--source", "pipewire:sr-gst", "-o", "/tmp/p.mp4"]).source, .pipeWire(node: "sr-gst"))
        XCTAssertEqual(try made(["--source", "pipewire:Virtual: cam 2", "-o", "/tmp/p.mp4"]).source, .pipeWire(node: "Virtual: cam 2"))
        for text in ["pipewire", "pipewire:"] {
            let r = refusal(["--source", text, "-o", "/tmp/p.mp4"])
            XCTAssertEqual(r?.status, 64)
            XCTAssertEqual(r?.message.hasPrefix("--source pipewire needs a node: --source pipewire:NODE"), true, r?.message ?? "")
        }
        // Not a camera: the camera's options do not apply to it.
        XCTAssertEqual(refusal(["--source", "pipewire:sr-gst", "--camera-fps", "15", "-o", "/tmp/p.mp4"])?.status, 64)
    }

    /// Was RequestRulesTests.testCodecsFollowTheContainer's refusals (spawned): a codec the
    /// container cannot carry is refused (2), naming what fits, before any source opens.
    func testCodecsTheContainerCannotCarryAreRefused() throws {
        for (args, says) in [(["--codec", "vp9", "-o", "x.mov"], ["cannot carry vp9", "h264 or hevc", ".mkv"]),
                             (["--audio-codec", "opus", "-o", "y.mov"], ["cannot carry opus", "aac"]),
                             (["--codec", "h264", "-o", "y.webm"], ["cannot carry h264", "vp9 or av1"])] {
            let r = refusal(["--source", "synthetic", "--frames", "10", "--audio", "synthetic"] + args)
            XCTAssertEqual(r?.status, 2, "\(args)")
            for s in says { XCTAssertTrue(r?.message.contains(s) ?? false, "\(args): '\(s)' missing from \(r?.message ?? "")") }
        }
        let webm = try made(["--source", "synthetic", "-o", "x.webm"])
        XCTAssertEqual(webm.codec, .vp9)
        XCTAssertEqual(webm.audioCodec, .opus)
        XCTAssertEqual(webm.codecNote, "a .webm file carries vp9 (the default there; --codec chooses another)")
        XCTAssertNil(try made(["--source", "synthetic", "-o", "x.mkv"]).codecNote)
    }

    /// Was part of RequestRulesTests.testTimesAndVolumesAreExact (spawned): volumes are exact,
    /// refused (2) past 4 or +12 dB, and need --audio-mix.
    func testVolumesAreExactAndNeedTheMix() throws {
        let mix = ["--source", "synthetic", "--audio-mix", "--audio", "synthetic"]
        for volume in ["4.0001", "12.0001dB"] {
            let r = refusal(mix + ["--audio", "synthetic,volume=\(volume)"])
            XCTAssertEqual(r?.status, 2, volume)
            XCTAssertTrue(r?.message.contains("volume=\(volume) is out of range") ?? false, r?.message ?? "")
        }
        let volumes = try made(mix + ["--audio", "synthetic,volume=4", "--audio", "synthetic,volume=12dB"]).sounds.map(\.volume)
        XCTAssertEqual(volumes.count, 3)
        XCTAssertEqual(volumes[0], 1)
        XCTAssertEqual(volumes[1], 4)
        XCTAssertEqual(volumes[2], 3.98, accuracy: 0.01)
        let alone = refusal(["--source", "synthetic", "--audio", "synthetic,volume=0.5"])
        XCTAssertEqual(alone?.status, 2)
        XCTAssertTrue(alone?.message.contains("needs --audio-mix") ?? false, alone?.message ?? "")
    }

    /// Was the first half of RequestRulesTests.testCommaInATitleIsEscapedOrExplained.
    func testCommaInATitleIsExplained() throws {
        let r = refusal(["--source", "synthetic", "--audio", "pulse:test.monitor,title=a,b"])
        XCTAssertEqual(r?.status, 64)
        XCTAssertTrue((r?.message.contains("holds a comma") ?? false) && (r?.message.contains("\\,") ?? false), r?.message ?? "")
        let sounds = try made(["--source", "synthetic", "--audio", "synthetic,title=Left\\, Right"]).sounds
        XCTAssertEqual(sounds.map(\.choice.title), ["Left, Right"])
    }

    func testAudioNoneStandsAloneAndWavNeedsAFile() throws {
        let r = refusal(["--source", "synthetic", "--audio", "none", "--audio", "synthetic"])
        XCTAssertEqual(r, Refusal(status: 2, message: "--audio: --audio none cannot stand beside other --audio sources; give either none or the sources"))
        XCTAssertEqual(refusal(["--source", "synthetic", "--audio", "wav"])?.status, 2)
        XCTAssertTrue(refusal(["--source", "synthetic", "--audio", "wav:"])?.message.contains("wav needs a file") ?? false)
        XCTAssertEqual(try made(["--source", "synthetic", "--audio", "none"]).sounds, [])
        XCTAssertEqual(try made(["--source", "synthetic"]).sounds.map(\.choice), [.automatic])
    }

    /// The source is an enum made from `--source`, or from the environment without it.
    func testTheSourceIsChosenOnce() throws {
        XCTAssertEqual(try made(["--source", "camera:/dev/video3"]).source, .camera("/dev/video3"))
        XCTAssertEqual(try made(["--source", "camera:"]).source, .camera(nil))
        XCTAssertEqual(try made(["--source", "yuv:-", "--size", "64x48"]).source, .rawVideo(path: "-"))
        XCTAssertEqual(refusal(["--source", "yuv"])?.status, 64)
        XCTAssertTrue(refusal(["--source", "yuv:"])?.message.contains("--source yuv needs a file") ?? false)
        let synthetic = try made([])
        XCTAssertEqual(synthetic.source, .synthetic)
        XCTAssertEqual(synthetic.sourceNote, "swift-record: no DISPLAY set; recording the synthetic scene (use --source to choose)")
        XCTAssertEqual(try made([], environment: ["DISPLAY": ":1"]).source, .x11)
        XCTAssertEqual(try made([], environment: ["WAYLAND_DISPLAY": "wayland-0"]).source, .wayland)
        XCTAssertEqual(try made([], environment: ["WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0", "XDG_SESSION_TYPE": "wayland"]).source, .wayland)
        XCTAssertEqual(try made(["--window", "0x2a"], environment: ["WAYLAND_DISPLAY": "wayland-0"]).source, .x11)
        XCTAssertNil(try made(["--source", "x11"], environment: ["DISPLAY": ":1"]).sourceNote)
    }

    /// Options that belong to another source are usage errors naming both.
    func testOptionsOfAnotherSourceAreRefused() {
        let cases: [([String], String)] = [
            (["--source", "synthetic", "--display", ":1"], "--display applies to the screen (--source x11), not to --source synthetic"),
            (["--source", "camera", "--region", "0,0,64,64"], "--region applies to the screen (--source x11 or wayland), not to --source camera"),
            (["--source", "x11", "--screencast", "mutter"], "--screencast applies to a Wayland screen (--source wayland), not to --source x11"),
            (["--source", "synthetic", "--pix-fmt", "nv12"], "--pix-fmt applies to --source yuv:FILE"),
            (["--source", "synthetic", "--scale", "641x360"], "--scale 641x360 has an odd side"),
            (["--source", "wayland", "--screencast", "portal", "--monitor", "HDMI-1"], "--monitor applies to --screencast mutter"),
            (["--source", "camera", "--overlay", "top-left"], "--overlay puts a camera over a screen"),
            (["--source", "synthetic", "--overlay", "top-left"], "--overlay needs --camera NAME"),
            (["--source", "synthetic", "--camera-size", "640x480"], "--camera-size applies to a camera"),
        ]
        for (args, says) in cases {
            let r = refusal(args)
            XCTAssertEqual(r?.status, 64, "\(args)")
            XCTAssertTrue(r?.message.contains(says) ?? false, "\(args): '\(says)' missing from \(r?.message ?? "")")
        }
        XCTAssertNotNil(try? made(["--source", "wayland", "--region", "0,0,64,64", "--no-cursor"]))
        XCTAssertNotNil(try? made(["--source", "yuv:in.yuv", "--size", "65x47", "--pix-fmt", "nv12"]), "odd sizes are a raw file's to have")
    }

    func testTheCameraGoesBesideOrOverTheScreen() throws {
        XCTAssertEqual(try made(["--source", "x11", "--camera", "/dev/video0"]).camera, .secondTrack(name: "/dev/video0"))
        XCTAssertEqual(try made(["--source", "x11", "--camera", "cam", "--overlay", "top-right,640x360,8"]).camera,
                       .overlay(name: "cam", corner: .topRight, size: VideoSize(width: 640, height: 360), margin: 8))
        XCTAssertEqual(try made(["--source", "camera", "--camera", "cam"]).camera, .none)
        let r = refusal(["--source", "x11", "--camera", "cam", "--overlay", "top-right,641x360"])
        XCTAssertEqual(r?.status, 64)
        XCTAssertTrue(r?.message.contains("the size '641x360' is not WxH with even sides") ?? false, r?.message ?? "")
    }

    /// `--fps` enters the plan once; the encoder's settings and key-frame interval follow it.
    func testTheFrameRateEntersOnce() throws {
        let p = try made(["--source", "synthetic", "--fps", "30000/1001", "--frames", "7", "--duration", "2"])
        XCTAssertEqual(p.frameRate, Rational(30000, 1001))
        XCTAssertEqual(p.limit.frames, 7)
        XCTAssertEqual(p.limit.duration, MediaTime(seconds: 2))
        let (settings, mode) = p.videoSettings(size: VideoSize(width: 640, height: 360))
        XCTAssertEqual(settings.expectedSourceFrameRate, Rational(30000, 1001))
        XCTAssertEqual(settings.maxKeyFrameInterval, 60)
        XCTAssertEqual(settings.width, 640)
        XCTAssertEqual(mode, .constant)
        let content = try made(["--source", "synthetic", "--fps", "10", "--frame-rate-mode", "content"]).videoSettings(size: VideoSize(width: 64, height: 48))
        XCTAssertEqual(content.1, .content(maximumInterval: MediaTime(seconds: 2)))
        XCTAssertEqual(content.0.encoderOptions["bf"], "0")
        XCTAssertEqual(try made(["--source", "synthetic", "--camera", "c"]).cameraSettings(size: VideoSize(width: 320, height: 240), bitRate: 500_000).rateControl,
                       .averageBitRate(500_000))
    }

    func testOutputsAreSortedIntoAFileAndLiveOutputs() throws {
        let p = try made(["--source", "synthetic", "-o", "a.mkv", "-o", "rtmp://host/app/key", "-o", "h.m3u8"])
        XCTAssertEqual(p.outputs.file, "a.mkv")
        XCTAssertTrue(p.outputs.fileWasGiven)
        XCTAssertEqual(p.outputs.live.map(\.kind), [.rtmp, .hls])
        XCTAssertEqual(p.fileType, .mkv)
        let defaulted = try made(["--source", "synthetic"])
        XCTAssertFalse(defaulted.outputs.fileWasGiven)
        XCTAssertTrue(defaulted.outputs.file.hasPrefix("swift-record-") && defaulted.outputs.file.hasSuffix(".mp4"), defaulted.outputs.file)
        XCTAssertEqual(refusal(["-o", "a.mp4", "-o", "b.mp4"])?.status, 64)
        XCTAssertEqual(refusal(["-o", "x.m3u8", "-o", "x.m3u8"])?.message.contains("the same .m3u8 playlist twice"), true)
        let memory = refusal(["--source", "synthetic", "--replay-memory", "256M"])
        XCTAssertEqual(memory?.status, 64)
        XCTAssertTrue((memory?.message.contains("--replay-memory") ?? false) && (memory?.message.contains("--replay-buffer") ?? false))
    }

    /// The parsers that were closures in the option declarations, now in `ValueParsing`.
    func testOptionValuesAreParsedByValueParsing() throws {
        XCTAssertEqual(try ValueParsing.byteSize("256M", option: "--replay-memory"), 256_000_000)
        XCTAssertThrowsError(try ValueParsing.byteSize("65G", option: "--replay-memory"))
        XCTAssertEqual(try ValueParsing.sourceStall("20:500").frame, 20)
        XCTAssertThrowsError(try ValueParsing.sourceStall("20:-1"))
        XCTAssertThrowsError(try ValueParsing.sourceStall("1:99999999999999999"))
        XCTAssertEqual(try ValueParsing.choice("FULL", among: [ScreenCaptureMethod.damage, .full], option: "--capture", what: "a method",
                                               ignoringCase: true), .full)
        XCTAssertThrowsError(try ValueParsing.choice("FULL", among: [ScreenCaptureMethod.damage, .full], option: "--capture", what: "a method"))
        for (args, says) in [(["--log-level", "loud"], "--log-level 'loud' is not a level; expected critical, error, warning, notice, info, debug or trace"),
                             (["--capture", "some"], "--capture 'some' is not a capture method; expected damage or full"),
                             (["--screencast", "x"], "--screencast 'x' is not a screen-cast interface; expected portal or mutter"),
                             (["--replay-memory", "lots"], "--replay-memory 'lots' is not valid; expected a size in bytes such as 256M or 1G"),
                             (["--simulate-source-stall", "5"], "--simulate-source-stall '5' is not valid")] {
            let r = refusal(args)
            XCTAssertEqual(r?.status, 64, "\(args)")
            XCTAssertTrue(r?.message.contains(says) ?? false, "\(args): '\(says)' missing from \(r?.message ?? "")")
        }
        XCTAssertNotNil(try? made(["--source", "synthetic", "--log-level", "DEBUG"]))
    }
}

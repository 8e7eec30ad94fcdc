import ArgumentParser
import Foundation
import SwiftRecord
import SwiftRecordX11
import SwiftRecordPulse
import SwiftRecordWayland
import SwiftRecordBroadcast
#if canImport(Glibc)
import Glibc
#endif

struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",  // named, not derived from the type's name at every use (String(describing:))
        abstract: "Record a capture source (the screen by default, the synthetic scene without a display).",
        discussion: """
        Stops at --duration or --frames, or on Ctrl-C, SIGTERM, SIGHUP or q + Enter; in every case the file is finished properly and the exit status is 0 (a stop before recording started, during a live output's connect say, leaves no file and exits 1). Messages that cannot be printed (stderr closed, full, or a pipe whose reader is gone) are dropped, never a reason to stop. SIGUSR1, or p + Enter on a terminal, pauses and resumes: the file continues without a gap. If the X server goes away, the file keeps what was recorded and the exit status is 1. The container follows the output's extension: .mp4, .mov, .mkv or .webm.

        The screen is recorded at a constant frame rate: a tick whose grab came late repeats the previous picture, and ticks the encoder could not take at once (a stall, a stopped process) are written as soon as it can, up to 2 s of them, so the file keeps one frame per tick. --timing-log writes every decision as CSV.

        EXAMPLES
          swift-record -o screen.mkv
          swift-record --audio default --audio pulse:mic -o talk.mkv
          swift-record --fps 30 --bitrate 2M
          swift-record --region 100,50,640,360 --duration 10 -o part.mp4
          swift-record --window 0x2a00007 --no-cursor -o window.mkv
          swift-record --display :1 --scale 1280x720 -o 720p.mp4
          swift-record --source synthetic --size 1920x1080 --frames 600 -o scene.mp4
          swift-record --source synthetic --realtime --duration 10 -o live.mp4
        """
    )

    @OptionGroup(title: "Output and files") var outputs: RecordOutputOptions

    @Option(help: ArgumentHelp("Capture source: x11, wayland, synthetic (default: wayland in a Wayland session, x11 when DISPLAY is set, else synthetic), camera[:NAME] (a PipeWire camera, or a V4L2 device: camera:/dev/video0), yuv:FILE (raw video with --size and --pix-fmt, or .y4m; - for standard input), broadcast:NAME (what another process sends to the name NAME; its sound: --audio broadcast:app, broadcast:mic), or pipewire:NODE (any PipeWire picture producer, a Video/Source or Stream/Output/Video node such as GStreamer's pipewiresink or a virtual camera, by its node name, description, serial or id; an unknown NODE lists those there are).", valueName: "name"),
            completion: .list(["x11", "wayland", "synthetic", "camera", "camera:", "yuv:", "pipewire:"]))
    var source: String?

    @Option(name: .customLong("pix-fmt"), help: ArgumentHelp("Pixel format of --source yuv:FILE raw video (default yuv420p; see convert --help).", valueName: "name"),
            transform: parsed(RawPixelFormat.parse))
    var pixFmt: RawPixelFormat?

    @OptionGroup(title: "Screen (the x11 source)") var screen: ScreenOptions
    @OptionGroup(title: "Wayland screen (the wayland source)") var wayland: WaylandOptions
    @OptionGroup(title: "Camera") var cameraOptions: CameraOptions

    @Option(help: ArgumentHelp("Scale the recording to WxH (even sides), e.g. 1280x720 to record 1080p as 720p.", valueName: "WxH"),
            transform: parsed(ValueParsing.size))
    var scale: VideoSize?

    @Option(help: ArgumentHelp("Picture size WxH for sources that can make any size (synthetic; default 1280x720), or of --source yuv:FILE raw video.", valueName: "WxH"),
            transform: parsed(ValueParsing.size))
    var size: VideoSize?

    @Option(help: ArgumentHelp("Frames per second of the recording: 30, 60, 30000/1001.", valueName: "rate"),
            transform: parsed(ValueParsing.frameRate))
    var fps: Rational = Rational(30)!

    @OptionGroup(title: "Encoding") var encoder: EncoderOptions
    @OptionGroup(title: "Encoding") var rate: FrameRateOptions

    @OptionGroup(title: "Audio") var sound: AudioOptions

    @OptionGroup(title: "Replay buffer") var replay: ReplayOptions

    @OptionGroup(title: "Length") var length: RecordLengthOptions

    @Flag(help: "Pace the synthetic scene by the wall clock, as a live source (otherwise it renders as fast as the encoder takes frames).")
    var realtime = false

    @Flag(name: .shortAndLong, help: "No progress line.")
    var quiet = false

    @OptionGroup var replace: OverwriteOption

    @OptionGroup(title: "Messages") var logging: LoggingOptions

    // FAULT-INJECTION: hidden options for the timestamp stress tests.
    @Option(help: ArgumentHelp("Test only: sleep this many milliseconds before encoding each frame.", valueName: "ms", visibility: .hidden))
    var simulateEncodeDelay: Int?

    @Option(help: ArgumentHelp("Test only: stall the live capture thread before the grab for frame N, for ms milliseconds.", valueName: "frame:ms", visibility: .hidden),
            transform: parsed(ValueParsing.sourceStall))
    var simulateSourceStall: (frame: Int64, milliseconds: Int)?

    /// Reports the plan's usage errors (exit 64) as argument-parser reports its own; its
    /// refusals (exit 2) are `run`'s to report.
    func validate() throws {
        do {
            _ = try RecordingPlan(self, environment: ProcessInfo.processInfo.environment)
        } catch {
            if case .usage(let message) = error { throw ValidationError(message) }
        }
    }

    /// Plan (no file, device or server opened), set up (files, sources, the writer), run the
    /// session, report. Every early end is a `RecordExit`: said here, then its status.
    func run() async throws {
        logging.bootstrap()
        do {
            let plan: RecordingPlan
            do { plan = try RecordingPlan(self, environment: ProcessInfo.processInfo.environment) } catch {
                throw RecordExit(error.message, error.status)
            }
            try listIfAsked()
            // Signals are taken before any file is created: a stop during start-up undoes it.
            let control = RecordingControl()
            let signals = SignalWatcher(stop: control.stop, togglePause: {
                guard let paused = control.togglePause() else { return }
                note(paused ? "\nswift-record: paused (SIGUSR1 or p + Enter resumes)" : "\nswift-record: resumed")
            }, saveReplay: control.saveReplay)
            let output = try reserveOutput(plan)
            // A default name no writer took (start-up failed or was stopped) is removed.
            defer { if !plan.outputs.fileWasGiven { OutputFile.releaseReservation(output) } }
            let files = try checkFiles(plan, output: output)
            let sources = try openSources(plan, files: files, control: control)
            let directory = OutputDirectoryWatch(file: files.output.path)
            let started = try startWriter(plan, output: output, files: files, sources: sources, control: control)
            defer { started.clickPlayer?.stop() }
            let outcome = try await record(plan, started, sources: sources, files: files, output: output, directory: directory,
                                           control: control, signals: signals)
            try report(outcome, plan: plan, sources: sources, started: started, files: files)
        } catch let end as RecordExit {
            if let message = end.message { note("swift-record: " + message) }
            throw end.status
        }
    }

    /// `--list-monitors`, `--list-cameras`, `--list-audio-devices`: listed, then the run
    /// ends (before any output name is reserved or announced).
    private func listIfAsked() throws {
        if screen.listMonitors { try MonitorListing.list(display: screen.display) }
        if cameraOptions.listCameras { try CameraOptions.list() }
        SwiftRecordPulse.register(in: AudioSourceRegistry.shared)
        SwiftRecordBroadcast.register(in: AudioSourceRegistry.shared)
        if sound.listAudioDevices { try sound.listDevices(registry: AudioSourceRegistry.shared) }
    }

    /// The default output name before it is made unique (`OutputFile.reserveUnique` adds
    /// -2, -3, … when it is taken).
    static func defaultOutputStem() -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss"
        return "swift-record-\(f.string(from: Date())).mp4"
    }
}

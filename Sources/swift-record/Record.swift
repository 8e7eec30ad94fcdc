import ArgumentParser
import Foundation
import SwiftRecord
#if canImport(Glibc)
import Glibc
#endif

struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record a capture source (the screen by default, the synthetic scene without a display).",
        discussion: """
        Stops at --duration or --frames, or on Ctrl-C, SIGTERM or SIGHUP; in every case the file
        is finished properly and the exit status is 0. The container follows the output's
        extension: .mp4, .mov, .mkv or .webm.

        EXAMPLES
          swift-record --fps 30 --bitrate 2M
          swift-record --source synthetic --size 1920x1080 --frames 600 -o scene.mp4
          swift-record --source synthetic --realtime --duration 10 --stats-json stats.json -o live.mp4
        """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file; the extension picks the container (default: swift-record-DATE-TIME.mp4).", valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp("Capture source: x11 or synthetic (default: x11 when DISPLAY is set, else synthetic).", valueName: "name"))
    var source: String?

    @Option(help: ArgumentHelp("Picture size WxH for sources that can make any size (synthetic; default 1280x720).", valueName: "WxH"),
            transform: parsed(ValueParsing.size))
    var size: VideoSize?

    @Option(help: ArgumentHelp("Frames per second of the recording: 30, 60, 30000/1001.", valueName: "rate"),
            transform: parsed(ValueParsing.frameRate))
    var fps: Rational = Rational(30)!

    @OptionGroup var encoder: EncoderOptions

    @Option(help: ArgumentHelp("Stop after this long: seconds (90, 2.5) or 1m30s.", valueName: "time"),
            transform: parsed(ValueParsing.duration))
    var duration: MediaTime?

    @Option(help: ArgumentHelp("Stop after this many frames.", valueName: "n"))
    var frames: Int?

    @Flag(help: "Pace the synthetic scene by the wall clock, as a live source (otherwise it renders as fast as the encoder takes frames).")
    var realtime = false

    @Option(help: ArgumentHelp("Crash-safe writing: flush a fragment to the file this often (default 1 s). A killed recording keeps all but the fragment in progress; a finished one is an ordinary file.", valueName: "time"),
            transform: parsed(ValueParsing.duration))
    var fragmentInterval: MediaTime = Record.defaultFragmentInterval

    /// One second: a killed recording then loses at most about 1.6 s (the fragment in
    /// progress plus the encoder's look-ahead of ~0.5 s). Two-second fragments would lose
    /// up to 2.6 s.
    static let defaultFragmentInterval = MediaTime(seconds: 1)

    @Flag(help: "Write one index at the end instead of fragments (a killed recording is then lost).")
    var noFragments = false

    @Flag(name: .shortAndLong, help: "No progress line.")
    var quiet = false

    @Option(help: ArgumentHelp("Write the final figures (frames, drops, sizes, times) as JSON to this file.", valueName: "file"))
    var statsJSON: String?

    func validate() throws {
        if let frames, frames < 1 {
            throw ValidationError("--frames \(frames) is not valid; expected a whole number of at least 1")
        }
        if let output, FileType(pathExtension: URL(fileURLWithPath: output).pathExtension) == nil {
            throw ValidationError("--output '\(output)' has no known container extension; expected .mp4, .mov, .mkv or .webm")
        }
        if let size, size.width % 2 != 0 || size.height % 2 != 0 {
            throw ValidationError("--size \(size) has an odd side; expected an even width and height (4:2:0 video needs them)")
        }
    }

    func run() async throws {
        let sourceName: String
        if let source {
            sourceName = source
        } else if let display = ProcessInfo.processInfo.environment["DISPLAY"], !display.isEmpty {
            sourceName = "x11"
            note("swift-record: recording display \(display) (use --source synthetic for the test scene)")
        } else {
            sourceName = SyntheticSource.name
            note("swift-record: no DISPLAY set; recording the synthetic scene (use --source to choose)")
        }
        let registry = CaptureSourceRegistry.shared
        if sourceName == "x11" && !registry.names.contains("x11") {
            note("swift-record: X11 screen capture is not available in this build yet; use --source synthetic")
            throw ExitCode(2)
        }
        let options = CaptureSourceOptions(size: size, frameRate: fps, realtime: realtime)
        let capture: any CaptureSource
        do {
            capture = try registry.makeSource(named: sourceName, options: options)
        } catch let e as SwiftRecordError {
            note("swift-record: --source: \(e.message)")
            throw ExitCode(2)
        }
        let outputPath = output ?? Record.defaultOutputName()
        let url = URL(fileURLWithPath: outputPath)
        let outputDir = url.deletingLastPathComponent().path
        guard access(outputDir, W_OK) == 0 else {
            note("swift-record: cannot write \(outputPath): the directory \(outputDir) does not exist or is not writable")
            throw ExitCode(1)
        }
        let native = capture.nativeSize
        let settings = encoder.settings(width: native.width, height: native.height, frameRate: fps)
        let writer: AssetWriter
        let adaptor: PixelBufferAdaptor
        do {
            writer = try AssetWriter(outputURL: url)
            writer.metadata = AssetMetadata(title: "swift-record \(capture.identifier) recording", creationDate: Date())
            writer.shouldOptimizeForNetworkUse = true
            if !noFragments {
                writer.movieFragmentInterval = fragmentInterval
                writer.initialMovieFragmentInterval = min(fragmentInterval, MediaTime(seconds: 1))
            }
            let input = AssetWriterInput(outputSettings: settings)
            input.expectsMediaDataInRealTime = capture.isLive
            adaptor = PixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes:
                PixelBufferAttributes(width: native.width, height: native.height, pixelFormat: capture.pixelFormat))
            try writer.add(input)
            try writer.startWriting()
            try writer.startSession(atSourceTime: .zero)
        } catch {
            note("swift-record: \(error.userMessage)")
            throw ExitCode(1)
        }

        let session = CaptureSession(source: capture, writer: writer, adaptor: adaptor, frameRate: fps,
                                     limit: CaptureLimit(frames: frames, duration: duration))
        let signals = SignalWatcher { name in
            note("\nswift-record: \(name): finishing the file")
            session.stop()
        }
        let progress = ProgressLine(enabled: !quiet && isatty(STDERR_FILENO) == 1) {
            let s = session.statistics
            let bytes = fileSize(outputPath)
            let rate = s.mediaSeconds > 0 ? Double(bytes) * 8 / s.mediaSeconds : 0
            return String(format: "%@  frames %d  fps %.1f  dropped %d  %@  %@",
                          formatClock(s.elapsedSeconds), s.framesWritten,
                          s.elapsedSeconds > 0 ? Double(s.framesWritten) / s.elapsedSeconds : 0,
                          s.framesDropped, formatBytes(bytes), formatBitRate(rate))
        }

        var failure: Error?
        do {
            _ = try await session.run()
        } catch {
            failure = error
        }
        progress.stop()
        signals.cancel()
        do {
            try await writer.finishWriting()
        } catch {
            if failure == nil { failure = error }
        }
        let stats = session.statistics
        let bytes = fileSize(outputPath)
        if let statsJSON {
            writeStats(to: statsJSON, stats: stats, bytes: bytes, output: outputPath, source: capture.identifier, settings: settings)
        }
        if let failure {
            let text = (failure as? SwiftRecordError)?.userMessage ?? "\(failure)"
            note("swift-record: recording stopped: \(text)")
            if writer.status == .completed || FileManager.default.fileExists(atPath: outputPath) {
                note("swift-record: kept what was recorded: \(outputPath) (\(stats.framesWritten) frames)")
            }
            throw ExitCode(1)
        }
        if !quiet {
            note(String(format: "swift-record: wrote %@: %d frames, %.3f s, %@ (%d dropped)",
                        outputPath, stats.framesWritten, stats.mediaSeconds, formatBytes(bytes), stats.framesDropped))
        }
    }

    static func defaultOutputName() -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss"
        return "swift-record-\(f.string(from: Date())).mp4"
    }

    func writeStats(to path: String, stats: CaptureStatistics, bytes: Int64, output: String, source: String, settings: VideoSettings) {
        let object: [String: Any] = [
            "output": output, "source": source, "codec": settings.codec.rawValue,
            "width": settings.width, "height": settings.height, "fps": fps.description,
            "framesWritten": stats.framesWritten, "framesDropped": stats.framesDropped, "ticksMissed": stats.ticksMissed,
            "elapsedSeconds": stats.elapsedSeconds, "mediaSeconds": stats.mediaSeconds, "outputBytes": bytes,
            "pixelBufferAllocations": stats.pixelBufferAllocations,
            "averageBitRate": stats.mediaSeconds > 0 ? Double(bytes) * 8 / stats.mediaSeconds : 0,
        ]
        if let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]) {
            if !FileManager.default.createFile(atPath: path, contents: data) {
                note("swift-record: could not write --stats-json \(path)")
            }
        }
    }
}

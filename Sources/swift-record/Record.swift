import ArgumentParser
import Foundation
import SwiftRecord
import SwiftRecordX11
import SwiftRecordPulse
import SwiftRecordWayland
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

    @Option(help: ArgumentHelp("Capture source: x11, wayland, synthetic (default: wayland in a Wayland session, x11 when DISPLAY is set, else synthetic), camera[:NAME] (a PipeWire camera, or a V4L2 device: camera:/dev/video0), or yuv:FILE (raw video with --size and --pix-fmt, or .y4m; - for standard input).", valueName: "name"),
            completion: .list(["x11", "wayland", "synthetic", "camera", "camera:", "yuv:"]))
    var source: String?

    @Option(name: .customLong("pix-fmt"), help: ArgumentHelp("Pixel format of --source yuv:FILE raw video (default yuv420p; see convert --help).", valueName: "name"),
            transform: parsed(RawPixelFormat.parse))
    var pixFmt: RawPixelFormat?

    /// `--source` without the file of `yuv:FILE`.
    var sourceName: String? {
        source.map { s in
            [RawVideoFileSource.name, CameraSource.name].first { s.hasPrefix($0 + ":") } ?? s
        }
    }
    /// The camera of `--source camera:NAME`.
    var sourceCamera: String? {
        guard let source, source.hasPrefix(CameraSource.name + ":") else { return nil }
        let name = String(source.dropFirst(CameraSource.name.count + 1))
        return name.isEmpty ? nil : name
    }
    /// The file of `--source yuv:FILE`.
    var sourceFile: String? {
        guard let source, source.hasPrefix(RawVideoFileSource.name + ":") else { return nil }
        let path = String(source.dropFirst(RawVideoFileSource.name.count + 1))
        return path.isEmpty ? nil : path
    }

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
            transform: { text in
                let parts = text.split(separator: ":")
                guard parts.count == 2, let frame = Int64(parts[0]), let ms = Int(parts[1]), frame >= 0, ms >= 0 else {
                    throw ValidationError("--simulate-source-stall '\(text)' is not valid; expected frame:milliseconds, e.g. 20:500")
                }
                return (frame, ms)
            })
    var simulateSourceStall: (frame: Int64, milliseconds: Int)?

    func validate() throws {
        if let frames = length.frames, frames < 1 {
            throw outOfRange("--frames", frames, expected: "a whole number of at least 1", otherwise: "is not valid")
        }
        let plan = try OutputPlan(outputs.output, hlsFragmentedMP4: outputs.hlsFmp4, hlsListSize: outputs.hlsListSize, overwrite: replace.overwrite) { "" }
        // Codecs the container cannot carry: refused here, before any source starts (exit 2).
        let fileType = FileType(pathExtension: URL(fileURLWithPath: plan.file).pathExtension) ?? .mp4
        do {
            _ = try encoder.resolvedCodec(for: fileType)
            _ = try sound.resolvedCodec(for: fileType)
        } catch let error as SwiftRecordError {
            note("swift-record: \(error.message)")
            throw ExitStatus.refused
        }
        if pixFmt != nil && sourceName != RawVideoFileSource.name {
            throw ValidationError("--pix-fmt applies to --source yuv:FILE")
        }
        if let size, sourceName != RawVideoFileSource.name, size.width % 2 != 0 || size.height % 2 != 0 {
            throw ValidationError("--size \(size) has an odd side; expected an even width and height (4:2:0 video needs them)")
        }
        if let scale, scale.width % 2 != 0 || scale.height % 2 != 0 {
            throw ValidationError("--scale \(scale) has an odd side; expected an even width and height (4:2:0 video needs them)")
        }
        if let source = sourceName, source != X11Source.name, let name = screen.givenOptionName,
           !(source == WaylandSource.name && ScreenOptions.sharedWithWayland.contains(name)) {
            throw ValidationError("\(name) applies to the screen (--source x11\(ScreenOptions.sharedWithWayland.contains(name) ? " or wayland" : "")), not to --source \(source)")
        }
        if let source = sourceName, source != WaylandSource.name, let name = wayland.givenOptionName {
            throw ValidationError("\(name) applies to a Wayland screen (--source wayland), not to --source \(source)")
        }
        try wayland.validate(monitor: screen.monitor)
        try cameraOptions.validate(sourceName: sourceName)
        if sourceName == RawVideoFileSource.name && sourceFile == nil {
            throw ValidationError("--source yuv needs a file: --source yuv:FILE (raw video with --size and --pix-fmt, or a .y4m file; - for standard input)")
        }
    }

    func run() async throws {
        logging.bootstrap()
        try sound.checkTitles()
        if screen.listMonitors { try MonitorListing.list(display: screen.display) }
        if cameraOptions.listCameras { try CameraOptions.list() }
        let audioRegistry = AudioSourceRegistry.shared
        SwiftRecordPulse.register(in: audioRegistry)
        // Listing ends the run before any output name is reserved or announced.
        if sound.listAudioDevices { try sound.listDevices(registry: audioRegistry) }
        // Signals are taken before any file is created: a stop during start-up undoes it.
        let control = RecordingControl()
        let signals = SignalWatcher(stop: control.stop, togglePause: {
            guard let paused = control.togglePause() else { return }
            note(paused ? "\nswift-record: paused (SIGUSR1 or p + Enter resumes)" : "\nswift-record: resumed")
        }, saveReplay: control.saveReplay)
        /// Throws (exit 1) if a stop came during start-up, after `undo` removed what start-up created.
        func checkStartUp(_ undo: () -> Void = {}) throws {
            guard let name = control.stopRequested else { return }
            undo()
            note("swift-record: \(name) before the recording started; nothing was recorded")
            throw ExitStatus.failed
        }
        let plan = try OutputPlan(outputs.output, hlsFragmentedMP4: outputs.hlsFmp4, hlsListSize: outputs.hlsListSize, overwrite: replace.overwrite, defaultFile: Record.defaultOutputStem)
        let outputPath: String
        if plan.fileWasGiven {
            outputPath = plan.file
        } else {
            // Unique: created exclusively, so two runs in one second never share a name.
            do {
                outputPath = try OutputFile.reserveUnique(stem: String(plan.file.dropLast(4)), extension: ".mp4")
            } catch {
                note("swift-record: \(error.userMessage)")
                throw ExitStatus.failed
            }
            if !quiet { note("swift-record: recording to \(outputPath)" + (plan.live.isEmpty ? "" : " while streaming")) }
        }
        // A default name no writer took (start-up failed or was stopped) is removed.
        defer { if !plan.fileWasGiven { OutputFile.releaseReservation(outputPath) } }
        let files: WrittenFiles
        do {
            files = try WrittenFiles(output: outputPath, statsJSON: outputs.statsJSON, timingLog: outputs.timingLog, restoreToken: wayland.restoreToken,
                                     hlsPlaylists: plan.live.filter { $0.kind == .hls }.map(\.url.path),
                                     hlsFragmentedMP4: outputs.hlsFmp4, overwrite: replace.overwrite)
        } catch {
            note("swift-record: \(error.userMessage)")
            throw ExitStatus.beforeWriting(error)
        }
        let registry = CaptureSourceRegistry.shared
        X11Source.register(in: registry)
        WaylandSource.register(in: registry)
        CameraSource.register(in: registry)
        let sourceName: String
        if let source = self.sourceName {
            sourceName = source
        } else {
            let choice = WaylandOptions.defaultSource(environment: ProcessInfo.processInfo.environment, screenOption: screen.givenOptionName,
                                                      waylandOptionGiven: wayland.givenOptionName != nil)
            sourceName = choice.name
            if let announcement = choice.note, choice.name == SyntheticSource.name || !quiet { note(announcement) }
        }
        // Wayland: portal or Mutter (announced when chosen here), and the restore token.
        var screenCast = wayland.screencast ?? .mutter, previousToken: String?
        if sourceName == WaylandSource.name {
            let chosen = wayland.chosenScreenCast(monitor: screen.monitor) { ScreenCastPortal.isAvailable() }
            screenCast = chosen.0
            if let announcement = chosen.note, !quiet { note(announcement) }
            if screenCast == .portal, let path = wayland.restoreToken {
                do {
                    previousToken = try RestoreTokenFile.read(path)
                } catch {
                    note("swift-record: \(error.message)")
                    throw ExitStatus.beforeWriting(error)
                }
            }
        }
        let flashClock = SyntheticFlashClock()
        let fileType = FileType(pathExtension: URL(fileURLWithPath: outputPath).pathExtension) ?? .mp4
        let codec = try encoder.resolvedCodec(for: fileType)
        if encoder.codec == nil, codec != .h264, !quiet { note("swift-record: a .\(fileType) file carries \(codec) (the default there; --codec chooses another)") }
        let encoderSettings = encoder.settings(codec: codec, width: 2, height: 2, frameRate: fps)
        // A stop while the screen is asked for (the desktop's chooser open) gives up at once.
        let startStop = WakeUp()
        var waylandConfiguration = wayland.configuration(screenCast: screenCast, restoreToken: previousToken, screen: screen,
                                                         encoder: encoderSettings, scaling: scale != nil)
        waylandConfiguration.startStop = startStop
        var cameraConfiguration = cameraOptions.configuration(name: sourceCamera)
        cameraConfiguration.startStop = startStop
        let options = CaptureSourceOptions(size: size, frameRate: fps, realtime: realtime,
                                           configurations: [screen.configuration(encoder: encoderSettings, scaling: scale != nil),
                                                                            SyntheticSource.Configuration(flashClock: flashClock),
                                                                            waylandConfiguration, cameraConfiguration]
                                               + (sourceFile.map { [RawVideoFileSource.Configuration(path: $0, size: size, pixelFormat: pixFmt, frameRate: fps, maximumFrames: length.frames)] } ?? []))
        let capture: any CaptureSource
        let made: any CaptureSource
        var cameraTrack: (any CaptureSource)?
        do {
            control.whileStarting { startStop.interrupt() }
            defer { control.whileStarting(nil) }
            made = try registry.makeSource(named: sourceName, options: options)
            if let overlay = cameraOptions.overlay, sourceName != CameraSource.name {
                // The camera over the screen: found and started before anything is written,
                // its pictures converted straight to the overlay's size (scaled once).
                var overlayCamera = cameraConfiguration
                overlayCamera.deliveredSize = overlay.size
                let camera = try CameraSource.open(configuration: overlayCamera)
                capture = OverlaySource(base: try screen.stepped(made), overlay: camera, corner: overlay.corner,
                                        overlaySize: overlay.size, margin: overlay.margin)
            } else {
                capture = try screen.stepped(made)
            }
            if cameraOptions.isSecondTrack(sourceName: sourceName) {
                // The camera on a track of its own: found and started before anything is written.
                cameraTrack = try CameraSource.open(configuration: cameraConfiguration)
            }
        } catch let e as SwiftRecordError {
            note("swift-record: \([X11Source.name, WaylandSource.name, CameraSource.name].contains(sourceName) || e.operation == "camera" ? e.message : "--source: " + e.message)")
            // The user closing the portal's chooser: not done (1), not an interrupted conversion.
            throw e.kind == .cancelled ? ExitStatus.failed : ExitStatus.beforeWriting(e)
        }
        if let cast = made as? WaylandSource, let file = files.restoreToken {
            if let token = cast.restoreToken {
                do {
                    try RestoreTokenFile.write(token, to: file, previous: previousToken)
                } catch {
                    note("swift-record: --restore-token: \(error.message)")
                    throw ExitStatus.failed
                }
            } else if !quiet {
                note("swift-record: the desktop portal gave no restore token; the chooser will show again next time")
            }
        }
        if !quiet, let description = capture.captureDescription {
            note("swift-record: recording \(description)")
        }
        if !quiet, let description = cameraTrack?.captureDescription {
            note("swift-record: and on a second video track \(description)")
        }
        for notice in (cameraTrack?.notices ?? []) + capture.notices + ([X11Source.name, WaylandSource.name].contains(sourceName) ? screen.captureNotices(scaling: scale != nil) : []) {
            note("swift-record: \(notice)")
        }
        let audioSources: [OpenedAudio]
        do {
            audioSources = try sound.makeSources(registry: audioRegistry, videoIsLive: capture.isLive, fps: fps, realtime: realtime,
                                                 flashClock: flashClock, quiet: quiet)
        } catch {
            note("swift-record: --audio: \((error as? SwiftRecordError)?.message ?? "\(error)")")
            throw ExitStatus.beforeWriting(error)
        }
        try checkStartUp()
        let directory = OutputDirectoryWatch(file: files.output.path)
        let url = URL(fileURLWithPath: outputPath)
        let native = capture.nativeSize
        // The encoder's size: --scale, or the source's made even (the adaptor scales to it).
        let output = scale ?? VideoSize(width: native.width + native.width % 2, height: native.height + native.height % 2)
        var settings = encoder.settings(codec: codec, width: output.width, height: output.height, frameRate: fps)
        let frameRateMode = rate.mode(adjusting: &settings, frameRate: fps)
        let writer: AssetWriter
        do {
            writer = try AssetWriter(outputURL: url)
        } catch {
            note("swift-record: \(error.userMessage)")
            throw ExitStatus.failed
        }
        let adaptor: PixelBufferAdaptor
        var cameraAdaptor: PixelBufferAdaptor?
        do {
            writer.overwritesExistingFile = replace.overwrite
            writer.metadata = AssetMetadata(title: "swift-record \(capture.identifier) recording", creationDate: Date())
            writer.shouldOptimizeForNetworkUse = true
            if !outputs.noFragments {
                writer.movieFragmentInterval = outputs.fragmentInterval
                writer.initialMovieFragmentInterval = min(outputs.fragmentInterval, MediaTime(seconds: 1))
            }
            let input = AssetWriterInput(outputSettings: settings)
            input.expectsMediaDataInRealTime = capture.isLive
            input.simulatedEncodeDelay = simulateEncodeDelay.map { .milliseconds($0) } // FAULT-INJECTION
            adaptor = PixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes:
                PixelBufferAttributes(width: native.width, height: native.height, pixelFormat: capture.pixelFormat))
            try writer.add(input)
            if let camera = cameraTrack {
                var cameraSettings = encoder.settings(codec: codec, width: camera.nativeSize.width, height: camera.nativeSize.height, frameRate: fps)
                cameraSettings.rateControl = .averageBitRate(cameraOptions.cameraBitrate ?? 1_000_000)
                let cameraInput = AssetWriterInput(outputSettings: cameraSettings)
                cameraInput.expectsMediaDataInRealTime = true
                cameraInput.metadata = AssetMetadata(title: "Camera")
                cameraAdaptor = PixelBufferAdaptor(assetWriterInput: cameraInput, sourcePixelBufferAttributes:
                    PixelBufferAttributes(width: camera.nativeSize.width, height: camera.nativeSize.height, pixelFormat: camera.pixelFormat))
                try writer.add(cameraInput)
            }
            for live in plan.live { try writer.add(live) }
            if let buffer = try replay.makeBuffer() { try writer.add(buffer) }
            if sound.audioMix, !audioSources.isEmpty {
                try writer.add(try sound.makeInput(for: writer.fileType, title: AudioOptions.mixTitle, mixVolumes: audioSources.map(\.volume)))
            } else {
                for opened in audioSources {
                    try writer.add(try sound.makeInput(for: writer.fileType, title: opened.title))
                }
            }
            // A stop while the live outputs connect cancels the connects at once.
            let live = plan.live
            control.whileStarting { for output in live { output.cancel() } }
            try writer.startWriting()
            try writer.startSession(atSourceTime: .zero)
            control.whileStarting(nil)
        } catch {
            control.whileStarting(nil)
            try checkStartUp { writer.cancelWriting() }
            note("swift-record: \(error.userMessage)")
            throw ExitStatus.failed
        }
        try checkStartUp { writer.cancelWriting() }

        var log: TimingLog?
        if let timingLog = files.timingLog {
            do {
                log = try TimingLog(file: timingLog)
            } catch {
                writer.cancelWriting()
                note("swift-record: --timing-log: \(error.message)")
                throw ExitStatus.failed
            }
        }
        let clickPlayer: PulseClickPlayer?
        do { clickPlayer = try sound.startClickPlayer(flashClock: flashClock, fps: fps) } catch {
            writer.cancelWriting()
            log?.discard()
            note("swift-record: --simulate-click-player: \((error as? SwiftRecordError)?.message ?? "\(error)")")
            throw ExitStatus.failed
        }
        defer { clickPlayer?.stop() }
        let audioInputs = writer.inputs.filter { $0.mediaType == .audio }
        let audio = sound.audioMix
            ? audioInputs.first.map { mix in audioSources.enumerated().map { AudioCapture(source: $1.source, input: mix, mixSource: $0) } } ?? []
            : zip(audioSources, audioInputs).map { AudioCapture(source: $0.source, input: $1) }
        let session = CaptureSession(source: capture, writer: writer, adaptor: adaptor, frameRate: fps,
                                     limit: CaptureLimit(frames: length.frames, duration: length.duration), timingLog: log, audioCaptures: audio,
                                     videoCaptures: zip([cameraTrack].compactMap { $0 }, [cameraAdaptor].compactMap { $0 }).map(VideoTrackCapture.init),
                                     frameRateMode: frameRateMode)
        session.simulatedSourceStall = simulateSourceStall.map { ($0.frame, .milliseconds($0.milliseconds)) } // FAULT-INJECTION
        let live = capture.isLive
        let replays = ReplaySaves(writer.replayBuffers.first, besideOutput: outputPath)
        var saveReplay: (@Sendable () -> Void)?
        if let replays {
            // Paused: what the encoder still held of the time before the pause goes in too.
            saveReplay = { replays.save(after: { _ = session.waitUntilPauseIsWritten(timeout: .seconds(5)) }) }
        }
        let attached = control.attach(RecordingControl.Actions(
            stop: { session.stop() },
            togglePause: { live ? session.togglePause() : nil },
            saveReplay: saveReplay))
        if !attached {
            try checkStartUp {
                writer.cancelWriting()
                log?.discard()
            }
        }
        let commands = TerminalCommands.startIfInteractive { command in
            switch command {
            case .stop:
                session.stop()
                note("swift-record: stopping: finishing the file")
            case .togglePause:
                guard live else {
                    note("swift-record: pausing applies to live sources only")
                    return
                }
                note(session.togglePause() ? "swift-record: paused (p + Enter resumes)" : "swift-record: resumed")
            case .saveReplay:
                control.saveReplay()
            }
        }
        if commands && !quiet {
            note("swift-record: p + Enter pauses and resumes, q + Enter stops")
        }
        let progress = ProgressLine(enabled: !quiet && isatty(STDERR_FILENO) == 1) {
            let s = session.statistics
            let bytes = fileSize(files.output.writingPath)
            let rate = s.mediaSeconds > 0 ? Double(bytes) * 8 / s.mediaSeconds : 0
            let sound = s.audio.map { a in
                String(format: "  audio %.1f s (sync %+.1f ms)", a.seconds, a.sync.lastOffsetSeconds * 1000)
            } ?? ""
            return String(format: "%@  frames %d  fps %.1f  dropped %d  repeated %d  %@  %@%@%@",
                          formatClock(s.mediaSeconds), s.framesWritten,
                          s.elapsedSeconds > 0 ? Double(s.framesWritten) / s.elapsedSeconds : 0,
                          s.framesDropped, s.framesRepeated, formatBytes(bytes), formatBitRate(rate), sound,
                          s.isPaused ? "  [paused]" : "") + LiveOutputReport.progress(plan.live)
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
        let replayCounts = replays?.waitUntilDone()
        let stats = session.statistics
        // Unfinished and replacing a file: what was written is in the partial file beside it.
        let partial = writer.outputFile.flatMap { $0.replacesExistingFile ? $0.writingPath : nil }
        let written = writer.status == .completed ? outputPath : partial ?? outputPath
        // Where the file is now: its directory may have been moved (the file with it) or removed.
        let whereabouts = directory.whereabouts()
        let kept = directory.currentPath(of: written)
        let directoryNote: String? = switch whereabouts {
        case .inPlace: nil
        case .removed: "the output directory \(directory.path) was removed while recording; the recording \(written) went with it and is lost"
        case .moved: "the output directory \(directory.path) was moved while recording; the recording is not at \(outputPath) but at \(kept)"
            + (outputs.noFragments ? "" : " (its fragments as written; `swift-record repair` makes it an ordinary file)")
        }
        let bytes = fileSize(kept)
        let keptExists = whereabouts != .removed && FileIdentity(path: kept) != nil
        // What a reader of the file finds, counted in the file, not what was handed to the writer.
        let framesInFile = keptExists && (failure != nil || files.statsJSON != nil) ? MediaFileReader.videoFrameCount(path: kept) ?? 0 : 0
        var logFailure: SwiftRecordError?
        do { try log?.finish() } catch { logFailure = error }
        if let statsFile = files.statsJSON {
            do {
                try statsFile.write(statsData(stats: stats, framesInFile: framesInFile, bytes: bytes, output: kept,
                                              source: capture.identifier, settings: settings, live: plan.live, replays: replayCounts,
                                              audioSources: audioSources, overlay: (capture as? OverlaySource)?.overlayStatistics))
            } catch {
                if logFailure == nil { logFailure = error }
            }
        }
        let liveCompleted = LiveOutputReport.reportEnd(plan.live, quiet: quiet)
        if let directoryNote {
            if let failure { note("swift-record: recording stopped: \((failure as? SwiftRecordError)?.userMessage ?? "\(failure)")") }
            note("swift-record: \(directoryNote)")
            throw ExitStatus.failed
        }
        if let failure {
            let text = (failure as? SwiftRecordError)?.userMessage ?? "\(failure)"
            // A stop before the first picture: said as a stop during start-up is.
            let stoppedEarly = (failure as? SwiftRecordError).flatMap { $0.kind == .cancelled ? $0.message : nil }
            note("swift-record: " + (stoppedEarly ?? "recording stopped: \(text)"))
            if keptExists && framesInFile > 0 {
                note("swift-record: kept what was recorded: \(kept) (\(framesInFile) frame\(framesInFile == 1 ? "" : "s") readable)")
            } else if keptExists {
                note("swift-record: nothing playable was kept: \(kept) holds no readable video"
                     + (outputs.noFragments ? " (with --no-fragments the index is written only at the end)" : ""))
            }
            throw ExitStatus.failed
        }
        if let logFailure {
            note("swift-record: the recording is complete, but \(logFailure.userMessage)")
            throw ExitStatus.failed
        }
        for (i, track) in stats.audioTracks.enumerated() {
            guard let ended = track.endedEarly else { continue }
            let name = sound.audioMix ? "audio source \(i + 1) (\(audioSources[i].title)) of the mix"
                : stats.audioTracks.count > 1 ? "audio track \(i + 1) (\(audioSources[i].title))" : "audio"
            note(String(format: "swift-record: the %@ ended early (%@) after %.1f s; %.1f s of silence fill it to the video's end",
                        name, ended, track.seconds, track.silenceFilledSeconds))
        }
        if !quiet { note(summary(stats, output: outputPath, bytes: bytes)) }
        if let failed = replayCounts?.failed, failed > 0 {
            note("swift-record: the recording is complete, but \(failed) replay clip\(failed == 1 ? " was" : "s were") not saved (said above)")
            throw ExitStatus.failed
        }
        if !liveCompleted { throw ExitStatus.failed }
    }

    /// The default output name before it is made unique (`OutputFile.reserveUnique` adds
    /// -2, -3, … when it is taken).
    static func defaultOutputStem() -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss"
        return "swift-record-\(f.string(from: Date())).mp4"
    }
}

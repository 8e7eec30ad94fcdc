import ArgumentParser
import Foundation
import SwiftRecord
import SwiftRecordPulse

extension AudioCodec: ExpressibleByArgument {
    public init?(argument: String) { self.init(rawValue: argument.lowercased()) }
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

/// A sound source the command line opened, with its track's title and its volume in a mix.
struct OpenedAudio {
    let source: any AudioCaptureSource
    let title: String
    var volume = 1.0
}

/// `record`'s audio options.
struct AudioOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Sound to record: default (the default output's monitor when a PulseAudio server is reachable and the source is live, else none), none, pulse[:DEVICE], app:NAME (one program's sound: its name or PID, followed when it restarts its stream), synthetic, wav:FILE (a .wav file or raw s16le PCM, with offline pictures), broadcast:app or broadcast:mic (a broadcast sender's app or microphone sound, with --source broadcast:NAME; titled App and Microphone). Repeat it for several sources, one track each in the order given (--audio default --audio pulse:MIC); ,title=NAME names the track (UTF-8; default: Desktop for a monitor, Microphone for another PulseAudio source; a .mov track name keeps its first 127 bytes); ,volume=V sets the source's level in --audio-mix (a factor 0 to 4, or decibels up to +12: volume=0.5, volume=-6dB); a comma inside a value is written \\, (title=Left\\, Right). Live outputs carry the first track (or the mix).", valueName: "source"),
            completion: .custom { _, _, _ in AudioOptions.completions() },
            transform: parsed(ValueParsing.audioChoice))
    var audio: [AudioChoice] = []

    @Flag(help: "Mix every --audio source into one track, titled Mix, each at its ,volume= (default 1); each source is still synchronised with the pictures on its own. The sum is not limited: keep the volumes' total at most 1 to leave no chance of clipping.")
    var audioMix = false

    @Option(help: ArgumentHelp("Audio codec: aac (default; .mp4, .mov, .mkv) or opus (default for .webm).", valueName: "codec"))
    var audioCodec: AudioCodec?

    @Option(help: ArgumentHelp("Audio bit rate: 128k, 96000.", valueName: "rate"), transform: parsed(ValueParsing.bitRate))
    var audioBitrate: Int = 128_000

    @Flag(help: "List the audio devices (PulseAudio sources and monitors) and exit.")
    var listAudioDevices = false

    // FAULT-INJECTION: a sound card whose clock runs off, for the drift tests.
    @Option(help: ArgumentHelp("Test only: the synthetic audio source's clock runs this far off (0.001 = 0.1 % fast).", valueName: "ratio", visibility: .hidden))
    var simulateAudioClockSkew: Double = 0

    // FAULT-INJECTION: clicks played into a PulseAudio sink on the synthetic scene's flashes,
    // for the sync tests through a real server (record the sink's monitor).
    @Option(help: ArgumentHelp("Test only: play a click into this PulseAudio sink at every flash of the live synthetic scene.", valueName: "sink", visibility: .hidden))
    var simulateClickPlayer: String?

    /// The click player `--simulate-click-player` asks for, started (nil without it).
    func startClickPlayer(flashClock: SyntheticFlashClock, fps: Rational) throws -> PulseClickPlayer? {
        guard let sink = simulateClickPlayer else { return nil }
        return try PulseClickPlayer(sink: sink, flashClock: flashClock, frameRate: fps)
    }

    /// Why a title= is refused (exit 2, before anything starts), if one is not UTF-8: a
    /// title is written into the file as UTF-8 text, and its other bytes would come out as
    /// the private-use characters the command line carries them in.
    func titleProblem() -> String? {
        for choice in audio {
            guard let title = choice.title, PathBytes.hasEscapes(title) else { continue }
            let shown = title.unicodeScalars.map { c in
                PathBytes.hasEscapes(String(c)) ? PathBytes.bytes(String(c)).map { String(format: "\\x%02x", $0) }.joined() : String(c)
            }.joined()
            return "--audio: title=\(shown) is not valid UTF-8; a track's title is written as UTF-8 text: give it in UTF-8"
        }
        return nil
    }

    /// Prints the devices of every source that has them; throws to end the command.
    func listDevices(registry: AudioSourceRegistry) throws -> Never {
        var any = false
        for name in registry.names {
            guard let lister = registry.entry(named: name)?.listDevices else { continue }
            do {
                for d in try lister() {
                    any = true
                    say("\(name):\(d.name)\t\(d.description)\(d.isMonitor ? " (monitor)" : "")\(d.isDefault ? " [default]" : "")")
                }
            } catch {
                note("swift-record: \(name): \((error as? SwiftRecordError)?.message ?? "\(error)")")
                throw ExitStatus.failed
            }
        }
        if !any { note("swift-record: no audio devices found") }
        throw ExitStatus.success
    }

    /// The sources of the plan's `sounds` (checked there), opened in order, each announced
    /// unless `quiet`.
    func makeSources(_ sounds: [RecordingPlan.Sound], registry: AudioSourceRegistry, videoIsLive: Bool, fps: Rational, realtime: Bool,
                     flashClock: SyntheticFlashClock, quiet: Bool) throws -> [OpenedAudio] {
        var opened: [OpenedAudio] = []
        for sound in sounds {
            guard let source = try makeSource(sound.choice, registry: registry, videoIsLive: videoIsLive, fps: fps, realtime: realtime,
                                              flashClock: flashClock, quiet: quiet) else { continue }
            opened.append(OpenedAudio(source: source, title: sound.choice.title ?? AudioOptions.defaultTitle(sound.choice, source), volume: sound.volume))
        }
        return opened
    }

    /// The linear volume `,volume=` gives (1 without it): a factor from 0 to 4, or decibels
    /// (`-6dB`, up to +12 dB). Only with `--audio-mix`, which is where a volume applies.
    static let loudestDecibels = 12.0

    static func volume(of choice: AudioChoice, mixing: Bool) throws(SwiftRecordError) -> Double {
        guard let text = choice.volume else { return 1 }
        let form = "expected a factor from 0 to 4 or decibels up to +12, e.g. volume=0.5 or volume=-6dB"
        guard mixing else {
            throw SwiftRecordError(.invalidArgument, operation: "--audio",
                                   message: "volume=\(text) needs --audio-mix: a volume sets a source's level in the mix (a track of its own keeps the level recorded)")
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let decibels = trimmed.lowercased().hasSuffix("db")
        let number = decibels ? String(trimmed.dropLast(2)).trimmingCharacters(in: .whitespaces) : trimmed
        guard let value = Double(number), value.isFinite else {
            throw SwiftRecordError(.invalidArgument, operation: "--audio", message: "volume=\(text) is not a volume; \(form)")
        }
        // The bounds as written: a factor up to 4, decibels up to +12 (3.98), nothing
        // taken in and then clamped.
        guard decibels ? value <= AudioOptions.loudestDecibels : (value >= 0 && value <= AssetWriterInput.maximumMixVolume) else {
            throw SwiftRecordError(.invalidArgument, operation: "--audio", message: "volume=\(text) is out of range; \(form)")
        }
        return decibels ? pow(10, value / 20) : value
    }

    /// The track title a source gets without `,title=`: what a viewer would call it.
    static func defaultTitle(_ choice: AudioChoice, _ source: any AudioCaptureSource) -> String {
        switch choice.kind {
        case .automatic: return "Desktop"
        case .source(let name, let device) where name == PulseAudioSource.name:
            guard let device else { return "Desktop" }
            return device.hasSuffix(".monitor") ? "Desktop" : "Microphone"
        case .source("app", let program?): return (source as? PulseAudioSource)?.programName ?? program
        case .source(let name, _) where name == SyntheticAudioSource.name: return "Tone"
        case .source(let name, _) where name == WAVFileSource.name: return "Sound"
        case .source("broadcast", let kind): return kind == "mic" || kind == "microphone" ? "Microphone" : "App"
        case .source(let name, _): return name
        case .none: return "Sound"
        }
    }

    /// The source one `--audio` names (nil for none), announced unless `quiet`.
    private func makeSource(_ choice: AudioChoice, registry: AudioSourceRegistry, videoIsLive: Bool, fps: Rational, realtime: Bool,
                            flashClock: SyntheticFlashClock, quiet: Bool) throws -> (any AudioCaptureSource)? {
        var name: String, device: String?
        switch choice.kind {
        case .none: return nil
        case .source(let n, let d): (name, device) = (n, d)
        case .automatic:
            guard videoIsLive, registry.entry(named: PulseAudioSource.name) != nil, PulseAudioSource.isServerReachable() else {
                if !quiet && videoIsLive { note("swift-record: no audio (no PulseAudio server reachable; --audio synthetic or pulse:DEVICE to choose)") }
                return nil
            }
            (name, device) = (PulseAudioSource.name, nil)
        }
        var options = AudioSourceOptions(device: device, frameRate: fps, realtime: realtime || videoIsLive,
                                         clockSkew: choice.clockSkew ?? simulateAudioClockSkew, flashClock: flashClock)
        if name == WAVFileSource.name {
            // `wav:PATH`: the part after the colon is the file (the plan refused `wav` without one).
            (options.device, options.path) = (nil, device)
        }
        let source = try registry.makeSource(named: name, options: options)
        if source.isLive != videoIsLive {
            throw SwiftRecordError(.invalidArgument, operation: "--audio",
                                   message: "--audio \(name) is \(source.isLive ? "live" : "offline") but the pictures are \(videoIsLive ? "live" : "offline"); "
                                       + AudioOptions.liveMismatchAdvice(audioIsLive: source.isLive, realtime: realtime))
        }
        if !quiet { note("swift-record: audio: \(source.captureDescription ?? name)") }
        return source
    }

    /// What to change when the sound and the pictures are not both live or both offline.
    static func liveMismatchAdvice(audioIsLive: Bool, realtime: Bool) -> String {
        if audioIsLive {
            return "use --realtime (the synthetic scene paced by the clock), a screen or a camera, or an offline audio source (wav:FILE, synthetic)"
        }
        return realtime
            ? "drop --realtime: a file is read as fast as the offline pictures are encoded"
            : "a file goes with offline pictures (--source synthetic without --realtime, or --source yuv:FILE); with the screen or a camera record a live source (default, pulse[:DEVICE], app:NAME)"
    }

    /// --audio-codec, else the container's own (`FileType.defaultAudioCodec`); refused
    /// (before anything starts) when the container cannot carry it.
    func resolvedCodec(for fileType: FileType) throws(SwiftRecordError) -> AudioCodec {
        let codec = audioCodec ?? fileType.defaultAudioCodec
        guard fileType.supports(codec) else {
            throw fileType.refusal(of: codec, operation: "--audio-codec")
        }
        return codec
    }

    /// Tab completion of `--audio`: the kinds, and the devices and programs a PulseAudio
    /// server lists now (none when no server answers).
    static func completions() -> [String] {
        let registry = AudioSourceRegistry.shared
        SwiftRecordPulse.register(in: registry)
        var words = ["default", "none", "synthetic", "pulse", "wav:"]
        for name in registry.names {
            guard let lister = registry.entry(named: name)?.listDevices, let devices = try? lister() else { continue }
            words += devices.map { "\(name):\($0.name)" }
        }
        return words
    }

    /// The title of the `--audio-mix` track.
    static let mixTitle = "Mix"

    /// The writer's audio input for `fileType`, its track titled `title`; with
    /// `mixVolumes`, one that mixes that many sources.
    func makeInput(for fileType: FileType, title: String, mixVolumes: [Double]? = nil) throws(SwiftRecordError) -> AssetWriterInput {
        let codec = try resolvedCodec(for: fileType)
        let settings = AudioSettings(codec: codec, bitRate: audioBitrate)
        let input = try mixVolumes.map { volumes throws(SwiftRecordError) in
            try AssetWriterInput(mediaType: .audio, outputSettings: settings, mixVolumes: volumes)
        } ?? AssetWriterInput(mediaType: .audio, outputSettings: settings)
        input.expectsMediaDataInRealTime = true
        input.metadata = AssetMetadata(title: title)
        return input
    }
}

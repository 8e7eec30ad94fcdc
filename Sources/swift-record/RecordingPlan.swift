import ArgumentParser
import Foundation
import SwiftRecord
import SwiftRecordCamera
import SwiftRecordWayland
import SwiftRecordBroadcast
import SwiftRecordX11

/// What one `record` run is to do, made from its options and the environment's variables
/// alone: no file, device or server is opened to make it (`Record+SetUp` opens them). Every
/// rule about the arguments is checked here, so a run that gets a plan asks for nothing
/// contradictory; what only the machine can answer (a file that exists, a source that does
/// not open, a live source beside offline sound) is found when setting up.
///
/// A problem is a usage error (exit 64: `Record.validate` reports it, as argument-parser
/// does its own) or a refusal of what was asked (exit 2: `Record.run` reports it, before
/// any listing or file).
struct RecordingPlan {
    /// The picture source `--source` names (or the default one).
    enum Source: Equatable {
        case x11, wayland, synthetic
        /// A camera: its PipeWire name or V4L2 device path, nil for the first one.
        case camera(String?)
        /// Raw video or YUV4MPEG2 from a file, or `-` for standard input.
        case rawVideo(path: String)
        /// Another process's pictures: `broadcast:NAME`, a sender on the endpoint NAME.
        case broadcast(String)
        /// Any PipeWire picture producer: `pipewire:NODE`, its node name, description, serial or id.
        case pipeWire(node: String)

        /// The names `--source` takes, as they are listed.
        static let names = [BroadcastSource.name, CameraSource.name, PipeWireNodeSource.name, SyntheticSource.name, WaylandSource.name, X11Source.name, RawVideoFileSource.name]

        /// `--source TEXT`: a name, `camera:NAME`, `yuv:FILE`, `broadcast:NAME` or `pipewire:NODE`.
        init(parsing text: String) throws(Problem) {
            let (name, argument) = text.firstIndex(of: ":").map { (String(text[..<$0]), String(text[text.index(after: $0)...])) } ?? (text, nil)
            switch (name, argument) {
            case (X11Source.name, nil): self = .x11
            case (WaylandSource.name, nil): self = .wayland
            case (SyntheticSource.name, nil): self = .synthetic
            case (CameraSource.name, let camera): self = .camera(camera.flatMap { $0.isEmpty ? nil : $0 })
            case (RawVideoFileSource.name, let path?) where !path.isEmpty: self = .rawVideo(path: path)
            case (BroadcastSource.name, let endpoint?) where !endpoint.isEmpty: self = .broadcast(endpoint)
            case (PipeWireNodeSource.name, let node?) where !node.isEmpty: self = .pipeWire(node: node)
            case (PipeWireNodeSource.name, _):
                throw .usage("--source pipewire needs a node: --source pipewire:NODE (a PipeWire picture producer's node name, description, serial or id; pw-cli ls Node lists them)")
            case (BroadcastSource.name, _):
                throw .usage("--source broadcast needs a name: --source broadcast:NAME (the name the sender connects to)")
            case (RawVideoFileSource.name, _):
                throw .usage("--source yuv needs a file: --source yuv:FILE (raw video with --size and --pix-fmt, or a .y4m file; - for standard input)")
            default:
                throw .usage("--source: unknown source '\(text)'; expected one of: \(Source.names.joined(separator: ", "))")
            }
        }

        /// The name it goes by in messages (`--source NAME`).
        var name: String {
            switch self {
            case .x11: X11Source.name
            case .wayland: WaylandSource.name
            case .synthetic: SyntheticSource.name
            case .camera: CameraSource.name
            case .rawVideo: RawVideoFileSource.name
            case .broadcast: BroadcastSource.name
            case .pipeWire: PipeWireNodeSource.name
            }
        }

        /// A screen, which the screen options (`ScreenOptions`) apply to.
        var isScreen: Bool { self == .x11 || self == .wayland }
        var isCamera: Bool { if case .camera = self { true } else { false } }
        /// The camera `--source camera:NAME` names (nil for any other source, or the first camera).
        var cameraName: String? { if case .camera(let name) = self { name } else { nil } }
    }

    /// Why there is no plan.
    enum Problem: Error, Equatable {
        /// Arguments that do not go together, or a malformed value: exit 64.
        case usage(String)
        /// A request refused before anything is opened (a codec the container cannot carry,
        /// a title that is not UTF-8, a sound volume out of range): exit 2.
        case refused(String)

        var message: String {
            switch self { case .usage(let m), .refused(let m): m }
        }

        var status: ExitCode {
            switch self { case .usage: ExitStatus.usage; case .refused: ExitStatus.refused }
        }
    }

    /// Where a `--camera` goes besides the main source.
    enum CameraPlacement: Equatable {
        case none
        /// On a video track of its own ("Camera").
        case secondTrack(name: String)
        /// Over the screen, in `corner`, scaled to `size`, `margin` pixels from the edges.
        case overlay(name: String, corner: PictureOverlay.Corner, size: VideoSize, margin: Int)
    }

    /// One `--audio`, checked, with its volume in the mix (1 without `--audio-mix`).
    struct Sound: Equatable {
        let choice: AudioChoice
        let volume: Double
    }

    let source: Source
    /// What to say about a source chosen without `--source` (nil when it was given).
    let sourceNote: String?
    /// The session's frame rate, `--fps`: the one place it enters the run.
    let frameRate: Rational
    let outputs: OutputPlan
    /// The container of the file, from its extension (the default name's: MP4).
    let fileType: FileType
    let codec: VideoCodec
    /// Said (unless quiet) when the container's default codec is not H.264.
    let codecNote: String?
    let audioCodec: AudioCodec
    /// The `--audio` sources in order (`AudioChoice.automatic` when none is given); none
    /// for `--audio none`.
    let sounds: [Sound]
    let camera: CameraPlacement
    let limit: CaptureLimit
    /// The encoder's options, for the settings made once the source's size is known.
    private let encoder: EncoderOptions
    private let rateMode: FrameRateOptions

    /// The plan for `record`'s options; `environment` decides the default source
    /// (DISPLAY, WAYLAND_DISPLAY, XDG_SESSION_TYPE).
    init(_ r: Record, environment: [String: String]) throws(Problem) {
        if let frames = r.length.frames, frames < 1 {
            throw .usage(outOfRange("--frames", frames, expected: "a whole number of at least 1", otherwise: "is not valid").message)
        }
        do {
            outputs = try OutputPlan(r.outputs.output, hlsFragmentedMP4: r.outputs.hlsFmp4, hlsListSize: r.outputs.hlsListSize,
                                     overwrite: r.replace.overwrite, defaultFile: Record.defaultOutputStem)
        } catch {
            throw .usage((error as? ValidationError)?.message ?? "\(error)")
        }
        // Codecs the container cannot carry: refused before any source starts.
        fileType = FileType(pathExtension: URL(fileURLWithPath: outputs.file).pathExtension) ?? .mp4
        do {
            codec = try r.encoder.resolvedCodec(for: fileType)
            audioCodec = try r.sound.resolvedCodec(for: fileType)
        } catch let error as SwiftRecordError {
            throw .refused(error.message)
        } catch {
            throw .usage((error as? ValidationError)?.message ?? "\(error)")
        }
        codecNote = r.encoder.codec == nil && codec != .h264 ? "a .\(fileType) file carries \(codec) (the default there; --codec chooses another)" : nil
        let given = try r.source.map { (text) throws(Problem) in try Source(parsing: text) }
        try RecordingPlan.checkPictureOptions(r, source: given)
        if let given {
            (source, sourceNote) = (given, nil)
        } else {
            let choice = WaylandOptions.defaultSource(environment: environment, screenOption: r.screen.givenOptionName,
                                                      waylandOptionGiven: r.wayland.givenOptionName != nil)
            (source, sourceNote) = (try Source(parsing: choice.name), choice.note)
        }
        camera = RecordingPlan.cameraPlacement(r.cameraOptions, source: source)
        sounds = try RecordingPlan.sounds(r.sound)
        frameRate = r.fps
        limit = CaptureLimit(frames: r.length.frames, duration: r.length.duration)
        (encoder, rateMode) = (r.encoder, r.rate)
    }

    /// The rules of the picture options: which source each applies to, and even sides.
    private static func checkPictureOptions(_ r: Record, source: Source?) throws(Problem) {
        let isRaw = if case .rawVideo = source { true } else { false }
        if r.pixFmt != nil && !isRaw {
            throw .usage("--pix-fmt applies to --source yuv:FILE")
        }
        if let size = r.size, !isRaw, size.width % 2 != 0 || size.height % 2 != 0 {
            throw .usage("--size \(size) has an odd side; expected an even width and height (4:2:0 video needs them)")
        }
        if let scale = r.scale, scale.width % 2 != 0 || scale.height % 2 != 0 {
            throw .usage("--scale \(scale) has an odd side; expected an even width and height (4:2:0 video needs them)")
        }
        if let source, source != .x11, let name = r.screen.givenOptionName,
           !(source == .wayland && ScreenOptions.sharedWithWayland.contains(name)) {
            throw .usage("\(name) applies to the screen (--source x11\(ScreenOptions.sharedWithWayland.contains(name) ? " or wayland" : "")), not to --source \(source.name)")
        }
        if let source, source != .wayland, let name = r.wayland.givenOptionName {
            throw .usage("\(name) applies to a Wayland screen (--source wayland), not to --source \(source.name)")
        }
        do {
            try r.wayland.validate(monitor: r.screen.monitor)
            try r.cameraOptions.validate(recordsCamera: source?.isCamera ?? false)
        } catch {
            throw .usage((error as? ValidationError)?.message ?? "\(error)")
        }
    }

    private static func cameraPlacement(_ options: CameraOptions, source: Source) -> CameraPlacement {
        guard let name = options.camera, !source.isCamera else { return .none }
        guard let overlay = options.overlay else { return .secondTrack(name: name) }
        return .overlay(name: name, corner: overlay.corner, size: overlay.size, margin: overlay.margin)
    }

    /// The `--audio` choices checked together: titles in UTF-8, `none` alone, every volume
    /// in range (and only with `--audio-mix`), a file for `wav`.
    private static func sounds(_ options: AudioOptions) throws(Problem) -> [Sound] {
        if let message = options.titleProblem() { throw .refused(message) }
        let choices = options.audio.isEmpty ? [AudioChoice.automatic] : options.audio
        if choices.count > 1, choices.contains(where: { $0.kind == .none }) {
            throw .refused("--audio: --audio none cannot stand beside other --audio sources; give either none or the sources")
        }
        var sounds: [Sound] = []
        for choice in choices {
            let volume: Double
            do { volume = try AudioOptions.volume(of: choice, mixing: options.audioMix) } catch { throw .refused("--audio: " + error.message) }
            if case .source(WAVFileSource.name, nil) = choice.kind {
                throw .refused("--audio: wav needs a file: --audio wav:PATH (a .wav file, or raw s16le PCM at 48000 Hz stereo), with offline pictures (--source synthetic without --realtime, or --source yuv:FILE)")
            }
            if choice.kind != .none { sounds.append(Sound(choice: choice, volume: volume)) }
        }
        return sounds
    }

    /// The encoder's settings for pictures of `size`, and the session's frame-rate mode.
    func videoSettings(size: VideoSize) -> (VideoSettings, FrameRateMode) {
        var settings = encoder.settings(codec: codec, width: size.width, height: size.height, frameRate: frameRate)
        let mode = rateMode.mode(adjusting: &settings, frameRate: frameRate)
        return (settings, mode)
    }

    /// The second video track's settings: the screen's codec, key-frame interval and
    /// preset at the camera's size and `bitRate`.
    func cameraSettings(size: VideoSize, bitRate: Int) -> VideoSettings {
        var settings = encoder.settings(codec: codec, width: size.width, height: size.height, frameRate: frameRate)
        settings.rateControl = .averageBitRate(bitRate)
        return settings
    }
}

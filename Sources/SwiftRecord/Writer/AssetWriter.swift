import Foundation

/// Writes media to a file (live outputs, `LiveOutput`, send the same packets to network
/// URLs and HLS at the same time): inputs are added, the writer
/// is started, a session is started at a source time, samples are appended, and
/// `finishWriting()` flushes the encoders and writes the index.
///
/// Lifecycle, as on Apple platforms: `canAdd(_:)` / `add(_:)` → `startWriting()` →
/// `startSession(atSourceTime:)` → append → `markAsFinished()` →
/// `endSession(atSourceTime:)` (optional) → `finishWriting()` or `cancelWriting()`.
///
/// The writer holds the lifecycle only. Samples go from the inputs to a writing
/// pipeline (one thread that owns every encoder and the output), so a capture thread
/// never waits for the encoder. A failure moves `status` to `.failed`, keeps the reason
/// in `error`, and finalises the file as far as it can so what was written stays playable.
///
/// The counterpart of `AVAssetWriter` on Apple platforms.
public final class AssetWriter: Sendable {
    /// Where the file is written (`outputURL`).
    public let outputURL: URL
    /// The container written (`outputFileType`).
    public let fileType: FileType

    struct State {
        var status = Status.unknown
        var error: SwiftRecordError?
        var inputs: [AssetWriterInput] = []
        var sessionStart: MediaTime?
        var optimize = false
        var metadata = AssetMetadata()
        var fragmentInterval: MediaTime?
        var initialFragmentInterval: MediaTime?
        var finishing = false
        var pipeline: WritingPipeline?
        var overwrite = false
        var file: OutputFile?
        var attachments: [AssetAttachment] = []
        // In-memory segments (AssetWriter+Segments.swift).
        weak var delegate: (any AssetWriterDelegate)?
        var profile: FileTypeProfile?
        var segmentInterval = MediaTime.positiveInfinity
        var initialSegmentStart = MediaTime.invalid
        var segmentCuts: SegmentCuts?
    }
    let state = Locked(State())
    /// Made with `init(contentType:)`: segments go to the delegate, no file is written.
    let isSegmented: Bool
    /// The live outputs and replay buffers added (`AssetWriter+LiveOutputs.swift`).
    let live = Locked(Destinations())

    /// A writer for `outputURL` in `fileType` (`init(outputURL:fileType:)`). Nothing is
    /// opened until `startWriting()`.
    public init(outputURL: URL, fileType: FileType) {
        self.outputURL = outputURL
        self.fileType = fileType
        isSegmented = false
    }

    /// A writer that writes no file but hands fragmented MPEG-4 segments to its
    /// ``delegate`` (`AVAssetWriter(contentType: UTType(.mpeg4Movie))`): `.mp4` (or `.mov`).
    /// Set ``outputFileTypeProfile`` and the ``delegate`` before ``startWriting()``; see
    /// ``AssetWriterDelegate``. ``outputURL`` is a placeholder, `memory:segments`.
    public init(contentType: FileType) {
        outputURL = AssetWriter.segmentsURL
        fileType = contentType
        isSegmented = true
    }

    deinit {
        // Dropped while writing: finish in the background, so what was written is kept
        // and the pipeline's thread ends.
        if let pipeline = state.withLock({ $0.status == .writing && !$0.finishing ? $0.pipeline : nil }) {
            let outputs = live.withLock { $0.outputs }
            pipeline.finish { _ in AssetWriter.finishLiveOutputs(outputs) }
        }
    }

    /// A writer whose type comes from the file's extension (.mp4, .mov, .mkv, .webm).
    public convenience init(outputURL: URL) throws(SwiftRecordError) {
        guard let type = FileType(pathExtension: outputURL.pathExtension) else {
            throw SwiftRecordError(.unsupported, operation: "AssetWriter",
                                   message: "cannot tell the container from '\(outputURL.lastPathComponent)'; expected an extension of .mp4, .mov, .mkv or .webm")
        }
        self.init(outputURL: outputURL, fileType: type)
    }

    /// Where the writer is in its lifecycle (`status`).
    public var status: Status { state[\.status] }
    /// Why the writer failed, when `status == .failed` (`error`).
    public var error: SwiftRecordError? { state[\.error] }
    /// The inputs added, in the order of their tracks in the file (`inputs`).
    public var inputs: [AssetWriterInput] { state[\.inputs] }

    /// Put the index (moov) before the media data, so playback over a network can start
    /// before the whole file arrived (`shouldOptimizeForNetworkUse`). MP4 and MOV.
    public var shouldOptimizeForNetworkUse: Bool {
        get { state[\.optimize] }
        set { state[\.optimize] = newValue }
    }

    /// Replace a file already at `outputURL`. Off by default: as on Apple platforms,
    /// writing then fails (`.fileAlreadyExists`) if a file exists there. When on, the new
    /// file is written beside the old one and takes its place only once complete, so a
    /// failed or cancelled writer leaves the old file as it was (a failed writer's
    /// partial file is then at `partialFileURL`). Only a regular file is ever replaced;
    /// a symbolic link is followed to the file it names. Set before `startWriting()`.
    public var overwritesExistingFile: Bool {
        get { state[\.overwrite] }
        set { state[\.overwrite] = newValue }
    }

    /// The file being written, as checked at `startWriting()`.
    package var outputFile: OutputFile? { state[\.file] }

    /// Where a failed writer left what it wrote when that is not at `outputURL`: it was
    /// replacing an existing file (which stays untouched), or another program took the
    /// file's name meanwhile (what this writer wrote was then kept under a new name); nil otherwise.
    public var partialFileURL: URL? {
        state.withLock { s in
            guard s.status == .failed, let file = s.file else { return nil }
            if let rescued = file.rescuedPath { return URL(fileURLWithPath: rescued) }
            guard file.replacesExistingFile, FileIdentity(path: file.writingPath) != nil else { return nil }
            return URL(fileURLWithPath: file.writingPath)
        }
    }

    /// Title, creation date and other tags; set before `startWriting()` (`metadata`).
    public var metadata: AssetMetadata {
        get { state[\.metadata] }
        set { state[\.metadata] = newValue }
    }

    /// Write crash-safe: while recording, MP4 and MOV are written as a series of fragments
    /// this long (MKV closes a cluster at the same points), each flushed to the file, so
    /// if the process or the machine dies, everything up to the last completed fragment
    /// plays. On a normal finish the file is rewritten as an ordinary MP4/MOV (index at the
    /// front when `shouldOptimizeForNetworkUse`), so nobody sees the difference. Nil (the
    /// default) writes one index at the end. Set before `startWriting()` (`movieFragmentInterval`).
    public var movieFragmentInterval: MediaTime? {
        get { state[\.fragmentInterval] }
        set { state[\.fragmentInterval] = newValue }
    }

    /// Length of the first fragment, shorter so that a recording that dies early still
    /// has something (`initialMovieFragmentInterval`). Nil: the same as `movieFragmentInterval`.
    public var initialMovieFragmentInterval: MediaTime? {
        get { state[\.initialFragmentInterval] }
        set { state[\.initialFragmentInterval] = newValue }
    }

    /// Whether `input` can be added now (`canAdd(_:)`): the writer has not started, the
    /// input is not added elsewhere, and the container can carry its codec.
    public func canAdd(_ input: AssetWriterInput) -> Bool {
        (try? state.withLock { s throws(SwiftRecordError) in try validateAdd(input, s) }) != nil
    }

    private func validateAdd(_ input: AssetWriterInput, _ s: State) throws(SwiftRecordError) {
        guard s.status == .unknown else {
            throw SwiftRecordError(.invalidState, operation: "add", message: "inputs can only be added before startWriting(); the writer is \(s.status)")
        }
        guard input.writer == nil, !s.inputs.contains(where: { $0 === input }) else {
            throw SwiftRecordError(.invalidState, operation: "add", message: "the input is already added to a writer")
        }
        let (codec, supported): (String, (FileType) -> Bool) = switch input.settings {
        case .video(let v): (v.codec.description, { $0.supports(v.codec) })
        case .audio(let a): (a.codec.description, { $0.supports(a.codec) })
        case .passThrough(let f): ("\(f.codecName) (passed through)", { f.canBeCarried(in: $0) })
        }
        guard supported(fileType) else {
            throw SwiftRecordError(.unsupported, operation: "add",
                                   message: "a .\(fileType) file cannot carry \(codec); use "
                                   + FileType.allCases.filter(supported).map { ".\($0)" }.joined(separator: " or "))
        }
    }

    /// Adds an input (`add(_:)`). Throws where `canAdd(_:)` is false, saying why.
    public func add(_ input: AssetWriterInput) throws(SwiftRecordError) {
        try state.withLock { s throws(SwiftRecordError) in
            try validateAdd(input, s)
            try input.attach(to: self)
            s.inputs.append(input)
        }
    }

    /// Opens the encoders and the output and writes the header (`startWriting()`).
    /// Throws (and moves to `.failed`) when a codec cannot be opened or the output
    /// cannot be written, before any sample is taken: a file already at `outputURL`
    /// (unless `overwritesExistingFile`), a path that is not a regular file (a device, a
    /// directory, a FIFO), a missing directory. A file that was there before is never
    /// removed or changed when writing fails.
    public func startWriting() throws(SwiftRecordError) {
        let (inputs, configuration) = try state.withLock { s throws(SwiftRecordError) in
            guard s.status == .unknown else {
                throw SwiftRecordError(.invalidState, operation: "startWriting", message: "the writer is already \(s.status)")
            }
            guard !s.inputs.isEmpty else {
                throw SwiftRecordError(.invalidState, operation: "startWriting", message: "no inputs; add an AssetWriterInput first")
            }
            for input in s.inputs { try input.validateSetUp(for: fileType) }
            try checkAttachments(s.attachments)
            var plan: Muxer.FragmentPlan?
            if let interval = s.fragmentInterval {
                let us = interval.convertScale(1_000_000).value
                let first = (s.initialFragmentInterval ?? interval).convertScale(1_000_000).value
                guard interval.isNumeric, us > 0, first > 0 else {
                    throw SwiftRecordError(.invalidArgument, operation: "startWriting", message: "movieFragmentInterval must be a positive time")
                }
                plan = Muxer.FragmentPlan(initial: first, interval: us)
            }
            let segments = try segmentConfiguration(&s)
            if segments != nil { plan = nil }
            var file: OutputFile?
            if outputURL.isFileURL && !isSegmented {
                do throws(SwiftRecordError) {
                    file = try OutputFile(outputURL.path, what: "startWriting", overwrite: s.overwrite,
                                          howToReplace: "set overwritesExistingFile")
                } catch {
                    s.status = .failed
                    s.error = error
                    throw error
                }
            }
            s.file = file
            var configuration = PipelineConfiguration(
                url: outputURL, file: file, fileType: fileType, tracks: s.inputs.map(\.trackConfiguration),
                metadata: s.metadata.dictionary, optimizeForNetworkUse: s.optimize, fragments: plan)
            configuration.sinks = live.withLock { $0.sinks }
            configuration.segments = segments
            configuration.attachments = s.attachments
            s.status = .writing
            return (s.inputs, configuration)
        }
        do {
            let (pipeline, tracks) = try WritingPipeline.open(configuration) { [weak self] event in
                self?.handle(event)
            }
            state.withLock { s in s.pipeline = pipeline }
            try startDestinations(tracks: tracks, pipeline: pipeline, offline: !inputs.contains { $0.expectsMediaDataInRealTime })
            for (index, (input, track)) in zip(inputs, tracks).enumerated() {
                input.open(pipeline: pipeline, track: index, timing: track)
            }
        } catch {
            fail(error)
            throw error
        }
    }

    /// Starts the timeline at `startTime` (`startSession(atSourceTime:)`): a sample at this
    /// time is at 0 in the file; samples before it are dropped.
    public func startSession(atSourceTime startTime: MediaTime) throws(SwiftRecordError) {
        let inputs = try state.withLock { s throws(SwiftRecordError) in
            guard s.status == .writing else {
                throw SwiftRecordError(.invalidState, operation: "startSession", message: "call startWriting() first; the writer is \(s.status)")
            }
            guard s.sessionStart == nil else {
                throw SwiftRecordError(.invalidState, operation: "startSession", message: "the session has already started")
            }
            guard startTime.isNumeric else {
                throw SwiftRecordError(.invalidArgument, operation: "startSession", message: "the start time is \(startTime.isValid ? "infinite" : "invalid"); expected a numeric MediaTime")
            }
            s.sessionStart = startTime
            return s.inputs
        }
        for input in inputs { input.startSession(at: startTime) }
    }

    /// Ends the timeline at `endTime` (`endSession(atSourceTime:)`): samples at or after it
    /// are not written, and the last sample lasts until it. Call it before appending
    /// past the end or before `finishWriting()`; samples already written stay.
    public func endSession(atSourceTime endTime: MediaTime) throws(SwiftRecordError) {
        let (inputs, pipeline) = try state.withLock { s throws(SwiftRecordError) in
            guard s.status == .writing, let start = s.sessionStart, let pipeline = s.pipeline else {
                throw SwiftRecordError(.invalidState, operation: "endSession", message: "no session is running")
            }
            guard endTime.isNumeric, endTime > start else {
                throw SwiftRecordError(.invalidArgument, operation: "endSession", message: "end time \(endTime) must be after the session start \(start)")
            }
            return (s.inputs, pipeline)
        }
        pipeline.endSession(ticks: inputs.map { $0.endSession(at: endTime) })
    }
}

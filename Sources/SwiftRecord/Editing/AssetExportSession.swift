import Foundation

/// Exports a part of a media file, or a composition of parts of several, to a new file:
/// trimming and joining (`AVAssetExportSession` on Apple platforms).
///
/// ```swift
/// let session = try AssetExportSession(asset: URL(fileURLWithPath: "recording.mp4"),
///                                      presetName: AssetExportSession.presetPassthrough)
/// session.timeRange = TimeRange(start: MediaTime(seconds: 2), end: MediaTime(seconds: 10))
/// try await session.export(to: URL(fileURLWithPath: "clip.mp4"), as: .mp4)
/// ```
///
/// With `presetPassthrough` every packet is copied as it is, nothing decoded (seconds for a
/// long recording), except, with ``cutsExactly`` (the default), the pictures from
/// `timeRange.start` to the next key frame, which are re-encoded to match the copied ones
/// (`SmartCutHead`; H.264 only). Without it the pictures start at the key frame at or before
/// the start (``keyFrameStart`` says where). They end with the last picture shown before the
/// end; the sound is cut with them. Joined pieces (a ``MutableComposition``) must have the
/// same settings, else the export fails naming the setting that differs.
///
/// The quality and size presets (``presetHighestQuality``, ``preset1280x720``, …) decode
/// and encode again with the writer's encoders (H.264 or HEVC, AAC): pictures fitted into
/// the preset's size keeping their aspect, never scaled up; every part brought to the first
/// part's settings, so recordings of different sizes, rates or codecs join.
///
/// The output follows the file rules of every writer here: an existing file is replaced
/// only with `overwritesExistingFile` (once the new one is complete), and a failed or
/// cancelled export leaves nothing under the output's name.
public final class AssetExportSession: Sendable {
    /// Where an export is (`AVAssetExportSession.Status`).
    public enum Status: Int, Sendable {
        case unknown, waiting, exporting, completed, failed, cancelled
    }

    /// Every packet copied as it is (`AVAssetExportPresetPassthrough`).
    public static let presetPassthrough = "AVAssetExportPresetPassthrough"

    public let presetName: String
    /// What a copy exports (passthrough, or the file a re-encode reads whole).
    private let pieces: [ClipPiece]
    /// What a re-encode of a composition exports; nil: `pieces`' file, whole.
    private let tracks: [CompositionTrackContent]?
    /// The re-encoding preset; nil for passthrough.
    private let preset: ExportPreset?

    struct Values {
        var outputURL: URL?
        var outputFileType: FileType?
        var timeRange = TimeRange(start: .zero, duration: .positiveInfinity)
        var metadata: AssetMetadata?
        var overwritesExistingFile = false
        var howToReplace = "set overwritesExistingFile"
        var progressHandler: (@Sendable (Float) -> Void)?
        var startedWriting = false
        var cutsExactly = true
        var fallsBackToKeyFrame = false
        var status = Status.unknown
        var error: SwiftRecordError?
        var progress: Float = 0
        var cancelled = false
        var report: ClipCopyReport?
    }
    let state = Locked(Values())

    /// Exports `asset` (a media file) with `presetName`. Throws when the file does not open
    /// or the preset is not one of ``allExportPresets``.
    public convenience init(asset: URL, presetName: String) throws(SwiftRecordError) {
        guard FileIdentity(path: asset.path) != nil else {
            throw SwiftRecordError(.invalidArgument, operation: "AssetExportSession", message: "\(asset.path) does not exist")
        }
        try self.init(pieces: [ClipPiece(path: asset.path)], presetName: presetName)
    }

    /// Exports `composition`'s parts, one after another, with `presetName`.
    public convenience init(composition: MutableComposition, presetName: String) throws(SwiftRecordError) {
        if presetName == AssetExportSession.presetPassthrough {
            try self.init(pieces: try composition.pieces(), tracks: nil, presetName: presetName)
        } else {
            try self.init(pieces: [], tracks: try composition.exportTracks(), presetName: presetName)
        }
    }

    init(pieces: [ClipPiece], tracks: [CompositionTrackContent]? = nil, presetName: String) throws(SwiftRecordError) {
        let available = AssetExportSession.allExportPresets
        guard available.contains(presetName) else {
            let known = ExportPreset.named(presetName) != nil
            throw SwiftRecordError(.unsupported, operation: "AssetExportSession",
                                   message: "preset \(presetName) is not available\(known ? " (this FFmpeg has no encoder for it)" : ""); "
                                   + "this build exports with \(available.joined(separator: ", "))")
        }
        self.presetName = presetName
        self.pieces = pieces
        self.tracks = tracks
        preset = ExportPreset.named(presetName)
    }

    /// The first file the export reads.
    var firstFile: String? {
        pieces.first?.path ?? tracks?.lazy.flatMap(\.segments).first { $0.path != nil }?.path
    }

    /// Title and other tags written to the output (`metadata`); nil: a copy carries the
    /// first file's tags, a re-encode writes none.
    public var metadata: AssetMetadata? {
        get { state[\.metadata] }
        set { state.withLock { $0.metadata = newValue } }
    }

    /// The output file, for `exportAsynchronously` (`export(to:as:)` sets it).
    public var outputURL: URL? {
        get { state[\.outputURL] }
        set { state.withLock { $0.outputURL = newValue } }
    }
    /// The output's container; nil: from `outputURL`'s extension.
    public var outputFileType: FileType? {
        get { state[\.outputFileType] }
        set { state.withLock { $0.outputFileType = newValue } }
    }
    /// The part exported, in the asset's (or composition's) times; the whole by default.
    public var timeRange: TimeRange {
        get { state[\.timeRange] }
        set { state.withLock { $0.timeRange = newValue } }
    }
    /// Replace a file at the output's name (once the new one is complete); off by default.
    public var overwritesExistingFile: Bool {
        get { state[\.overwritesExistingFile] }
        set { state.withLock { $0.overwritesExistingFile = newValue } }
    }
    /// How an existing output may be replaced, in the refusal (the command line's `-y`).
    package var howToReplace: String {
        get { state[\.howToReplace] }
        set { state.withLock { $0.howToReplace = newValue } }
    }
    /// Called on the export's thread with each progress step (tests stop an export mid-way with it).
    package var progressHandler: (@Sendable (Float) -> Void)? {
        get { state.withLock { $0.progressHandler } }
        set { state.withLock { $0.progressHandler = newValue } }
    }
    /// Cut exactly at `timeRange.start` (the default): with passthrough, the pictures from
    /// there to the next key frame are re-encoded to match the copied ones (H.264 only;
    /// another stream fails the export with `.unsupported`, saying so). False: the copy
    /// starts at the key frame at or before the start.
    public var cutsExactly: Bool {
        get { state[\.cutsExactly] }
        set { state.withLock { $0.cutsExactly = newValue } }
    }
    /// With `cutsExactly`: a stream that cannot be matched is cut at the key frame before
    /// instead of failing, and ``exactCutRefusal`` says why (the command line's default).
    package var fallsBackToKeyFrame: Bool {
        get { state[\.fallsBackToKeyFrame] }
        set { state.withLock { $0.fallsBackToKeyFrame = newValue } }
    }
    /// Why an exact cut was made at the key frame before (``fallsBackToKeyFrame``), once exported.
    package var exactCutRefusal: String? { state[\.report]?.exactCutRefusal }
    /// The streams of the (first) file the export did not carry, once exported: it carries
    /// the first video and the first sound track; a second sound track, subtitles and
    /// attachments are left out, and named here ("stream 2 (subtitle, subrip)").
    public var leftOutStreams: [String] { state[\.report]?.leftOut ?? [] }
    /// Pictures re-encoded at the start of an exact cut, once exported.
    public var reencodedPictureCount: Int { state[\.report]?.reencodedPictures ?? 0 }
    /// Whether the export got as far as creating its output: a failure before is a refusal
    /// of what was asked (the command line's exit status 2), one after a failure to do it.
    package var startedWriting: Bool { state[\.startedWriting] }
    public var status: Status { state[\.status] }
    /// Why the export failed, once `status` is `.failed` (or `.cancelled`).
    public var error: SwiftRecordError? { state[\.error] }
    /// From 0 to 1 while exporting.
    public var progress: Float { state[\.progress] }
    /// Where the copy started in the source (the key frame at or before `timeRange.start`), once exported.
    public var keyFrameStart: MediaTime? { state[\.report]?.pieces.first?.keyFrame }
    /// The exported file's length, once exported.
    public var exportedDuration: MediaTime? { state[\.report]?.duration }

    /// Stops the export: it fails with `.cancelled` and leaves nothing at the output's name.
    public func cancelExport() {
        state.withLock {
            $0.cancelled = true
            if $0.status == .unknown || $0.status == .waiting { $0.status = .cancelled }
        }
    }

    /// Exports to `url` as a `fileType` file; returns once it is complete. Throws why not.
    public func export(to url: URL, as fileType: FileType) async throws(SwiftRecordError) {
        state.withLock {
            $0.outputURL = url
            $0.outputFileType = fileType
        }
        try await run()
    }

    /// Exports to `outputURL`, then calls `handler` (on another thread); `status` and `error` say how it went.
    public func exportAsynchronously(completionHandler handler: @escaping @Sendable () -> Void) {
        Task {
            try? await run()
            handler()
        }
    }

    private func run() async throws(SwiftRecordError) {
        let (settings, start) = state.withLock { s -> (Values, Bool) in
            let ok = s.status == .unknown
            if ok { s.status = .waiting }
            return (s, ok)
        }
        guard start else {
            if settings.status == .cancelled {
                throw SwiftRecordError(.cancelled, operation: "export", message: "cancelled before it started (cancelExport)")
            }
            throw SwiftRecordError(.invalidState, operation: "export", message: "the session has already exported (\(settings.status)); make a new one")
        }
        do throws(SwiftRecordError) {
            guard let url = settings.outputURL else {
                throw SwiftRecordError(.invalidArgument, operation: "export", message: "no outputURL set")
            }
            guard let type = settings.outputFileType ?? FileType(pathExtension: url.pathExtension) else {
                throw SwiftRecordError(.invalidArgument, operation: "export",
                                       message: "cannot tell the container from '\(url.lastPathComponent)'; expected .mp4, .mov, .mkv or .webm")
            }
            let report: ClipCopyReport
            if let preset {
                var reading = tracks ?? []
                if tracks == nil { reading = try CompositionTrackContent.wholeFile(pieces[0].path) }
                report = try await reencode(with: preset, tracks: reading, to: url, as: type, settings: settings)
            } else {
                var cut = try ClipPiece.cut(pieces, to: settings.timeRange)
                if settings.cutsExactly, !cut.isEmpty { cut[0].exact = true }
                // Every file opened and compared (and closed) before anything is written.
                _ = try ClipCopier(pieces: cut)
                let file = try checkedOutput(url, settings, inputs: cut.map(\.path))
                report = try await copy(cut, into: file, as: type)
            }
            state.withLock {
                $0.report = report
                $0.progress = 1
                $0.status = .completed
            }
        } catch {
            state.withLock {
                $0.error = error
                $0.status = error.kind == .cancelled ? .cancelled : .failed
            }
            throw error
        }
    }

    /// Records each progress step and calls `progressHandler` with it.
    static func progressReporter(_ state: Locked<Values>) -> @Sendable (Double) -> Void {
        { p in
            let handler = state.withLock { s in
                s.progress = Float(p)
                return s.progressHandler
            }
            handler?(Float(p))
        }
    }

    /// The output, checked against the file rules and the inputs (nothing created yet).
    func checkedOutput(_ url: URL, _ settings: Values, inputs: [String]) throws(SwiftRecordError) -> OutputFile {
        let file = try OutputFile(url.path, what: "output", overwrite: settings.overwritesExistingFile,
                                  howToReplace: settings.howToReplace)
        try OutputFile.checkDistinct(outputs: [("output", file)],
                                     inputs: inputs.compactMap { p in FileIdentity(path: p).map { ("input \(p)", $0) } })
        return file
    }

    private func copy(_ pieces: [ClipPiece], into file: OutputFile, as type: FileType) async throws(SwiftRecordError) -> ClipCopyReport {
        state.withLock {
            $0.status = .exporting
            $0.startedWriting = true
        }
        try file.createEmpty()
        let result = Locked<ClipCopyReport?>(nil)
        let ran = await ThreadTask.run(name: "swift-record.export") { [state] in
            let fallback = state[\.fallsBackToKeyFrame]
            let copier = try ClipCopier(pieces: pieces, isCancelled: { state[\.cancelled] },
                                        progress: AssetExportSession.progressReporter(state))
            copier.fallsBackToKeyFrame = fallback
            copier.metadata = state[\.metadata]?.dictionary
            let report = try copier.copy(to: file.ioPath, display: file.writingPath, fileType: type)
            if state[\.cancelled] { throw SwiftRecordError(.cancelled, operation: "export", message: "cancelled") }
            result.withLock { $0 = report }
        }
        do throws(SwiftRecordError) {
            if case .failure(let error) = ran {
                throw error as? SwiftRecordError ?? SwiftRecordError(.io, operation: "export", message: "\(error)")
            }
            try file.commit()
        } catch {
            file.discard()
            throw error
        }
        guard let report = result.withLock({ $0 }) else {
            throw SwiftRecordError(.io, operation: "export", message: "the copy ended without a result")
        }
        return report
    }
}

extension ClipPiece {
    /// The part of `pieces` (laid end to end, each as long as asked or as its file) that
    /// `range` covers.
    static func cut(_ pieces: [ClipPiece], to range: TimeRange) throws(SwiftRecordError) -> [ClipPiece] {
        try checkRange(range)
        var out: [ClipPiece] = []
        var at = MediaTime.zero
        let rangeEnd: MediaTime? = range.duration.isNumeric ? range.end : nil
        for piece in pieces {
            // A piece without an end (a whole file) runs to its end: the last one counted.
            let pieceEnd: MediaTime? = piece.end.map { at + ($0 - piece.start) }
            let from = max(range.start, at)
            let to: MediaTime? = switch (rangeEnd, pieceEnd) {
            case let (r?, p?): min(r, p)
            case let (r?, nil): r
            case let (nil, p?): p
            case (nil, nil): nil
            }
            if to.map({ from < $0 }) ?? true {
                var part = piece
                part.start = piece.start + (from - at)
                part.end = to.map { piece.start + ($0 - at) }
                out.append(part)
            }
            guard let pieceEnd else { break }
            at = pieceEnd
        }
        guard !out.isEmpty else { throw afterTheEnd(range, at) }
        return out
    }

    static func checkRange(_ range: TimeRange) throws(SwiftRecordError) {
        guard range.start.isNumeric, range.start >= .zero, range.duration.isValid, range.duration > .zero else {
            throw SwiftRecordError(.invalidArgument, operation: "export",
                                   message: "timeRange \(range) is empty or starts before 0; expected a start of at least 0 and a positive duration")
        }
    }

    static func afterTheEnd(_ range: TimeRange, _ end: MediaTime) -> SwiftRecordError {
        SwiftRecordError(.invalidArgument, operation: "export",
                         message: String(format: "timeRange starts at %.3f s, after the end of what there is to export (%.3f s)", range.start.seconds, end.seconds))
    }
}

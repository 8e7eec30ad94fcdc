import Foundation

extension AssetExportSession {
    /// Where an export is, as `states(updateInterval:)` hands it out (`AVAssetExportSession.State`).
    public enum State: Sendable, Equatable {
        /// Not started yet.
        case pending
        /// Started, checking its inputs and output before writing.
        case waiting
        /// Writing; `progress` from 0 to 1.
        case exporting(progress: Double)
    }

    /// The export's state now.
    var currentState: State {
        state.withLock { s in
            switch s.status {
            case .unknown: .pending
            case .waiting: .waiting
            default: .exporting(progress: Double(s.progress))
            }
        }
    }

    /// The export's states (`states(updateInterval:)`), looked at every `updateInterval`
    /// seconds: each one that differs from the one before, from `.pending` to the last
    /// `.exporting` progress; the sequence ends once the export has ended (completed,
    /// failed or cancelled: `status` and `error` say which).
    public func states(updateInterval: TimeInterval) -> AsyncStream<State> {
        let interval = UInt64(max(0.001, updateInterval) * 1e9)
        return AsyncStream { continuation in
            let task = Task { [self] in
                var last: State?
                while !Task.isCancelled {
                    let (now, ended) = (currentState, [.completed, .failed, .cancelled].contains(status))
                    if now != last {
                        continuation.yield(now)
                        last = now
                    }
                    if ended { break }
                    try? await Task.sleep(nanoseconds: interval)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Re-encodes `tracks`' part in `timeRange` with `preset`.
    func reencode(with preset: ExportPreset, tracks: [CompositionTrackContent], to url: URL, as type: FileType,
                  settings: Values) async throws(SwiftRecordError) -> ClipCopyReport {
        try ClipPiece.checkRange(settings.timeRange)
        let whole = tracks.map(\.duration).max() ?? .zero
        let cut = tracks.map { $0.cut(to: settings.timeRange) }.filter { $0.duration > .zero }
        guard !cut.isEmpty else { throw ClipPiece.afterTheEnd(settings.timeRange, whole) }
        guard preset.codec == .h264 || preset.codec == .hevc, type.supports(preset.codec), type.supports(AudioCodec.aac) else {
            throw SwiftRecordError(.unsupported, operation: "export",
                                   message: "a .\(type) file cannot carry \(preset.name)'s \(preset.codec) and AAC; expected .mp4, .mov or .mkv")
        }
        let inputs = cut.flatMap(\.segments).compactMap(\.path)
        _ = try checkedOutput(url, settings, inputs: inputs)
        let encoder = try CompositionReencoder(tracks: cut, preset: preset)
        state.withLock {
            $0.status = .exporting
            $0.startedWriting = true
        }
        let cancelled: @Sendable () -> Bool = { [state] in state[\.cancelled] }
        let progress = AssetExportSession.progressReporter(state)
        var report = ClipCopyReport()
        report.duration = try await encoder.export(to: url, as: type, overwrite: settings.overwritesExistingFile,
                                                   metadata: settings.metadata, isCancelled: cancelled, progress: progress)
        return report
    }
}

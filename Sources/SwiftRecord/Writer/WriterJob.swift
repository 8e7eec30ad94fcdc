import Foundation

/// A file written by a pump on a thread of its own, then finished: the converters' one
/// skeleton (`RawVideoConverter`, `MediaFileConverter`).
///
/// The pump reads its input and appends to `writer`'s inputs on the thread; then the writer
/// is finished. A failure (the pump's or the finish's) keeps the file when `allowPartial`
/// (finished if the writer can be, else its partial file or what stands at the path) and
/// says where; without it the writer is cancelled and a file it created is removed. A cancel
/// with `allowPartial` whose file was finished is no failure: the pump's value is then nil.
struct WriterJob: Sendable {
    let writer: AssetWriter
    let outputPath: String
    let allowPartial: Bool

    /// Pictures queued for the encoder: two, so that when it finishes one the next is
    /// already there while a third is read. The encoder keeps its own look-ahead, so a
    /// deeper queue would only hold more pictures in memory (1.4 MB each at 720p).
    static let pictureQueueDepth = 2

    /// `dir/in.yuv` → `dir/in.mp4`; a name without an extension gets one.
    static func replacingExtension(of path: String, with ext: String) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let name = path[slash...]
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return String(path[..<dot]) + "." + ext
        }
        return path + "." + ext
    }

    /// Why the job failed, and the file kept for `allowPartial`, if any.
    struct Failure: Error {
        let error: SwiftRecordError
        let keptPath: String?
    }

    /// Runs `pump` on a thread named `threadName`; marks `inputs` finished and finishes the
    /// writer. Returns the pump's value, nil when it was cancelled and the file kept.
    func run<T: Sendable>(threadName: String, finishing inputs: [AssetWriterInput] = [],
                          _ pump: @escaping @Sendable () throws(SwiftRecordError) -> T) async throws(Failure) -> T? {
        let value = Locked<T?>(nil)
        let pumped = await ThreadTask.run(name: threadName) {
            let v = try pump()
            value.withLock { $0 = v }
        }
        var failure: SwiftRecordError?
        if case .failure(let error) = pumped {
            failure = error as? SwiftRecordError ?? SwiftRecordError(.io, operation: threadName, message: "\(error)")
        }
        if (failure == nil || allowPartial) && writer.status == .writing {
            for input in inputs { input.markAsFinished() }
            do {
                try await writer.finishWriting()
            } catch {
                if failure == nil { failure = error }
            }
        }
        guard let failure else { return value.withLock { $0 } }
        // A writer that failed may still be closing its file (cutting it back to its last
        // whole fragment): what is kept is told once the file is as it stays.
        if allowPartial && writer.status == .failed { _ = try? await writer.finishWriting() }
        if failure.kind == .cancelled && allowPartial && writer.status == .completed { return nil }
        guard allowPartial else {
            let status = writer.status
            writer.cancelWriting()
            if status == .failed { writer.outputFile?.discard() }
            throw Failure(error: failure, keptPath: nil)
        }
        let kept = writer.status == .completed ? outputPath
            : writer.partialFileURL?.path
            ?? writer.outputFile.flatMap { !$0.replacesExistingFile && FileIdentity(path: $0.path) != nil ? $0.path : nil }
        throw Failure(error: failure, keptPath: kept)
    }
}

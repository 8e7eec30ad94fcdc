import Foundation

/// Writes media to a file (`AVAssetWriter`) with Apple's `Bool` lifecycle:
/// `startWriting()` returns false and `status` and `error` say why. A thin wrapper over
/// SwiftRecord's `AssetWriter` (``assetWriter``), whose calls throw instead.
public final class AVAssetWriter: Sendable {
    /// Where the writer is in its lifecycle (`AVAssetWriter.Status`).
    public typealias Status = AssetWriter.Status

    /// The SwiftRecord writer underneath, for what only it offers.
    public let assetWriter: AssetWriter

    private struct State {
        var inputs: [AVAssetWriterInput] = []
        /// A refusal the writer itself did not record (an input that could not be added,
        /// `startWriting()` refused before opening anything): the writer is `.failed` for it.
        var failure: SwiftRecordError?
    }
    private let state = Locked(State())

    /// Wraps a SwiftRecord writer.
    public init(assetWriter: AssetWriter) {
        self.assetWriter = assetWriter
    }

    /// A writer for `outputURL` (`AVAssetWriter(outputURL:fileType:)`). Throws, as Apple's,
    /// for a type the path's extension contradicts; the output itself is checked by
    /// ``startWriting()``.
    public convenience init(outputURL: URL, fileType: AVFileType) throws {
        if let implied = FileType(pathExtension: outputURL.pathExtension), implied != fileType,
           !(implied == .mp4 && fileType == .mov) && !(implied == .mov && fileType == .mp4) {
            throw SwiftRecordError(.invalidArgument, operation: "AVAssetWriter",
                                   message: "'\(outputURL.lastPathComponent)' is named as a .\(implied) file, but the file type is .\(fileType)")
        }
        self.init(assetWriter: AssetWriter(outputURL: outputURL, fileType: fileType))
    }

    /// `AVAssetWriter(url:fileType:)`, the same as ``init(outputURL:fileType:)``.
    public convenience init(url: URL, fileType: AVFileType) throws {
        try self.init(outputURL: url, fileType: fileType)
    }

    /// Where the file is written (`outputURL`).
    public var outputURL: URL { assetWriter.outputURL }
    /// The container written (`outputFileType`).
    public var outputFileType: AVFileType { assetWriter.fileType }
    /// The inputs added (`inputs`).
    public var inputs: [AVAssetWriterInput] { state.withLock { $0.inputs } }

    /// Where the writer is (`status`): `.failed` also when a call returned false before
    /// anything was opened.
    public var status: Status {
        let native = assetWriter.status
        return native == .unknown && state.withLock({ $0.failure }) != nil ? .failed : native
    }

    /// Why the writer failed (`error`), a `SwiftRecordError`.
    public var error: (any Error)? { assetWriter.error ?? state.withLock { $0.failure } }

    /// Index before media data (`shouldOptimizeForNetworkUse`).
    public var shouldOptimizeForNetworkUse: Bool {
        get { assetWriter.shouldOptimizeForNetworkUse }
        set { assetWriter.shouldOptimizeForNetworkUse = newValue }
    }

    /// Crash-safe fragments this long (`movieFragmentInterval`); `kCMTimeInvalid`: none.
    public var movieFragmentInterval: CMTime {
        get { assetWriter.movieFragmentInterval ?? .invalid }
        set { assetWriter.movieFragmentInterval = newValue.isNumeric ? newValue : nil }
    }

    /// Whether the settings would work for an input of this writer (`canApply(outputSettings:forMediaType:)`).
    public func canApply(outputSettings: [String: Any]?, forMediaType mediaType: AVMediaType) -> Bool {
        assetWriter.canApply(outputSettings: outputSettings, forMediaType: mediaType)
    }

    /// Whether `input` can be added now (`canAdd(_:)`).
    public func canAdd(_ input: AVAssetWriterInput) -> Bool {
        guard let native = input.assetWriterInput else { return false }
        return assetWriter.canAdd(native)
    }

    /// Adds `input` (`add(_:)`). Where Apple raises an exception, the reason is logged and
    /// kept: ``startWriting()`` then returns false with it as ``error``.
    public func add(_ input: AVAssetWriterInput) {
        do throws(SwiftRecordError) {
            guard let native = input.assetWriterInput else { throw input.setupError ?? AVAssetWriterInput.noInput }
            try assetWriter.add(native)
            state.withLock { $0.inputs.append(input) }
        } catch {
            log.error("AVAssetWriter.add(_:): \(error.message)")
            state.withLock { s in if s.failure == nil { s.failure = error } }
        }
    }

    /// Opens the encoders and the file (`startWriting()`); false when it cannot, with
    /// ``status`` `.failed` and ``error`` saying why.
    @discardableResult
    public func startWriting() -> Bool {
        if let failure = state.withLock({ $0.failure }) {
            log.error("AVAssetWriter.startWriting() returned false: \(failure.message)")
            return false
        }
        do {
            try assetWriter.startWriting()
            return true
        } catch {
            state.withLock { s in if s.failure == nil { s.failure = error } }
            log.error("AVAssetWriter.startWriting() returned false: \(error.message)")
            return false
        }
    }

    /// Starts the timeline at `startTime` (`startSession(atSourceTime:)`). Where Apple
    /// raises an exception (no `startWriting()`, a second session), the reason is logged.
    public func startSession(atSourceTime startTime: CMTime) {
        do { try assetWriter.startSession(atSourceTime: startTime) } catch { log.error("AVAssetWriter.startSession(atSourceTime:): \(error.message)") }
    }

    /// Ends the timeline at `endTime` (`endSession(atSourceTime:)`).
    public func endSession(atSourceTime endTime: CMTime) {
        do { try assetWriter.endSession(atSourceTime: endTime) } catch { log.error("AVAssetWriter.endSession(atSourceTime:): \(error.message)") }
    }

    /// Marks the inputs finished, flushes and closes the file, then calls `handler`
    /// (`finishWriting(completionHandler:)`): check ``status`` and ``error`` there.
    public func finishWriting(completionHandler handler: @escaping @Sendable () -> Void) {
        if assetWriter.status == .unknown {
            log.error("AVAssetWriter.finishWriting: the writer never started writing\(state.withLock({ $0.failure }).map { " (\($0.message))" } ?? "")")
            DispatchQueue.global().async(execute: handler)
            return
        }
        assetWriter.finishWriting(completionHandler: handler)
    }

    /// `finishWriting()` as `async` (Apple's Swift spelling): returns when the file is
    /// closed; ``status`` and ``error`` say how it went.
    public func finishWriting() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            finishWriting { done.resume() }
        }
    }

    /// Stops writing and removes the file (`cancelWriting()`).
    public func cancelWriting() { assetWriter.cancelWriting() }
}

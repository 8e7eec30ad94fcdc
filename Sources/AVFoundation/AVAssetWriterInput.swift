import Foundation

/// A track of the file (`AVAssetWriterInput`) with Apple's `Bool` appends. A thin wrapper
/// over SwiftRecord's `AssetWriterInput` (``assetWriterInput``). Settings Apple would
/// refuse with an exception are kept as ``setupError``, logged, and make the writer's
/// `add(_:)` and `startWriting()` fail with them.
public final class AVAssetWriterInput: Sendable {
    /// The SwiftRecord input underneath; nil when the settings could not be read.
    public let assetWriterInput: AssetWriterInput?
    /// Why the settings could not be read; nil when they could.
    public let setupError: SwiftRecordError?
    /// The kind of media (`mediaType`).
    public let mediaType: AVMediaType

    private let refusals = Locked(RefusalReporter())
    /// Converts appended pictures that are not in the encoder's format or size, as Apple's
    /// input does (made at the first such picture).
    private let converter = Locked<PixelBufferAdaptor?>(nil)

    static let noInput = SwiftRecordError(.invalidState, operation: "AVAssetWriterInput", message: "the input has no settings it could be made with")

    /// Wraps a SwiftRecord input.
    public init(assetWriterInput input: AssetWriterInput) {
        assetWriterInput = input
        setupError = nil
        mediaType = input.mediaType
    }

    /// An input encoding to Apple-keyed `outputSettings` (`AVVideoCodecKey`, `AVFormatIDKey`,
    /// …), or passing samples through with `nil` and a `sourceFormatHint`
    /// (`init(mediaType:outputSettings:sourceFormatHint:)`).
    public init(mediaType: AVMediaType, outputSettings: [String: Any]?, sourceFormatHint: CMFormatDescription?) {
        self.mediaType = mediaType
        do throws(SwiftRecordError) {
            let input = try AssetWriterInput(mediaType: mediaType, outputSettings: outputSettings, sourceFormatHint: sourceFormatHint?.compressedFormat)
            assetWriterInput = input
            setupError = nil
        } catch {
            log.error("AVAssetWriterInput(mediaType: .\(mediaType), outputSettings:): \(error.message)")
            assetWriterInput = nil
            setupError = error
        }
    }

    /// An input encoding to Apple-keyed `outputSettings` (`init(mediaType:outputSettings:)`).
    public convenience init(mediaType: AVMediaType, outputSettings: [String: Any]?) {
        self.init(mediaType: mediaType, outputSettings: outputSettings, sourceFormatHint: nil)
    }

    /// Samples come live (`expectsMediaDataInRealTime`).
    public var expectsMediaDataInRealTime: Bool {
        get { assetWriterInput?.expectsMediaDataInRealTime ?? false }
        set { assetWriterInput?.expectsMediaDataInRealTime = newValue }
    }

    /// The display matrix written for the track (`transform`).
    public var transform: CGAffineTransform {
        get { assetWriterInput?.transform ?? .identity }
        set { assetWriterInput?.transform = newValue }
    }

    /// The track's ISO 639-2/T language (`languageCode`).
    public var languageCode: String? {
        get { assetWriterInput?.languageCode }
        set { assetWriterInput?.languageCode = newValue }
    }

    /// The track's tags (`metadata`), set before `startWriting()`: a
    /// `commonIdentifierTitle` item names the track ("Microphone") in players and editors.
    public var metadata: [AVMetadataItem] {
        get { assetWriterInput?.metadata.items ?? [] }
        set { assetWriterInput?.metadata = AssetMetadata(newValue) }
    }

    /// The pass-through input's format (`sourceFormatHint`).
    public var sourceFormatHint: CMFormatDescription? { assetWriterInput?.sourceFormatHint.map { CMFormatDescription(.compressed($0)) } }

    /// Multi-pass encoding where supported (`performsMultiPassEncodingIfSupported`): never here.
    public var performsMultiPassEncodingIfSupported: Bool {
        get { assetWriterInput?.performsMultiPassEncodingIfSupported ?? false }
        set { assetWriterInput?.performsMultiPassEncodingIfSupported = newValue }
    }

    /// Whether more passes will be made (`canPerformMultiplePasses`): false.
    public var canPerformMultiplePasses: Bool { false }

    /// Whether the input takes a sample now (`isReadyForMoreMediaData`).
    public var isReadyForMoreMediaData: Bool { assetWriterInput?.isReadyForMoreMediaData ?? false }

    /// No more samples will come (`markAsFinished()`).
    public func markAsFinished() { assetWriterInput?.markAsFinished() }

    /// Calls `block` on `queue` while the input wants data (`requestMediaDataWhenReady(on:using:)`).
    public func requestMediaDataWhenReady(on queue: DispatchQueue, using block: @escaping @Sendable () -> Void) {
        guard let input = assetWriterInput else {
            log.error("AVAssetWriterInput.requestMediaDataWhenReady(on:using:): \((setupError ?? AVAssetWriterInput.noInput).message); the block is never called")
            return
        }
        input.requestMediaDataWhenReady(on: queue, using: block)
    }

    /// Appends a sample (`append(_:)`), waiting while the queue is full; false when it is
    /// refused (the writer's `status` says whether writing failed; a refusal that leaves it
    /// writing — a time that does not increase — is logged).
    @discardableResult
    public func append(_ sampleBuffer: CMSampleBuffer) -> Bool {
        attempt("AVAssetWriterInput.append(_:)") { (input) throws(SwiftRecordError) in
            guard case .video(let picture) = sampleBuffer, let settings = input.videoSettings else {
                return try input.append(sampleBuffer)
            }
            let buffer = picture.pixelBuffer
            if buffer.width == settings.width, buffer.height == settings.height, buffer.pixelFormat == settings.pixelFormat, !buffer.isFullRange {
                return try input.append(sampleBuffer)
            }
            let adaptor = converter.withLock { made in
                if let made { return made }
                let adaptor = PixelBufferAdaptor(assetWriterInput: input)
                made = adaptor
                return adaptor
            }
            try adaptor.append(buffer, withPresentationTime: picture.presentationTimeStamp)
        }
    }

    /// Runs an append on the SwiftRecord input: true when it was taken.
    func attempt(_ what: String, _ body: (AssetWriterInput) throws(SwiftRecordError) -> Void) -> Bool {
        do throws(SwiftRecordError) {
            guard let input = assetWriterInput else { throw setupError ?? AVAssetWriterInput.noInput }
            try body(input)
            return true
        } catch {
            refusals.withLock { $0.report(what, error) }
            return false
        }
    }
}

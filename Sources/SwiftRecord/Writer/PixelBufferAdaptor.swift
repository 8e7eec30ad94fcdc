/// Appends pixel buffers with presentation times to a video input, and lends a pool of
/// buffers in the source's size and format. When a buffer's format, range or size differs
/// from the encoder's, it is converted into a pooled buffer of the encoder's format (32-bit
/// RGB to yuv420p at the same size by a SIMD converter in release builds, anything else by
/// libswscale: `PixelConverter`); when they match, the buffer reaches the encoder without a
/// copy. As on Apple platforms, a buffer need not be in the source attributes' format or
/// size: each other kind is converted too (a conversion is set up once per kind, and said
/// once in the `swift-record.writer` log).
///
/// The counterpart of `AVAssetWriterInputPixelBufferAdaptor` on Apple platforms.
public final class PixelBufferAdaptor: Sendable {
    /// The video input the pictures are appended to (`assetWriterInput`).
    public let assetWriterInput: AssetWriterInput
    /// The size and format of the buffers you append (`sourcePixelBufferAttributes`);
    /// nil means the encoder's own.
    public let sourcePixelBufferAttributes: PixelBufferAttributes?

    /// How many source buffers the pool lends beyond the input's queue: the buffer being
    /// filled, and a few a caller may hold (a renderer's double buffering).
    static let poolHeadroom = 6

    /// A kind of picture a converter takes.
    struct SourceKind: Hashable {
        let width: Int, height: Int, format: PixelFormat, fullRange: Bool
    }
    /// The most kinds of picture converted at a time (a source that keeps changing size
    /// gets a fresh converter for each, the oldest dropped).
    static let maximumConverters = 4

    private struct State {
        var pool: PixelBufferPool?
        var converters: [SourceKind: PixelConverter] = [:]
        var convertedPool: PixelBufferPool?
    }
    private let state = Locked(State())

    /// An adaptor for `input` taking buffers described by `attributes`
    /// (`init(assetWriterInput:sourcePixelBufferAttributes:)`).
    public init(assetWriterInput input: AssetWriterInput, sourcePixelBufferAttributes attributes: PixelBufferAttributes? = nil) {
        assetWriterInput = input
        sourcePixelBufferAttributes = attributes
    }

    /// The video input's settings; an audio input takes no pictures.
    private var settings: VideoSettings {
        get throws(SwiftRecordError) {
            guard let s = assetWriterInput.videoSettings else {
                throw SwiftRecordError(.invalidArgument, operation: "PixelBufferAdaptor",
                                       message: "the adaptor's input is an audio input; a PixelBufferAdaptor needs a video input")
            }
            return s
        }
    }

    var sourceAttributes: PixelBufferAttributes {
        let s = assetWriterInput.videoSettings
        return sourcePixelBufferAttributes ?? PixelBufferAttributes(width: s?.width ?? 0, height: s?.height ?? 0,
                                                                    pixelFormat: s?.pixelFormat ?? .yuv420p)
    }

    /// Fresh storage allocated for converted pictures (0 when no conversion is needed).
    var conversionStorageAllocations: Int { state.withLock { $0.convertedPool?.storageAllocationCount ?? 0 } }

    /// Buffers in the source size and format to fill and append (`pixelBufferPool`).
    /// Nil until the writer has started writing, as on Apple platforms.
    public var pixelBufferPool: PixelBufferPool? {
        guard let writer = assetWriterInput.writer, writer.status == .writing else { return nil }
        let a = sourceAttributes
        let count = assetWriterInput.queueDepth + PixelBufferAdaptor.poolHeadroom
        return state.withLock { s in
            if s.pool == nil {
                s.pool = try? PixelBufferPool(width: a.width, height: a.height, pixelFormat: a.pixelFormat, isFullRange: a.isFullRange,
                                              maximumBufferCount: count)
            }
            return s.pool
        }
    }

    /// Appends `pixelBuffer` shown at `presentationTime`, waiting while the input's queue is
    /// full (`append(_:withPresentationTime:)`). A buffer in another size, format or range
    /// than the encoder's is converted first. Throws for a wrong state or a time that does
    /// not increase.
    public func append(_ pixelBuffer: PixelBuffer, withPresentationTime presentationTime: MediaTime) throws(SwiftRecordError) {
        let encoderBuffer = try prepare(pixelBuffer)
        try assetWriterInput.enqueue(encoderBuffer, at: presentationTime, waiting: true)
    }

    /// Appends unless the input's queue is full, in which case it returns false and the
    /// frame is not taken: the real-time path, where a late frame is dropped, not queued.
    public func appendIfReady(_ pixelBuffer: PixelBuffer, withPresentationTime presentationTime: MediaTime) throws(SwiftRecordError) -> Bool {
        guard assetWriterInput.isReadyForMoreMediaData else {
            // Not ready: say why when appending is not possible at all, else report "full".
            try assetWriterInput.checkAppendable()
            return false
        }
        let encoderBuffer = try prepare(pixelBuffer)
        return try assetWriterInput.enqueue(encoderBuffer, at: presentationTime, waiting: false) != .full
    }

    /// Appends, suspending while the input's queue is full.
    public func append(_ pixelBuffer: PixelBuffer, withPresentationTime presentationTime: MediaTime) async throws(SwiftRecordError) {
        let encoderBuffer = try prepare(pixelBuffer)
        try await assetWriterInput.enqueueSuspending(encoderBuffer, at: presentationTime)
    }

    /// The buffer to hand the encoder: the same one when formats match, else a converted copy.
    private func prepare(_ buffer: PixelBuffer) throws(SwiftRecordError) -> PixelBuffer {
        let s = try settings
        // (A buffer in the encoder's format is checked as it is pinned for the queue.)
        if buffer.width == s.width, buffer.height == s.height, buffer.pixelFormat == s.pixelFormat,
           !buffer.isFullRange || s.colorProperties.fullRange {
            return buffer
        }
        // Refused before any conversion: the converted copy would not be locked.
        try buffer.checkAppendable()
        // Converted buffers stay out while queued: the queue's depth, the one being
        // converted, and one the caller's next append may convert meanwhile.
        let convertedCount = assetWriterInput.queueDepth + 2
        let kind = SourceKind(width: buffer.width, height: buffer.height, format: buffer.pixelFormat, fullRange: buffer.isFullRange)
        return try state.withLock { state throws(SwiftRecordError) -> PixelBuffer in
            if state.convertedPool == nil {
                state.convertedPool = try PixelBufferPool(width: s.width, height: s.height, pixelFormat: s.pixelFormat, maximumBufferCount: convertedCount)
            }
            let converter: PixelConverter
            if let existing = state.converters[kind] {
                converter = existing
            } else {
                converter = try PixelConverter(sourceWidth: kind.width, sourceHeight: kind.height, sourceFormat: kind.format,
                                               destinationWidth: s.width, destinationHeight: s.height, destinationFormat: s.pixelFormat,
                                               color: s.colorProperties, sourceFullRange: kind.format.isRGB ? nil : kind.fullRange)
                if state.converters.count >= PixelBufferAdaptor.maximumConverters { state.converters.removeAll() }
                state.converters[kind] = converter
                let declared = sourceAttributes
                let range = kind.format.isRGB ? "" : (kind.fullRange ? " (full range)" : " (video range)")
                let expected = declared.width == kind.width && declared.height == kind.height && declared.pixelFormat == kind.format
                    && declared.isFullRange == kind.fullRange
                // A picture of the declared kind is converted as asked; another kind is said once.
                let text = "converting \(kind.width)x\(kind.height) \(kind.format)\(range) pictures to the encoder's \(s.width)x\(s.height) \(s.pixelFormat)"
                    + (expected ? "" : "; the adaptor was set up for \(declared.width)x\(declared.height) \(declared.pixelFormat)")
                Log.writer.log(level: expected ? .debug : .info, "\(text)")
            }
            guard let convertedPool = state.convertedPool else {
                throw SwiftRecordError(.invalidState, operation: "append", message: "converter unavailable")
            }
            let out = try convertedPool.makePixelBuffer()
            try converter.convert(buffer, into: out)
            return out
        }
    }
}

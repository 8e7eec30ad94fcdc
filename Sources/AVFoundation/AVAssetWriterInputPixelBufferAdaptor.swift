/// Appends pixel buffers to a video input (`AVAssetWriterInputPixelBufferAdaptor`), taking
/// Apple's attribute dictionary (`kCVPixelBufferPixelFormatTypeKey`, `…WidthKey`,
/// `…HeightKey`) as written. A thin wrapper over SwiftRecord's `PixelBufferAdaptor`
/// (``pixelBufferAdaptor``): buffers of another format, range or size than the attributes
/// are converted, as Apple's are.
public final class AVAssetWriterInputPixelBufferAdaptor: Sendable {
    /// The input the pictures go to (`assetWriterInput`).
    public let assetWriterInput: AVAssetWriterInput
    /// The SwiftRecord adaptor underneath; nil when the input could not be made or the
    /// attributes name a pixel format this layer does not know (then the pool is nil and
    /// every append returns false, saying why in the log).
    public let pixelBufferAdaptor: PixelBufferAdaptor?
    private let attributes: PixelBufferAttributeValues.Snapshot
    private let problem: SwiftRecordError?

    /// An adaptor for `input` lending buffers as `sourcePixelBufferAttributes` describe
    /// (`init(assetWriterInput:sourcePixelBufferAttributes:)`). A missing width or height
    /// is the encoder's; a missing format is the encoder's own (no conversion).
    public init(assetWriterInput input: AVAssetWriterInput, sourcePixelBufferAttributes: [String: Any]?) {
        assetWriterInput = input
        let values = PixelBufferAttributeValues(sourcePixelBufferAttributes)
        attributes = .init(values)
        let settings = input.assetWriterInput?.videoSettings
        var native: PixelBufferAttributes?
        var problem: SwiftRecordError?
        if let code = values.formatCode {
            if let (format, fullRange) = FourCC.format(code) {
                var a = PixelBufferAttributes(width: values.width ?? settings?.width ?? 0, height: values.height ?? settings?.height ?? 0,
                                              pixelFormat: format)
                a.isFullRange = fullRange
                native = a
            } else {
                problem = SwiftRecordError(.unsupported, operation: "AVAssetWriterInputPixelBufferAdaptor",
                                           message: "pixel format \(FourCC.name(code)) is not supported here; use kCVPixelFormatType_32BGRA, _32ARGB, _420YpCbCr8BiPlanarVideoRange or FullRange, or _420YpCbCr8Planar")
            }
        } else if let settings, values.width != nil || values.height != nil {
            native = PixelBufferAttributes(width: values.width ?? settings.width, height: values.height ?? settings.height,
                                           pixelFormat: settings.pixelFormat)
        }
        if input.mediaType != .video {
            problem = SwiftRecordError(.invalidArgument, operation: "AVAssetWriterInputPixelBufferAdaptor",
                                       message: "the input is an \(input.mediaType) input; the adaptor needs a video input")
        }
        if let problem { log.error("\(problem.message)") }
        self.problem = problem
        pixelBufferAdaptor = problem == nil ? input.assetWriterInput.map {
            PixelBufferAdaptor(assetWriterInput: $0, sourcePixelBufferAttributes: native)
        } : nil
    }

    /// The attributes as given, by their `kCVPixelBuffer…Key` keys (`sourcePixelBufferAttributes`).
    public var sourcePixelBufferAttributes: [String: Any]? { attributes.dictionary }

    /// Buffers as the attributes describe them, once the writer is writing (`pixelBufferPool`).
    public var pixelBufferPool: CVPixelBufferPool? { pixelBufferAdaptor?.pixelBufferPool }

    /// Appends `pixelBuffer` shown at `presentationTime`, waiting while the input's queue is
    /// full (`append(_:withPresentationTime:)`); false when it is refused.
    @discardableResult
    public func append(_ pixelBuffer: CVPixelBuffer, withPresentationTime presentationTime: CMTime) -> Bool {
        assetWriterInput.attempt("AVAssetWriterInputPixelBufferAdaptor.append(_:withPresentationTime:)") { (_) throws(SwiftRecordError) in
            guard let adaptor = pixelBufferAdaptor else {
                throw problem ?? assetWriterInput.setupError ?? AVAssetWriterInput.noInput
            }
            try adaptor.append(pixelBuffer, withPresentationTime: presentationTime)
        }
    }
}

extension PixelBufferAttributeValues {
    /// The attributes given, kept to be handed back (Sendable, unlike the dictionary).
    struct Snapshot: Sendable {
        let formatCode: OSType?, width: Int?, height: Int?, given: Bool

        init(_ values: PixelBufferAttributeValues) {
            (formatCode, width, height) = (values.formatCode, values.width, values.height)
            given = values.wasGiven
        }

        var dictionary: [String: Any]? {
            guard given else { return nil }
            var d: [String: Any] = [:]
            if let formatCode { d[kCVPixelBufferPixelFormatTypeKey] = formatCode }
            if let width { d[kCVPixelBufferWidthKey] = width }
            if let height { d[kCVPixelBufferHeightKey] = height }
            return d
        }
    }
}

// Core Media's format descriptions as Apple's capture and writer code passes them around:
// what a sample holds (pictures of a size and format, sound of a format, or a compressed
// stream a reader described).

/// A Core Media result code (`OSStatus`); 0 is success.
public typealias OSStatus = Int32
/// The result of a Core Media call that failed for a bad argument (`kCMSampleBufferError_RequiredParameterMissing`).
public let kCMSampleBufferError_RequiredParameterMissing: OSStatus = -12731

/// What a sample holds (`CMFormatDescription`).
public struct CMFormatDescription: Sendable {
    /// The kinds a description here can be.
    public enum Contents: Sendable {
        /// Pictures: their size, format code and range.
        case video(width: Int, height: Int, pixelFormat: OSType)
        /// PCM sound.
        case audio(AudioFormat)
        /// A compressed stream, as a reader's track describes it (a pass-through input's hint).
        case compressed(FormatDescription)
    }
    /// What the samples are.
    public let contents: Contents

    /// A description of `contents`.
    public init(_ contents: Contents) { self.contents = contents }

    /// The compressed stream described, for a pass-through input's hint; nil for pictures and PCM.
    public var compressedFormat: FormatDescription? {
        if case .compressed(let f) = contents { return f }
        return nil
    }
}
/// A description of pictures (`CMVideoFormatDescription`).
public typealias CMVideoFormatDescription = CMFormatDescription
/// A description of sound (`CMAudioFormatDescription`).
public typealias CMAudioFormatDescription = CMFormatDescription

/// A picture's size (`CMVideoDimensions`).
public struct CMVideoDimensions: Sendable, Hashable {
    public var width: Int32
    public var height: Int32
    public init(width: Int32, height: Int32) { (self.width, self.height) = (width, height) }
}

/// The pictures' size (`CMVideoFormatDescriptionGetDimensions`); 0×0 for sound.
public func CMVideoFormatDescriptionGetDimensions(_ videoDesc: CMVideoFormatDescription) -> CMVideoDimensions {
    switch videoDesc.contents {
    case .video(let width, let height, _): CMVideoDimensions(width: Int32(clamping: width), height: Int32(clamping: height))
    case .compressed(let f): CMVideoDimensions(width: Int32(clamping: f.dimensions.width), height: Int32(clamping: f.dimensions.height))
    case .audio: CMVideoDimensions(width: 0, height: 0)
    }
}

/// A description of `imageBuffer`'s pictures (`CMVideoFormatDescriptionCreateForImageBuffer`).
@discardableResult
public func CMVideoFormatDescriptionCreateForImageBuffer(allocator: CFAllocator?, imageBuffer: CVImageBuffer,
                                                         formatDescriptionOut: UnsafeMutablePointer<CMVideoFormatDescription?>) -> OSStatus {
    formatDescriptionOut.pointee = CMFormatDescription(.video(width: imageBuffer.width, height: imageBuffer.height,
                                                              pixelFormat: CVPixelBufferGetPixelFormatType(imageBuffer)))
    return 0
}

/// What a sample holds (`CMSampleBufferGetFormatDescription`).
public func CMSampleBufferGetFormatDescription(_ sbuf: CMSampleBuffer) -> CMFormatDescription? {
    switch sbuf {
    case .video(let picture): CMFormatDescription(.video(width: picture.pixelBuffer.width, height: picture.pixelBuffer.height,
                                                         pixelFormat: CVPixelBufferGetPixelFormatType(picture.pixelBuffer)))
    case .audio(let sound): CMFormatDescription(.audio(sound.format))
    case .compressed(let sample): CMFormatDescription(.compressed(sample.formatDescription))
    }
}

/// A sample's times (`CMSampleTimingInfo`).
public struct CMSampleTimingInfo: Sendable {
    public var duration: CMTime
    public var presentationTimeStamp: CMTime
    public var decodeTimeStamp: CMTime
    public init(duration: CMTime, presentationTimeStamp: CMTime, decodeTimeStamp: CMTime) {
        (self.duration, self.presentationTimeStamp, self.decodeTimeStamp) = (duration, presentationTimeStamp, decodeTimeStamp)
    }
    public init() { self.init(duration: .invalid, presentationTimeStamp: .invalid, decodeTimeStamp: .invalid) }
}

/// Apple's callback that makes a sample's data ready; never called here (data is always ready).
public typealias CMSampleBufferMakeDataReadyCallback = (CMSampleBuffer, UnsafeMutableRawPointer?) -> OSStatus

/// A sample of `imageBuffer` shown at the timing's presentation time
/// (`CMSampleBufferCreateForImageBuffer`). The duration and decode time are not kept.
@discardableResult
public func CMSampleBufferCreateForImageBuffer(allocator: CFAllocator?, imageBuffer: CVImageBuffer, dataReady: Bool,
                                               makeDataReadyCallback: CMSampleBufferMakeDataReadyCallback?, refcon: UnsafeMutableRawPointer?,
                                               formatDescription: CMVideoFormatDescription, sampleTiming: UnsafePointer<CMSampleTimingInfo>,
                                               sampleBufferOut: UnsafeMutablePointer<CMSampleBuffer?>) -> OSStatus {
    sampleBufferOut.pointee = .video(SampleBuffer(pixelBuffer: imageBuffer, presentationTimeStamp: sampleTiming.pointee.presentationTimeStamp))
    return 0
}

import AVFoundation
import CoreVideo

// The receivers of 2025 as Apple's documentation writes them: attach the input, fill a
// mutable buffer from the receiver's pool, hand it on read-only, append.

// row: AVAssetWriter.inputPixelBufferReceiver(for:pixelBufferAttributes:)
// row: CVPixelBufferCreationAttributes
// row: CVPixelBufferCreationAttributes.init(pixelFormatType:size:)
// row: CVPixelFormatType
// row: CVImageSize
// row: AVAssetWriterInput.PixelBufferReceiver
func makeReceiver(_ writer: AVAssetWriter, _ input: AVAssetWriterInput) -> AVAssetWriterInput.PixelBufferReceiver {
    let attributes = CVPixelBufferCreationAttributes(pixelFormatType: CVPixelFormatType(rawValue: kCVPixelFormatType_32BGRA),
                                                     size: CVImageSize(width: 1280, height: 720))
    let receiver: AVAssetWriterInput.PixelBufferReceiver = writer.inputPixelBufferReceiver(for: input, pixelBufferAttributes: attributes)
    return receiver
}

// row: AVAssetWriterInput.PixelBufferReceiver.pixelBufferPool
// row: CVMutablePixelBuffer
// row: CVMutablePixelBuffer.Pool
// row: CVMutablePixelBuffer.Pool.makeMutablePixelBuffer()
// row: CVMutablePixelBuffer.accessUnsafeMutableRawPlaneBytes(_:)
// row: CVPixelBufferPlaneProperties
// row: CVReadOnlyPixelBuffer
// row: CVReadOnlyPixelBuffer.init(_:)
// row: AVAssetWriterInput.PixelBufferReceiver.append(_:with:)
func renderFrame(_ receiver: AVAssetWriterInput.PixelBufferReceiver, at time: CMTime) async throws {
    guard let pool: CVMutablePixelBuffer.Pool = receiver.pixelBufferPool else { return }
    var pixelBuffer: CVMutablePixelBuffer = try pool.makeMutablePixelBuffer()
    pixelBuffer.accessUnsafeMutableRawPlaneBytes { planes in
        for plane in planes {
            let properties: CVPixelBufferPlaneProperties = plane.properties
            plane.bytes.initializeMemory(as: UInt8.self, repeating: properties.bytesPerRow > 0 ? 0x80 : 0)
        }
    }
    let readOnly = CVReadOnlyPixelBuffer(pixelBuffer)
    try await receiver.append(readOnly, with: time)
}

// row: AVAssetWriterInput.PixelBufferReceiver.appendImmediately(_:with:)
// row: AVAssetWriterInput.PixelBufferReceiver.finish()
// row: AVAssetWriterInput.PixelBufferReceiver.sourcePixelBufferAttributes
func appendOrDrop(_ receiver: AVAssetWriterInput.PixelBufferReceiver, _ frame: CVReadOnlyPixelBuffer, at time: CMTime, last: Bool) throws {
    let size = receiver.sourcePixelBufferAttributes?.size
    if try !receiver.appendImmediately(frame, with: time) { print("dropped a \(size.map { "\($0.width)x\($0.height)" } ?? "") frame") }
    if last { receiver.finish() }
}

// row: CVMutablePixelBuffer.init(_:)
// row: CVMutablePixelBuffer.pixelFormatType
// row: CVMutablePixelBuffer.size
// row: CVMutablePixelBuffer.withUnsafeBuffer(_:)
// row: CVMutablePixelBuffer.Pool.init(pixelBufferAttributes:)
// row: CVMutablePixelBuffer.Pool.pixelBufferAttributes
func standAlone(_ attributes: CVPixelBufferCreationAttributes) throws -> Int {
    let pixelBuffer = try CVMutablePixelBuffer(attributes)
    let pool = try CVMutablePixelBuffer.Pool(pixelBufferAttributes: attributes)
    guard pixelBuffer.pixelFormatType == pool.pixelBufferAttributes.pixelFormatType else { return 0 }
    return pixelBuffer.size.width * pixelBuffer.withUnsafeBuffer { CVPixelBufferGetHeight($0) }
}

// row: CVMutablePixelBuffer.init(unsafeBuffer:)
// row: CVReadOnlyPixelBuffer.init(unsafeBuffer:)
// row: CVReadOnlyPixelBuffer.withUnsafeBuffer(_:)
func wrap(_ classic: CVPixelBuffer, _ another: CVPixelBuffer) -> Int {
    let mutable = CVMutablePixelBuffer(unsafeBuffer: classic)
    let readOnly = CVReadOnlyPixelBuffer(unsafeBuffer: another)
    return mutable.size.width + readOnly.withUnsafeBuffer { CVPixelBufferGetWidth($0) }
}

// row: AVAssetWriter.inputReceiver(for:)
// row: AVAssetWriterInput.SampleBufferReceiver
// row: AVAssetWriterInput.SampleBufferReceiver.append(_:)
// row: AVAssetWriterInput.SampleBufferReceiver.appendImmediately(_:)
// row: AVAssetWriterInput.SampleBufferReceiver.finish()
func writeSound(_ writer: AVAssetWriter, _ input: AVAssetWriterInput, _ samples: [CMSampleBuffer]) async throws {
    let receiver: AVAssetWriterInput.SampleBufferReceiver = writer.inputReceiver(for: input)
    for sampleBuffer in samples {
        if try !receiver.appendImmediately(sampleBuffer) { try await receiver.append(sampleBuffer) }
    }
    receiver.finish()
}

// row: AVAssetWriterInput.metadata
// row: AVMutableMetadataItem
// row: AVMutableMetadataItem.identifier
// row: AVMutableMetadataItem.value
// row: AVMetadataIdentifier
// row: AVMetadataIdentifier.commonIdentifierTitle
func titleTrack(_ input: AVAssetWriterInput) {
    let item = AVMutableMetadataItem()
    item.identifier = AVMetadataIdentifier.commonIdentifierTitle
    item.value = "Microphone" as NSString
    input.metadata = [item]
}

// row: AVMetadataItem
// row: AVMetadataItem.stringValue
// row: AVMetadataIdentifier.commonIdentifierCreationDate
func trackTitle(_ input: AVAssetWriterInput) -> String? {
    let items: [AVMetadataItem] = input.metadata
    _ = items.first { $0.identifier == .commonIdentifierCreationDate }
    return items.first { $0.identifier == .commonIdentifierTitle }?.stringValue
}

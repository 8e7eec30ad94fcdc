import AVFoundation

// row: AVAssetWriterInput
// row: AVAssetWriterInput.init(mediaType:outputSettings:)
// row: AVAssetWriterInput.mediaType
func videoInput() -> AVAssetWriterInput {
    let input = AVAssetWriterInput(mediaType: .video, outputSettings: [
        AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 1280, AVVideoHeightKey: 720,
    ])
    precondition(input.mediaType == .video)
    return input
}

// row: AVAssetWriterInput.init(mediaType:outputSettings:sourceFormatHint:)
// row: AVAssetWriterInput.sourceFormatHint
func audioInput(hint: CMFormatDescription?) -> AVAssetWriterInput {
    let input = AVAssetWriterInput(mediaType: .audio, outputSettings: [AVFormatIDKey: kAudioFormatMPEG4AAC], sourceFormatHint: hint)
    _ = input.sourceFormatHint
    return input
}

// row: AVAssetWriterInput.init(assetWriterInput:)
// row: AVAssetWriterInput.assetWriterInput
// row: AVAssetWriterInput.setupError
func wrapNativeInput() -> AVAssetWriterInput {
    let input = AVAssetWriterInput(assetWriterInput: AssetWriterInput(outputSettings: VideoSettings(width: 640, height: 360)))
    if let error = input.setupError { print(error) }
    _ = input.assetWriterInput?.queueDepth
    return input
}

// row: AVAssetWriterInput.expectsMediaDataInRealTime
// row: AVAssetWriterInput.transform
// row: AVAssetWriterInput.languageCode
func configure(_ input: AVAssetWriterInput) {
    input.expectsMediaDataInRealTime = true
    input.transform = CGAffineTransform(rotationAngle: .pi / 2)
    input.languageCode = "eng"
}

// row: AVAssetWriterInput.performsMultiPassEncodingIfSupported
// row: AVAssetWriterInput.canPerformMultiplePasses
func multiPass(_ input: AVAssetWriterInput) -> Bool {
    input.performsMultiPassEncodingIfSupported = true
    return input.canPerformMultiplePasses
}

// row: AVAssetWriterInput.isReadyForMoreMediaData
// row: AVAssetWriterInput.append(_:)
func write(_ sampleBuffer: CMSampleBuffer, to input: AVAssetWriterInput) -> Bool {
    guard input.isReadyForMoreMediaData else { return false }
    return input.append(sampleBuffer)
}

// row: AVAssetWriterInput.requestMediaDataWhenReady(on:using:)
// row: AVAssetWriterInput.markAsFinished()
func pull(_ input: AVAssetWriterInput, next: @escaping @Sendable () -> CMSampleBuffer?) {
    input.requestMediaDataWhenReady(on: DispatchQueue(label: "feeder")) {
        while input.isReadyForMoreMediaData {
            guard let sample = next() else { input.markAsFinished(); return }
            input.append(sample)
        }
    }
}

// row: AVAssetWriterInputPixelBufferAdaptor
// row: AVAssetWriterInputPixelBufferAdaptor.init(assetWriterInput:sourcePixelBufferAttributes:)
// row: AVAssetWriterInputPixelBufferAdaptor.assetWriterInput
// row: AVAssetWriterInputPixelBufferAdaptor.sourcePixelBufferAttributes
func adaptor(for input: AVAssetWriterInput) -> AVAssetWriterInputPixelBufferAdaptor {
    let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: [
        kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA,
        kCVPixelBufferWidthKey as String: 1280,
        kCVPixelBufferHeightKey as String: 720,
    ])
    precondition(adaptor.assetWriterInput === input && adaptor.sourcePixelBufferAttributes != nil)
    return adaptor
}

// row: AVAssetWriterInputPixelBufferAdaptor.pixelBufferPool
// row: AVAssetWriterInputPixelBufferAdaptor.append(_:withPresentationTime:)
func appendFrame(_ adaptor: AVAssetWriterInputPixelBufferAdaptor, at time: CMTime) -> Bool {
    guard let pool = adaptor.pixelBufferPool else { return false }
    var pixelBuffer: CVPixelBuffer?
    guard CVPixelBufferPoolCreatePixelBuffer(nil, pool, &pixelBuffer) == kCVReturnSuccess, let pixelBuffer else { return false }
    return adaptor.append(pixelBuffer, withPresentationTime: time)
}

// row: AVAssetWriterInputPixelBufferAdaptor.pixelBufferAdaptor
func nativeAdaptor(_ adaptor: AVAssetWriterInputPixelBufferAdaptor) -> PixelBufferAdaptor? { adaptor.pixelBufferAdaptor }

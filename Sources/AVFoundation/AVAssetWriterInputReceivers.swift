import Foundation

// The receivers of 2025 (iOS/macOS 26): the writer attaches an input and hands back what
// to write into it, with appends that suspend (`append`) or refuse when the input is full
// (`appendImmediately`), and throw once the writer failed. Thin wrappers over SwiftRecord's
// `PixelBufferAdaptor` and `AssetWriterInput`.

extension AVAssetWriter {
    /// Adds `input` and returns what pixel buffers are written into it with
    /// (`inputPixelBufferReceiver(for:pixelBufferAttributes:)`); `attributes` describe the
    /// receiver's pool (nil: the encoder's format and size). An input that cannot be added
    /// makes `startWriting()` return false, as with `add(_:)`.
    public func inputPixelBufferReceiver(for input: AVAssetWriterInput,
                                         pixelBufferAttributes attributes: CVPixelBufferCreationAttributes?) -> AVAssetWriterInput.PixelBufferReceiver {
        add(input)
        return AVAssetWriterInput.PixelBufferReceiver(input: input, attributes: attributes)
    }

    /// Adds `input` and returns what sample buffers are written into it with (`inputReceiver(for:)`).
    public func inputReceiver(for input: AVAssetWriterInput) -> AVAssetWriterInput.SampleBufferReceiver {
        add(input)
        return AVAssetWriterInput.SampleBufferReceiver(input: input)
    }
}

extension AVAssetWriterInput {
    /// The SwiftRecord input a receiver appends to, or why there is none.
    func receiverInput() throws(SwiftRecordError) -> AssetWriterInput {
        guard let input = assetWriterInput else { throw setupError ?? AVAssetWriterInput.noInput }
        return input
    }

    /// Writes pixel buffers into an input (`AVAssetWriterInput.PixelBufferReceiver`).
    public final class PixelBufferReceiver: Sendable {
        private let input: AVAssetWriterInput
        private let adaptor: PixelBufferAdaptor?
        /// What the pool's buffers are made with (`sourcePixelBufferAttributes`).
        public let sourcePixelBufferAttributes: CVPixelBufferCreationAttributes?
        private let problem: SwiftRecordError?

        init(input: AVAssetWriterInput, attributes: CVPixelBufferCreationAttributes?) {
            self.input = input
            sourcePixelBufferAttributes = attributes
            var native: PixelBufferAttributes?
            var problem: SwiftRecordError?
            if let attributes {
                do throws(SwiftRecordError) {
                    let (format, fullRange) = try attributes.native("inputPixelBufferReceiver(for:pixelBufferAttributes:)")
                    var a = PixelBufferAttributes(width: attributes.size.width, height: attributes.size.height, pixelFormat: format)
                    a.isFullRange = fullRange
                    native = a
                } catch {
                    problem = error
                }
            }
            if input.mediaType != .video {
                problem = SwiftRecordError(.invalidArgument, operation: "inputPixelBufferReceiver(for:pixelBufferAttributes:)",
                                           message: "the input is an \(input.mediaType) input; pixel buffers need a video input")
            }
            if let problem { log.error("\(problem.message)") }
            self.problem = problem
            adaptor = problem == nil ? input.assetWriterInput.map { PixelBufferAdaptor(assetWriterInput: $0, sourcePixelBufferAttributes: native) } : nil
        }

        private func nativeAdaptor() throws(SwiftRecordError) -> PixelBufferAdaptor {
            guard let adaptor else { throw problem ?? input.setupError ?? AVAssetWriterInput.noInput }
            return adaptor
        }

        /// Buffers as the attributes describe them, once the writer is writing (`pixelBufferPool`).
        public var pixelBufferPool: CVMutablePixelBuffer.Pool? {
            adaptor?.pixelBufferPool.map { CVMutablePixelBuffer.Pool(pool: $0) }
        }

        /// Waits while the input is full, then appends (`append(_:with:)`). Throws when the
        /// writer failed, or for a time that does not increase.
        public func append(_ pixelBuffer: CVReadOnlyPixelBuffer, with presentationTime: CMTime) async throws {
            try await nativeAdaptor().append(pixelBuffer.buffer, withPresentationTime: presentationTime)
        }

        /// Appends if the input takes more now (`appendImmediately(_:with:)`): false when it
        /// is full (the buffer is not taken); throws as `append(_:with:)`.
        public func appendImmediately(_ pixelBuffer: CVReadOnlyPixelBuffer, with presentationTime: CMTime) throws -> Bool {
            try nativeAdaptor().appendIfReady(pixelBuffer.buffer, withPresentationTime: presentationTime)
        }

        /// No more buffers will come (`finish()`).
        public func finish() { input.markAsFinished() }
    }

    /// Writes sample buffers into an input (`AVAssetWriterInput.SampleBufferReceiver`).
    public final class SampleBufferReceiver: Sendable {
        private let input: AVAssetWriterInput

        init(input: AVAssetWriterInput) { self.input = input }

        /// Waits while the input is full, then appends (`append(_:)`); throws when the writer failed.
        public func append(_ sampleBuffer: CMSampleBuffer) async throws {
            try await input.receiverInput().append(sampleBuffer)
        }

        /// Appends if the input takes more now (`appendImmediately(_:)`): false when it is full.
        public func appendImmediately(_ sampleBuffer: CMSampleBuffer) throws -> Bool {
            let native = try input.receiverInput()
            guard native.isReadyForMoreMediaData else {
                try native.checkAppendable()
                return false
            }
            try native.append(sampleBuffer)
            return true
        }

        /// No more samples will come (`finish()`).
        public func finish() { input.markAsFinished() }
    }
}

/// Reads one track of an `AssetReader`'s file: with `outputSettings` nil, its compressed
/// samples untouched (times, key-frame flags and the format a pass-through writer input
/// needs); otherwise decoded pictures or sound as the settings ask.
///
/// ```swift
/// let output = AssetReaderTrackOutput(track: track, outputSettings: .video(pixelFormat: .yuv420p))
/// try reader.add(output)
/// try reader.startReading()
/// for try await sample in output.samples { try input.append(sample) }
/// ```
///
/// The counterpart of `AVAssetReaderTrackOutput` on Apple platforms.
public final class AssetReaderTrackOutput: Sendable {
    /// The track read (`track`).
    public let track: AssetReaderTrack
    /// What the samples are: nil for compressed samples as stored (`outputSettings`).
    public let outputSettings: AssetReaderOutputSettings?

    private struct Attachment {
        weak var reader: AssetReader?
        var index = 0
        var attached = false
    }
    private let attachment = Locked(Attachment())

    /// An output of `track`'s samples: compressed (`outputSettings: nil`), decoded pictures
    /// (`.video(pixelFormat:size:)`) or decoded sound (`.audio(AudioFormat)`)
    /// (`init(track:outputSettings:)`).
    public init(track: AssetReaderTrack, outputSettings: AssetReaderOutputSettings?) {
        self.track = track
        self.outputSettings = outputSettings
    }

    /// The media type of the samples (`mediaType`).
    public var mediaType: MediaType { track.mediaType }

    var isAttached: Bool { attachment[\.attached] }

    func attach(to reader: AssetReader, index: Int) throws(SwiftRecordError) {
        try attachment.withLock { a throws(SwiftRecordError) in
            guard !a.attached else {
                throw SwiftRecordError(.invalidState, operation: "add", message: "the output is already added to a reader")
            }
            a = Attachment(reader: reader, index: index, attached: true)
        }
    }

    /// The next sample in presentation order for decoded outputs, decode order for
    /// compressed ones (`copyNextSampleBuffer()`); nil once the track (or `timeRange`)
    /// is read to its end or the reader was cancelled. Throws why reading failed (the
    /// reader's `status` is then `.failed`), as Apple's returns nil with the reader's error.
    public func copyNextSampleBuffer() throws(SwiftRecordError) -> MediaSample? {
        let (reader, index) = attachment.withLock { ($0.reader, $0.index) }
        guard let reader else {
            throw SwiftRecordError(.invalidState, operation: "copyNextSampleBuffer", message: "the output has not been added to a reader")
        }
        return try reader.next(index)
    }

    /// The next sample if the file has been read as far as it (for the other outputs),
    /// without reading further; nil when it has not, or at the track's end
    /// (`copyNextSampleBuffer()` tells which). For a sparse track (subtitles) read beside others.
    func copyNextSampleBufferIfRead() throws(SwiftRecordError) -> MediaSample? {
        let (reader, index) = attachment.withLock { ($0.reader, $0.index) }
        return try reader?.next(index, reading: false)
    }

    /// The samples as an asynchronous sequence (`for try await sample in output.samples`),
    /// each from `copyNextSampleBuffer()`.
    public var samples: Samples { Samples(output: self) }

    /// An output's samples, read as they are asked for.
    public struct Samples: AsyncSequence, Sendable {
        public typealias Element = MediaSample
        let output: AssetReaderTrackOutput

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(output: output) }

        public struct AsyncIterator: AsyncIteratorProtocol {
            let output: AssetReaderTrackOutput
            public mutating func next() async throws -> MediaSample? {
                try output.copyNextSampleBuffer()
            }
        }
    }
}

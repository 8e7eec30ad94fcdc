extension AssetWriter {
    /// Where the writer is in its lifecycle (`AVAssetWriter.Status`).
    public enum Status: String, Sendable {
        /// Not started: inputs may be added.
        case unknown
        /// Between `startWriting()` and the end of `finishWriting()`.
        case writing
        /// `finishWriting()` succeeded: the file is complete.
        case completed
        /// Writing failed: `error` says why, and the file was finalised as far as it could be.
        case failed
        /// `cancelWriting()` stopped the writer (and removed the file it had created).
        case cancelled
    }
}

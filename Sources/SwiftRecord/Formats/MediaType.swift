/// The kind of media an input carries (`AVMediaType`).
public enum MediaType: String, Sendable {
    /// Pictures: a video track.
    case video
    /// Sound: an audio track.
    case audio
}

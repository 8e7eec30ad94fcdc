/// The kind of media an input carries (`AVMediaType`).
public enum MediaType: String, Sendable {
    /// Pictures: a video track.
    case video
    /// Sound: an audio track.
    case audio
    /// Timed text or pictures over the video (SubRip, ASS, WebVTT, MP4's `mov_text`, PGS):
    /// a subtitle track, whose compressed samples are only passed through
    /// (``AssetReader/subtitleTracks``).
    case subtitle
}

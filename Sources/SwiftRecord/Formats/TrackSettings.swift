/// What an input encodes to: a video or an audio track, or (pass-through) a track of
/// compressed samples muxed as they come, described by their format.
enum TrackSettings: Sendable {
    case video(VideoSettings)
    case audio(AudioSettings)
    case passThrough(FormatDescription)
}

/// What an input encodes to: a video or an audio track.
enum TrackSettings: Sendable {
    case video(VideoSettings)
    case audio(AudioSettings)
}

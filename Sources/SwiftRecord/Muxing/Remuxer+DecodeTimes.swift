internal import CFFmpeg

/// Decode times for the packets a demuxer leaves without one: Matroska stores presentation
/// times only, so the first packets of a stream with B-frames come without a decode time,
/// and libavformat's muxer warns ("Timestamps are unset in a packet") and guesses. As the
/// reader does for a copied track (`TrackOutputEngine`): the frames the decoder holds back
/// come before the first known decode time, one frame apart, never after their own
/// presentation time. Matroska writes presentation times only, so the file is the same.
/// The guess depends on the stream's reorder delay, as libavformat's own did: one too
/// short gives decode times out of order, which the muxer refuses (the repair fails and
/// the original is kept), never a packet lost.
struct DecodeTimeFiller {
    private var last: [Int64?]
    private var steps: [Int64]

    init(streams: Int) {
        last = Array(repeating: nil, count: streams)
        steps = Array(repeating: 0, count: streams)
    }

    /// Fills `packet`'s decode time if it has none (and a presentation time); notes its
    /// times either way. `delay`: the stream's reorder delay in frames (`video_delay`).
    mutating func fill(_ packet: UnsafeMutablePointer<AVPacket>, stream: Int, delay: Int32) {
        let nopts = sr_nopts_value()
        if packet.pointee.duration > 0 { steps[stream] = packet.pointee.duration }
        if packet.pointee.dts == nopts, packet.pointee.pts != nopts {
            let step = max(1, steps[stream])
            // Wrapping arithmetic: times from a hostile file must not trap (a wrong guess is
            // refused just below, or left to libavformat).
            let guess = last[stream].map { $0 &+ step } ?? packet.pointee.pts &- Int64(max(0, delay)) &* step
            let dts = min(guess, packet.pointee.pts)
            // One that cannot come after the last is left to libavformat, as before.
            if last[stream].map({ dts > $0 }) ?? true { packet.pointee.dts = dts }
        }
        if packet.pointee.dts != nopts { last[stream] = max(last[stream] ?? packet.pointee.dts, packet.pointee.dts) }
    }
}

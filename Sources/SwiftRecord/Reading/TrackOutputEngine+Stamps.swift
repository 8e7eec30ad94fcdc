internal import CFFmpeg
import DequeModule

extension TrackOutputEngine {
    /// Packets read past the first unstamped ones before their times are worked out.
    static let stampLookAhead = 8

    /// Gives the packets at the head of a track that carry no time at all (neither
    /// presentation nor decode time) the times they must have had: FFmpeg's Matroska demuxer
    /// hands out the first packets of a track shifted before the cluster's time (sound that
    /// starts before 0, `-avoid_negative_ts disabled`) without any, and a muxer cannot place
    /// a packet without one. They lie one packet's length each before the earliest time of
    /// the packets that follow (the earliest: with B-frames the next in decode order is shown
    /// later). `first` is the packet taken from the head of `queue`; false: more packets
    /// must be read first.
    static func stampLeadingPackets(_ first: PacketStorage, queue: Deque<PacketStorage>, inputEnded: Bool) -> Bool {
        let nopts = sr_nopts_value()
        func unstamped(_ s: PacketStorage) -> Bool { s.packet.pointee.pts == nopts && s.packet.pointee.dts == nopts }
        let leading = [first] + queue.prefix(while: unstamped)
        let following = queue.dropFirst(leading.count - 1).prefix(stampLookAhead)
        guard following.count >= stampLookAhead || inputEnded else { return false }
        let times = following.compactMap { s -> Int64? in
            let p = s.packet.pointee
            return p.pts != nopts ? p.pts : p.dts != nopts ? p.dts : nil
        }
        // Nothing to go by: the packets stay as they are.
        guard var t = times.min() else { return true }
        let fallback = following.first.map { max(1, $0.packet.pointee.duration) } ?? 1
        for s in leading.reversed() {
            t = t &- (s.packet.pointee.duration > 0 ? s.packet.pointee.duration : fallback)   // a hostile file's times never trap
            s.packet.pointee.pts = t
            s.packet.pointee.dts = t
        }
        return true
    }
}

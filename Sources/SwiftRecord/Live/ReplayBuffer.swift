import Foundation

/// The last seconds of a recording, kept in memory as encoded packets (no second encode),
/// saved to a file on demand while the recording goes on: the replay buffer of OBS and
/// gpu-screen-recorder's `-r`.
///
/// Packets are evicted a whole group of pictures at a time, so the buffer always starts on
/// a key frame: a saved clip starts on a key frame, its sound cut at the same time, and lasts
/// between `duration` and `duration` plus one key-frame interval (less only when
/// `memoryLimit` forced older groups out, or the recording is younger than `duration`).
///
/// Add it to a writer with `AssetWriter.add(_:)` before `startWriting()`; call
/// `save(to:)` from any thread, as often as wanted.
public final class ReplayBuffer: PacketSink, Sendable {
    /// How much of the recording is kept.
    public let duration: MediaTime
    /// The most bytes of packets kept; older groups of pictures go first past it (the
    /// newest group is always kept, so the buffer can exceed it by the group being filled).
    public let memoryLimit: Int

    struct State {
        var packets: [EncodedPacket] = []
        var bytes = 0
        var streams: [StreamParameters]?
        var hasVideo = true
        var taken = false
    }
    let state = Locked(State())

    /// A buffer of the last `duration` (positive), holding at most `memoryLimit` bytes of
    /// packets (default 512 MB).
    public init(duration: MediaTime, memoryLimit: Int = 512_000_000) throws(SwiftRecordError) {
        guard duration.isNumeric, duration > .zero, memoryLimit > 0 else {
            throw SwiftRecordError(.invalidArgument, operation: "ReplayBuffer",
                                   message: "the duration (\(duration)) and memory limit (\(memoryLimit)) must be positive")
        }
        self.duration = duration
        self.memoryLimit = memoryLimit
    }

    /// Media time held now, from the first key frame to the newest packet, in seconds.
    public var bufferedSeconds: Double {
        state.withLock { s in ReplayBuffer.span(s.packets, video: s.hasVideo) }.map { Double($0) / 1e6 } ?? 0
    }
    /// Bytes of packets held now.
    public var bufferedBytes: Int { state[\.bytes] }

    func claim() -> Bool {
        state.withLock { s in
            defer { s.taken = true }
            return !s.taken
        }
    }

    func start(streams: [StreamParameters]) {
        state.withLock { s in
            s.streams = streams
            s.hasVideo = streams.contains { $0.isVideo }
        }
    }

    /// Whether `p` can start a clip: a video key frame (any packet without video).
    private static func startsClip(_ p: EncodedPacket, video: Bool) -> Bool { video ? p.isVideo && p.isKey : true }

    /// Microseconds from the first clip start to the newest packet of the kind that cuts.
    private static func span(_ packets: [EncodedPacket], video: Bool) -> Int64? {
        guard let first = packets.first(where: { startsClip($0, video: video) }),
              let last = packets.last(where: { $0.isVideo == video }) else { return nil }
        return max(0, last.ptsMicroseconds - first.ptsMicroseconds)
    }

    func offer(_ packet: EncodedPacket) {
        let limit = duration.convertScale(1_000_000).value
        state.withLock { s in
            s.packets.append(packet)
            s.bytes += packet.data.count
            // Drop the oldest group while what follows it still covers the duration (or
            // the memory is over its limit): the buffer keeps starting on a key frame.
            while let first = s.packets.firstIndex(where: { ReplayBuffer.startsClip($0, video: s.hasVideo) }),
                  let next = s.packets[(first + 1)...].firstIndex(where: { ReplayBuffer.startsClip($0, video: s.hasVideo) }) {
                let newest = s.packets.last { $0.isVideo == s.hasVideo }?.ptsMicroseconds ?? 0
                let enough = newest - s.packets[next].ptsMicroseconds >= limit
                guard enough || s.bytes > memoryLimit else { break }
                // Sound is cut at the new first picture's time, not where it sits in the queue
                // (a video encoder hands its frames over later than an audio encoder).
                let cut = s.packets[next].ptsMicroseconds
                s.packets = s.packets.enumerated().filter { i, p in
                    p.isVideo ? i >= next : (s.hasVideo ? p.ptsMicroseconds >= cut : i >= next)
                }.map(\.element)
                s.bytes = s.packets.reduce(0) { $0 + $1.data.count }
            }
        }
    }

    /// Writes what the buffer holds to `url` (the container from its extension: .mp4,
    /// .mov, .mkv), times starting at 0 on the first key frame; returns the clip's length.
    /// Runs on the caller's thread (a few hundred milliseconds for 30 s of 1080p); the
    /// recording goes on meanwhile. A file at `url` is never replaced.
    @discardableResult
    public func save(to url: URL) throws(SwiftRecordError) -> MediaTime {
        let (packets, streams, video) = state.withLock { s in (s.packets, s.streams, s.hasVideo) }
        guard let streams, let start = packets.first(where: { ReplayBuffer.startsClip($0, video: video) }) else {
            throw SwiftRecordError(.invalidState, operation: "ReplayBuffer.save",
                                   message: "nothing to save yet; the buffer fills once the writer has started and the first key frame is encoded")
        }
        let origin = start.ptsMicroseconds
        var started = false
        var clip = packets.filter { p in
            if p.isVideo && p.isKey && p.ptsMicroseconds >= origin { started = true }
            return p.isVideo ? started : p.ptsMicroseconds >= origin
        }
        if video {
            // The newest frames may be a reordered group not yet complete (a P frame out, the
            // B frames before it still in the encoder): end where every picture is there.
            var last = clip.lastIndex(where: \.isVideo)
            while let l = last, !ReplayBuffer.isComplete(clip[...l].filter(\.isVideo).map(\.ptsMicroseconds)) {
                clip.remove(at: l)
                last = clip[..<l].lastIndex(where: \.isVideo)
            }
            // The sound ends with the pictures (it is encoded sooner: more of it is queued).
            let end = clip.filter(\.isVideo).map { $0.ptsMicroseconds + $0.durationMicroseconds }.max() ?? origin
            clip.removeAll { !$0.isVideo && $0.ptsMicroseconds >= end }
        }
        clip = clip.map { $0.shifted(byMicroseconds: origin) }
        try ReplayClipWriter.write(clip, streams: streams, to: url)
        let end = clip.filter { $0.isVideo == video }.map { $0.ptsMicroseconds + $0.durationMicroseconds }.max() ?? 0
        return MediaTime(value: end, timescale: 1_000_000)
    }

    /// Whether presentation times `pts` have no hole: no gap over 1.5 times the usual one.
    private static func isComplete(_ pts: [Int64]) -> Bool {
        let sorted = pts.sorted()
        let gaps = zip(sorted.dropFirst(), sorted).map { $0 - $1 }.sorted()
        guard let usual = gaps.isEmpty ? nil : gaps[gaps.count / 2] else { return true }
        return gaps.last.map { $0 * 2 <= usual * 3 } ?? true
    }
}

import Foundation

/// The last seconds of a recording, kept in memory as encoded packets (no second encode),
/// saved to a file on demand while the recording goes on: the replay buffer of OBS and
/// gpu-screen-recorder's `-r`.
///
/// Packets are evicted a whole group of pictures at a time, so the buffer always starts on
/// a key frame of the first video track: a saved clip starts on one, its sound cut at the
/// same time; every other video track (a camera's) starts at its own first key frame from
/// there (its encoder's groups need not line up with the first's), and the clip lasts
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

    /// A kept packet: its description (timestamps, kind; no bytes) and its place in arrival order.
    struct Kept: Sendable {
        let index: Int
        var packet: EncodedPacket
        let size: Int
    }

    struct State {
        /// In arrival order (`index` increasing); `places[i]` is where `packets[i]`'s bytes are.
        var packets: [Kept] = []
        var places: [(pointer: UnsafeMutableRawPointer, serial: Int)] = []
        var nextIndex = 0
        /// The bytes, in memory-mapped chunks given back as the oldest packets go: what the
        /// buffer holds is what the process grows by, not heap it leaves fragmented.
        var store: PacketBytes
        var streams: [StreamParameters]?
        var hasVideo = true
        /// The video track whose key frames cut the buffer: the first one.
        var cutTrack = 0
        var taken = false
        var bytes: Int { store.mapped }
    }
    let state: Locked<State>

    /// A buffer of the last `duration` (positive), holding at most `memoryLimit` bytes of
    /// packets (default 512 MB).
    public init(duration: MediaTime, memoryLimit: Int = 512_000_000) throws(SwiftRecordError) {
        guard duration.isNumeric, duration > .zero, memoryLimit > 0 else {
            throw SwiftRecordError(.invalidArgument, operation: "ReplayBuffer",
                                   message: "the duration (\(duration)) and memory limit (\(memoryLimit)) must be positive")
        }
        self.duration = duration
        self.memoryLimit = memoryLimit
        state = Locked(State(store: PacketBytes(chunkSize: min(256 << 10, max(4096, memoryLimit / 16)))))
    }

    /// Media time held now, from the first key frame to the newest packet, in seconds.
    public var bufferedSeconds: Double {
        state.withLock { s in ReplayBuffer.span(s.packets, video: s.hasVideo, cut: s.cutTrack) }.map { Double($0) / 1e6 } ?? 0
    }
    /// Bytes of memory the packets held now take (whole chunks of mapped memory).
    public var bufferedBytes: Int { state.withLock { $0.bytes } }

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
            s.cutTrack = streams.firstIndex { $0.isVideo } ?? 0
        }
    }

    /// Whether `p` can start a clip: a key frame of the video track `cut` (any packet without video).
    private static func startsClip(_ p: EncodedPacket, video: Bool, cut: Int) -> Bool { video ? p.isVideo && p.isKey && p.track == cut : true }

    /// Whether `p` is of the kind that cuts: the first video track's (any packet without video).
    private static func cuts(_ p: EncodedPacket, video: Bool, cut: Int) -> Bool { video ? p.isVideo && p.track == cut : !p.isVideo }

    /// Microseconds from the first clip start to the newest packet of the kind that cuts.
    private static func span(_ packets: [Kept], video: Bool, cut: Int) -> Int64? {
        guard let first = packets.first(where: { startsClip($0.packet, video: video, cut: cut) })?.packet,
              let last = packets.last(where: { cuts($0.packet, video: video, cut: cut) })?.packet else { return nil }
        return max(0, last.ptsMicroseconds - first.ptsMicroseconds)
    }

    func offer(_ packet: EncodedPacket) {
        let limit = duration.convertScale(1_000_000).value
        state.withLock { s in
            guard let stored = packet.data.withUnsafeBytes({ s.store.store($0) }) else {
                // No memory to be had: start again from the next key frame.
                s.packets.removeAll()
                s.places.removeAll()
                s.store.releaseAll()
                return
            }
            s.packets.append(Kept(index: s.nextIndex, packet: packet.withoutData(), size: packet.data.count))
            s.places.append(stored)
            s.nextIndex += 1
            // Drop the oldest group while what follows it still covers the duration (or
            // the memory is over its limit): the buffer keeps starting on a key frame.
            let (video, track) = (s.hasVideo, s.cutTrack)
            while let first = s.packets.firstIndex(where: { ReplayBuffer.startsClip($0.packet, video: video, cut: track) }),
                  let next = s.packets[(first + 1)...].firstIndex(where: { ReplayBuffer.startsClip($0.packet, video: video, cut: track) }) {
                let newest = s.packets.last { ReplayBuffer.cuts($0.packet, video: video, cut: track) }?.packet.ptsMicroseconds ?? 0
                let enough = newest - s.packets[next].packet.ptsMicroseconds >= limit
                guard enough || s.bytes > memoryLimit else { break }
                // Sound and the other video tracks are cut at the new first picture's time,
                // not where they sit in the queue (a video encoder hands its frames over later
                // than an audio encoder); `save` starts each other video track at its own key frame.
                let cut = s.packets[next].packet.ptsMicroseconds
                let keep = s.packets.indices.filter { i in
                    let p = s.packets[i].packet
                    return !video ? i >= next : (p.isVideo && p.track == track ? i >= next : p.ptsMicroseconds >= cut)
                }
                s.packets = keep.map { s.packets[$0] }
                s.places = keep.map { s.places[$0] }
                if let oldest = s.places.map(\.serial).min() { s.store.release(before: oldest) } else { s.store.releaseAll() }
            }
        }
    }

    /// The bytes of the packet that arrived `index`-th, or nil once the buffer dropped it.
    private func bytes(of index: Int) -> [UInt8]? {
        state.withLock { s -> [UInt8]? in
            var lo = 0, hi = s.packets.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if s.packets[mid].index < index { lo = mid + 1 } else { hi = mid }
            }
            guard lo < s.packets.count, s.packets[lo].index == index else { return nil }
            return Array(UnsafeRawBufferPointer(start: s.places[lo].pointer, count: s.packets[lo].size))
        }
    }

    /// Writes what the buffer holds to `url` (the container from its extension: .mp4,
    /// .mov, .mkv), times starting at 0 on the first key frame; returns the clip's length.
    /// Runs on the caller's thread (a few hundred milliseconds for 30 s of 1080p); the
    /// recording goes on meanwhile. A file at `url` is never replaced.
    @discardableResult
    public func save(to url: URL) throws(SwiftRecordError) -> MediaTime {
        let (kept, streams, video, track) = state.withLock { s in (s.packets, s.streams, s.hasVideo, s.cutTrack) }
        let packets = kept.map(\.packet)
        guard let streams, let start = packets.first(where: { ReplayBuffer.startsClip($0, video: video, cut: track) }) else {
            throw SwiftRecordError(.invalidState, operation: "ReplayBuffer.save",
                                   message: "nothing to save yet; the buffer fills once the writer has started and the first key frame is encoded")
        }
        let origin = start.ptsMicroseconds
        // Every video track from its own first key frame at or after the origin (in decode
        // order): a clip's tracks each start decodable.
        var started = Set<Int>()
        var clip = kept.filter { k in
            let p = k.packet
            if p.isVideo && p.isKey && p.ptsMicroseconds >= origin { started.insert(p.track) }
            return p.isVideo ? started.contains(p.track) : p.ptsMicroseconds >= origin
        }
        if video {
            // The newest frames may be a reordered group not yet complete (a P frame out, the
            // B frames before it still in the encoder): each track ends where every picture is there.
            ReplayBuffer.trimToComplete(&clip, track: track)
            // The other tracks, the sound included, end with the first track's pictures (the
            // sound is encoded sooner: more of it is queued).
            let end = clip.filter { $0.packet.track == track }.map { $0.packet.ptsMicroseconds + $0.packet.durationMicroseconds }.max() ?? origin
            for other in Set(clip.filter { $0.packet.isVideo && $0.packet.track != track }.map(\.packet.track)) {
                while let l = clip.lastIndex(where: { $0.packet.track == other }),
                      clip.contains(where: { $0.packet.track == other && $0.packet.ptsMicroseconds >= end }) {
                    clip.remove(at: l)
                }
                ReplayBuffer.trimToComplete(&clip, track: other)
            }
            clip.removeAll { !$0.packet.isVideo && $0.packet.ptsMicroseconds >= end }
        }
        for i in clip.indices { clip[i].packet = clip[i].packet.shifted(byMicroseconds: origin) }
        // The bytes are fetched one packet at a time while writing: no second copy of the
        // whole buffer. Packets go only from the oldest end, which the clip has passed by
        // then, unless writing is slower than the recording's key-frame interval.
        try ReplayClipWriter.write(clip.map(\.packet), streams: streams, to: url) { (i) throws(SwiftRecordError) -> [UInt8] in
            guard let data = bytes(of: clip[i].index) else {
                throw SwiftRecordError(.io, operation: "ReplayBuffer.save",
                                       message: "the buffer moved on while the clip was written (writing is too slow); try again")
            }
            return data
        }
        let end = clip.filter { ReplayBuffer.cuts($0.packet, video: video, cut: track) }.map { $0.packet.ptsMicroseconds + $0.packet.durationMicroseconds }.max() ?? 0
        return MediaTime(value: end, timescale: 1_000_000)
    }

    /// Drops `track`'s newest packets (decode order) until its pictures have no hole.
    private static func trimToComplete(_ clip: inout [Kept], track: Int) {
        var last = clip.lastIndex { $0.packet.track == track }
        while let l = last, !isComplete(clip[...l].filter { $0.packet.track == track }.map(\.packet.ptsMicroseconds)) {
            clip.remove(at: l)
            last = clip[..<l].lastIndex { $0.packet.track == track }
        }
    }

    /// Whether presentation times `pts` have no hole: no gap over 1.5 times the usual one.
    private static func isComplete(_ pts: [Int64]) -> Bool {
        let sorted = pts.sorted()
        let gaps = zip(sorted.dropFirst(), sorted).map { $0 - $1 }.sorted()
        guard let usual = gaps.isEmpty ? nil : gaps[gaps.count / 2] else { return true }
        return gaps.last.map { $0 * 2 <= usual * 3 } ?? true
    }
}

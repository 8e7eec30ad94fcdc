import DequeModule

/// A live output's bounded queue of encoded packets and its drop rules (OBS's, for a
/// congested or lost connection):
///
/// - Past `limit` of queued media, every queued video frame that is not a key frame is
///   dropped, and later ones are dropped until the next key frame: whole frames, so the
///   stream stays decodable. Audio and key frames are never dropped for congestion.
/// - Past `hardLimit` (only audio and key frames left, and still growing), the queue is
///   emptied and the stream resumes at the next key frame: memory stays bounded whatever
///   the network does.
/// - While the output is not connected nothing is queued; after a reconnect the stream
///   starts at a key frame.
struct LiveQueue {
    private(set) var packets: Deque<EncodedPacket> = []
    /// Drop video until a key frame comes (after drops, at the start, after a reconnect).
    private(set) var awaitingKeyFrame = true
    var limitMicroseconds: Int64 = 700_000
    var hardLimitMicroseconds: Int64 = 10_000_000

    /// What `push` dropped.
    struct Drops: Equatable {
        var videoFrames = 0
        var audioPackets = 0
    }

    /// Media time queued, in microseconds: between the oldest and the newest queued video
    /// frame (audio's when there is no video). Per track, since a video encoder hands over
    /// its frames later than an audio encoder does, and the two never line up in the queue.
    var queuedMicroseconds: Int64 {
        let video = packets.contains { $0.isVideo }
        guard let first = packets.first(where: { $0.isVideo == video }),
              let last = packets.last(where: { $0.isVideo == video }) else { return 0 }
        return max(0, last.dtsMicroseconds - first.dtsMicroseconds)
    }

    var isEmpty: Bool { packets.isEmpty }

    /// Whether `packet` can be queued without passing the limit (an offline writer waits
    /// until it can).
    func hasRoom(for packet: EncodedPacket) -> Bool {
        guard let first = packets.first(where: { $0.isVideo == packet.isVideo }) else { return true }
        return packet.dtsMicroseconds - first.dtsMicroseconds <= limitMicroseconds
    }

    /// Queues `packet` (or drops it by the rules above); `connected` false drops it.
    mutating func push(_ packet: EncodedPacket, connected: Bool) -> Drops {
        var drops = Drops()
        guard connected else {
            awaitingKeyFrame = true
            if packet.isVideo { drops.videoFrames += 1 } else { drops.audioPackets += 1 }
            return drops
        }
        if packet.isVideo {
            if awaitingKeyFrame && !packet.isKey {
                drops.videoFrames += 1
                return drops
            }
            if packet.isKey { awaitingKeyFrame = false }
        }
        packets.append(packet)
        if queuedMicroseconds > limitMicroseconds {
            let before = packets.count
            packets.removeAll { $0.isVideo && !$0.isKey }
            drops.videoFrames += before - packets.count
            awaitingKeyFrame = true
        }
        if queuedMicroseconds > hardLimitMicroseconds {
            for p in packets { if p.isVideo { drops.videoFrames += 1 } else { drops.audioPackets += 1 } }
            packets.removeAll()
            awaitingKeyFrame = true
        }
        return drops
    }

    mutating func pop() -> EncodedPacket? {
        packets.popFirst()
    }

    /// Empties the queue (the connection was lost); what it held counts as dropped.
    mutating func clear() -> Drops {
        var drops = Drops()
        for p in packets { if p.isVideo { drops.videoFrames += 1 } else { drops.audioPackets += 1 } }
        packets.removeAll()
        awaitingKeyFrame = true
        return drops
    }
}

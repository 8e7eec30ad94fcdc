/// What a live output has done so far: what it sent, what it dropped and why, and its
/// outages. Read it any time from `LiveOutput.statistics`.
public struct LiveOutputStatistics: Sendable, Codable, Equatable {
    /// Packets (video frames and audio packets) written to the connection.
    public var packetsSent = 0
    /// Video frames written to the connection.
    public var videoFramesSent = 0
    /// Bytes of media written to the connection.
    public var bytesSent: Int64 = 0
    /// Non-key video frames dropped because the queue held more than its limit (congestion),
    /// or while waiting for a key frame after such a drop.
    public var videoFramesDropped = 0
    /// Video frames and audio packets that could not be sent while the output was
    /// disconnected (an outage), or emptied from the queue when the connection was lost.
    public var videoFramesLost = 0
    public var audioPacketsLost = 0
    /// Of `videoFramesLost`, the frames written to a connection that was then lost without
    /// their delivery being sure (SRT: those its send buffer could still hold unacknowledged
    /// when the loss was found); not counted in `videoFramesSent`. Some may have arrived.
    public var videoFramesUnconfirmed = 0
    /// Connections lost while streaming.
    public var outages = 0
    /// Successful reconnects after an outage.
    public var reconnects = 0
    /// Connection attempts that failed during outages.
    public var failedReconnectAttempts = 0
    /// Total time without a connection after the first one, in seconds.
    public var outageSeconds: Double = 0
    /// Media time waiting in the queue now, and the most it held, in milliseconds.
    public var queuedMilliseconds = 0
    public var maxQueuedMilliseconds = 0

    public init() {}

    /// What a lost connection had taken but may not have delivered: lost, not sent.
    mutating func countUnconfirmed(_ unconfirmed: (videoFrames: Int, audioPackets: Int, bytes: Int64)) {
        videoFramesSent -= unconfirmed.videoFrames
        packetsSent -= unconfirmed.videoFrames + unconfirmed.audioPackets
        bytesSent -= unconfirmed.bytes
        videoFramesLost += unconfirmed.videoFrames
        audioPacketsLost += unconfirmed.audioPackets
        videoFramesUnconfirmed += unconfirmed.videoFrames
    }
}

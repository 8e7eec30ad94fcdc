import Foundation

/// A network (or HLS) destination that an `AssetWriter` streams to while it writes its
/// file, from the same encode: `rtmp://` and `rtmps://` (FLV, as nginx-rtmp, YouTube and
/// Twitch take it), `srt://host:port` (MPEG-TS over SRT, caller mode) and a path ending in
/// `.m3u8` (HLS: a playlist and segments of about `segmentDuration` each, cut at key frames).
///
/// Each live output is its own fault domain: a thread of its own and a bounded queue of
/// encoded packets. A stalled or lost connection never slows the capture or touches the
/// file; under congestion (more than `maximumQueueDuration` queued) whole non-key video
/// frames are dropped, never audio or key frames; after a lost connection the output
/// reconnects (first after `reconnectDelay`, then ×1.5 each time, with jitter) and resumes
/// at a key frame. Everything is counted in `statistics`.
///
/// The first connection is made by ``AssetWriter/startWriting()``, which throws when it
/// fails (a server that refuses the publish, a wrong address) within ``connectTimeout``.
/// ``AssetWriter/finishWriting()`` finishes the file whatever the stream does; read
/// ``status`` and ``error`` afterwards to know whether the stream completed.
public final class LiveOutput: PacketSink, Sendable {
    /// The protocol and container an output uses, from its URL.
    public enum Kind: String, Sendable {
        /// RTMP or RTMPS: FLV with H.264 and AAC.
        case rtmp
        /// SRT: MPEG-TS.
        case srt
        /// HLS to local files: an `.m3u8` playlist and its segments.
        case hls
    }

    /// Where the output is.
    public enum Status: String, Sendable {
        case idle, connecting, streaming, reconnecting, completed, failed
    }

    /// The destination, as given.
    public let url: URL
    public let kind: Kind

    struct Settings {
        var maximumQueueDuration = MediaTime(value: 700, timescale: 1000)
        var connectTimeout = MediaTime(seconds: 5)
        var reconnectDelay = MediaTime(seconds: 2)
        var reconnects = true
        var segmentDuration = MediaTime(seconds: 2)
        var fragmentedMP4Segments = false
        var playlistLength = 0
        var overwritesExistingFiles = false
    }

    struct State {
        var settings = Settings()
        var status = Status.idle
        var error: SwiftRecordError?
        var statistics = LiveOutputStatistics()
        var queue = LiveQueue()
        /// The writer's tracks this output carries, to its own stream indices: every video
        /// track and the first audio track (RTMP/FLV takes one; a mix is one track).
        var carried: [Int: Int] = [:]
        var started = false
        /// The writer's pictures and sound come as fast as they are taken (no input expects
        /// data in real time): a full queue then holds the encoder back instead of dropping,
        /// as a file would, since nothing is lost by waiting.
        var waitsForRoom = false
        var finishRequested = false
        var cancelRequested = false
        /// CLOCK_MONOTONIC deadlines (ns): for the blocking call in progress, and for the
        /// whole output once finishing started. Past either, FFmpeg's call is interrupted.
        var ioDeadline: Int64?
        var finishDeadline: Int64?
        var threadRunning = false
        var threadDone = false
    }

    let state = Locked(State())

    /// An output for `url`: `rtmp://…`, `rtmps://…`, `srt://host:port` or a `.m3u8` file.
    /// Throws `.invalidArgument` for anything else.
    public init(url: URL) throws(SwiftRecordError) {
        guard let kind = LiveOutput.kind(of: url) else {
            throw SwiftRecordError(.invalidArgument, operation: "LiveOutput",
                                   message: "'\(LiveOutput.displayName(url))' is not a live output; expected rtmp://host/app/key, rtmps://…, srt://host:port or a path ending in .m3u8")
        }
        if kind != .hls && (url.host ?? "").isEmpty {
            throw SwiftRecordError(.invalidArgument, operation: "LiveOutput",
                                   message: "'\(LiveOutput.displayName(url))' has no host; expected e.g. \(kind == .rtmp ? "rtmp://host/app/key" : "srt://host:port")")
        }
        self.url = url
        self.kind = kind
    }

    /// The kind of live output `url` names, or nil when it names none (a file).
    public static func kind(of url: URL) -> Kind? {
        switch url.scheme?.lowercased() {
        case "rtmp", "rtmps": return .rtmp
        case "srt": return .srt
        case "file", nil: return url.pathExtension.lowercased() == "m3u8" ? .hls : nil
        default: return nil
        }
    }

    /// The URL for messages and statistics, with an RTMP stream key (the last path
    /// component) and any query hidden: keys are secrets.
    public var displayName: String { LiveOutput.displayName(url) }

    static func displayName(_ url: URL) -> String {
        guard let scheme = url.scheme?.lowercased(), scheme != "file" else { return url.path }
        var text = "\(scheme)://\(url.host ?? "")" + (url.port.map { ":\($0)" } ?? "")
        var parts = url.path.split(separator: "/").map(String.init)
        if scheme.hasPrefix("rtmp"), parts.count >= 2 { parts[parts.count - 1] = "<key>" }
        if !parts.isEmpty { text += "/" + parts.joined(separator: "/") }
        return text
    }

    /// Where the output is now.
    public var status: Status { state[\.status] }
    /// Why the output failed, when `status == .failed`.
    public var error: SwiftRecordError? { state[\.error] }
    /// What it sent, dropped and lost so far.
    public var statistics: LiveOutputStatistics { state[\.statistics] }

    /// Media queued past this and non-key video frames are dropped (default 700 ms).
    public var maximumQueueDuration: MediaTime {
        get { state[\.settings.maximumQueueDuration] }
        set { state[\.settings.maximumQueueDuration] = newValue }
    }
    /// How long a connection attempt, or one blocked write, may take (default 5 s).
    public var connectTimeout: MediaTime {
        get { state[\.settings.connectTimeout] }
        set { state[\.settings.connectTimeout] = newValue }
    }
    /// The wait before the first reconnect (default 2 s; each next one ×1.5, at most 30 s).
    public var reconnectDelay: MediaTime {
        get { state[\.settings.reconnectDelay] }
        set { state[\.settings.reconnectDelay] = newValue }
    }
    /// Reconnect after a lost connection (default on; HLS never reconnects).
    public var reconnects: Bool {
        get { state[\.settings.reconnects] }
        set { state[\.settings.reconnects] = newValue }
    }
    /// HLS: the target length of a segment (default 2 s); segments are cut at the first
    /// key frame after it, so set the key-frame interval to match.
    public var segmentDuration: MediaTime {
        get { state[\.settings.segmentDuration] }
        set { state[\.settings.segmentDuration] = newValue }
    }
    /// HLS: how many segments the playlist lists, a rolling window whose older segments are
    /// removed (the output created them; one past the list stays for players still reading
    /// it); 0 (the default) lists them all and removes none.
    public var playlistLength: Int {
        get { state[\.settings.playlistLength] }
        set { state[\.settings.playlistLength] = max(0, newValue) }
    }
    /// HLS: replace an existing playlist, segment or init segment of this output's names
    /// (only regular files; a symbolic link is followed). Off by default: as for the
    /// writer's file, a file already at any of these names is refused, before anything is
    /// written. Segments that replaced a file are never removed by a rolling playlist.
    public var overwritesExistingFiles: Bool {
        get { state[\.settings.overwritesExistingFiles] }
        set { state[\.settings.overwritesExistingFiles] = newValue }
    }
    /// HLS: fragmented MP4 segments (`.m4s` and an init segment) instead of MPEG-TS.
    public var usesFragmentedMP4Segments: Bool {
        get { state[\.settings.fragmentedMP4Segments] }
        set { state[\.settings.fragmentedMP4Segments] = newValue }
    }

    // MARK: - Used by the writer

    /// Marks the output as taken by a writer; false when it already is.
    func claim() -> Bool {
        state.withLock { s in
            if s.started { return false }
            s.started = true
            return true
        }
    }

    /// Offers one encoded packet (pipeline thread): queued, or dropped by the queue's rules;
    /// for an offline writer (`waitsForRoom`) it first waits until the queue has room.
    func offer(_ packet: EncodedPacket) {
        if state[\.waitsForRoom] {
            // Offline: wait until the worker has sent enough (or the output ended or failed).
            _ = state.wait { s -> Bool? in
                s.carried[packet.track] == nil || s.queue.hasRoom(for: packet) || s.status != .streaming
                    || s.finishRequested || s.cancelRequested ? true : nil
            }
        }
        state.withLockNotifying { s in
            guard !s.finishRequested, !s.cancelRequested, s.status != .failed else { return }
            guard let stream = s.carried[packet.track] else { return }
            var packet = packet
            packet.track = stream
            let drops = s.queue.push(packet, connected: s.status == .streaming)
            if s.status == .streaming {
                s.statistics.videoFramesDropped += drops.videoFrames
            } else {
                s.statistics.videoFramesLost += drops.videoFrames
            }
            s.statistics.audioPacketsLost += drops.audioPackets
            s.statistics.queuedMilliseconds = Int(s.queue.queuedMicroseconds / 1000)
            s.statistics.maxQueuedMilliseconds = max(s.statistics.maxQueuedMilliseconds, s.statistics.queuedMilliseconds)
        }
    }

    /// The output must be done `seconds` from now: what it still sends then is abandoned
    /// (a stalled network). Set when the writer starts finishing, while the encoders'
    /// last packets still come.
    func setDeadline(within seconds: Double) {
        let deadline = MonotonicClock.nanoseconds() + Int64(seconds * 1e9)
        state.withLockNotifying { s in s.finishDeadline = min(s.finishDeadline ?? deadline, deadline) }
    }

    /// No more packets come: send what is queued, then close the stream.
    func requestFinish() {
        state.withLockNotifying { s in s.finishRequested = true }
    }

    /// How long the live outputs may take, once the encoders are drained at the end, to send
    /// what they still queue: a stalled network is abandoned then, so a stop never waits
    /// on it for longer.
    static let finishSeconds = 1.0

    /// The encoders are drained: send what is queued, by `finishSeconds`
    /// from now, then close (the file is being closed meanwhile).
    func endOfStream() {
        setDeadline(within: LiveOutput.finishSeconds)
        requestFinish()
    }

    /// Returns once the output's thread is done (at once if it never started).
    func waitUntilDone() {
        _ = state.wait { s in s.threadDone || !s.threadRunning ? true : nil }
    }

    /// Stops at once, sending nothing more (a connect in progress gives up). Returns once
    /// the output's thread is done.
    package func cancel() {
        state.withLockNotifying { s in s.cancelRequested = true }
        waitUntilDone()
    }
}

import SwiftRecord
import SwiftRecordBroadcastWire

/// One of a broadcast sender's two sound types (app or microphone) as a live audio source:
/// `--audio broadcast:app`, `--audio broadcast:mic`. It reads from the connection the
/// broadcast picture source opened (open that first), delivering each chunk when it falls
/// due, stamped as the pictures are: the sender's time plus the source's delay.
public final class BroadcastAudioSource: AudioCaptureSource {
    public static let name = "broadcast"
    public let identifier = BroadcastAudioSource.name
    public let format: AudioFormat
    public let isLive = true
    private let host: BroadcastHost
    private let kind: BroadcastMessage.SoundKind
    private let delay: Int64
    private let interrupted = Locked(false)
    private let ended = Locked<String?>(nil)

    /// The sound of type `device` (`app` or `mic`) of the broadcast `BroadcastSource` opened
    /// (`name`, or the only one open when nil).
    public init(device: String?, name: String? = nil, delay: MediaTime = MediaTime(value: 1, timescale: 10)) throws(SwiftRecordError) {
        switch device ?? "app" {
        case "app": kind = .app
        case "mic", "microphone": kind = .microphone
        default:
            throw SwiftRecordError(.invalidArgument, operation: "audio",
                                   message: "broadcast sound '\(device ?? "")'; expected broadcast:app or broadcast:mic")
        }
        let hosts = BroadcastHosts.shared.withLock { $0 }
        guard let host = name.flatMap({ hosts[$0] }) ?? (hosts.count == 1 ? hosts.values.first : nil),
              let hello = host.state.withLock({ $0.hello }) else {
            throw SwiftRecordError(.invalidArgument, operation: "audio",
                                   message: "--audio broadcast:\(device ?? "app") needs the pictures of one broadcast: --source broadcast:NAME")
        }
        self.host = host
        self.delay = delay.convertScale(1_000_000_000).value
        format = AudioFormat(sampleType: .s16, sampleRate: hello.sampleRate, channelLayout: ChannelLayout(channelCount: hello.channels))
    }

    public var captureDescription: String? { "the broadcast's \(kind == .app ? "app" : "microphone") sound, \(format)" }
    public var endReason: String? { ended.withLock { $0 } }

    public func start() throws {}
    public func stop() {}
    public func interrupt() {
        interrupted.withLock { $0 = true }
        host.state.notifyAll()
    }

    public func nextChunk() throws -> CapturedAudio? {
        let delay = self.delay
        while true {
            if interrupted.withLock({ $0 }) { return nil }
            // Wakes at least every 100 ms to see an interrupt; a chunk is handed on when due.
            let now = MonotonicClock.nanoseconds()
            let deadline = host.state.withLock { s in
                min(now + 100_000_000, max(now, s.sound[kind]?.first.map { $0.time + delay } ?? now + 100_000_000))
            }
            let next = host.state.wait(untilNanoseconds: deadline) { s -> Next? in
                let t = MonotonicClock.nanoseconds()
                if let chunk = s.sound[kind]?.first {
                    guard chunk.time + delay <= t || chunk.time + delay > t + 10_000_000_000 else { return nil }
                    s.sound[kind]?.removeFirst()
                    return .chunk(chunk)
                }
                if s.ended || s.stopped { return .end }
                return t >= deadline ? .wait : nil
            } ?? .wait
            switch next {
            case .wait: continue
            case .end:
                ended.withLock { $0 = "the broadcast's sender ended" }
                return nil
            case .chunk(let chunk):
                let samples = try AudioSampleBuffer(format: format, presentationTimeStamp: MediaTime(value: chunk.time + delay, timescale: 1_000_000_000),
                                                    planes: [chunk.samples])
                return CapturedAudio(samples: samples)
            }
        }
    }

    private enum Next {
        case chunk(BroadcastMessage.Sound)
        case end
        case wait
    }
}

import Foundation

/// Samples from an audio source with when they were captured.
public struct CapturedAudio: Sendable {
    /// The samples; their `presentationTimeStamp` is the capture time of the first sample:
    /// on the host clock (`MonotonicClock`) for a live source, the sample position
    /// (count / rate) for an offline one.
    public let samples: AudioSampleBuffer
    /// Samples were lost before these (an overrun, a suspended device): the time jumps.
    public let followsGap: Bool

    public init(samples: AudioSampleBuffer, followsGap: Bool = false) {
        self.samples = samples
        self.followsGap = followsGap
    }
}

/// Something that produces PCM audio: a PulseAudio device, the synthetic tone, a WAV file.
///
/// Sources are pulled: `nextChunk()` blocks until the next samples are there (a live
/// source) or reads them at once (an offline source), and returns nil at the end. A
/// live source that loses its device ends (nil) and says why in `endReason`; the
/// recording's video goes on.
///
/// The counterpart of an audio `AVCaptureDevice` (or ReplayKit's audio sample buffers).
public protocol AudioCaptureSource: AnyObject, Sendable {
    /// The registry name: `pulse`, `synthetic`, `wav`.
    var identifier: String { get }
    /// The format of the samples delivered.
    var format: AudioFormat { get }
    /// True when samples arrive as they are captured, stamped on the host clock.
    var isLive: Bool { get }
    /// What is recorded ("monitor of sink 'alsa_output…'"), for announcing; nil when the name says it.
    var captureDescription: String? { get }
    /// Acquires the device or file. Errors name the cause.
    func start() throws
    /// The next samples, or nil at the end of the source (or after `interrupt()`).
    func nextChunk() throws -> CapturedAudio?
    /// Makes a waiting `nextChunk()` return nil soon; safe from any thread.
    func interrupt()
    /// Releases what `start()` acquired. Safe to call more than once.
    func stop()
    /// Why a live source ended before it was asked to (the device went away); nil otherwise.
    var endReason: String? { get }
}

extension AudioCaptureSource {
    public var captureDescription: String? { nil }
    public var endReason: String? { nil }
}

/// An audio device a source can record from.
public struct AudioDeviceInfo: Sendable, Hashable {
    /// The name to give after `pulse:` (`--audio pulse:NAME`).
    public let name: String
    public let description: String
    /// Records what a sink plays ("what you hear").
    public let isMonitor: Bool
    /// The server's default for its kind (the default source, or the default sink's monitor).
    public let isDefault: Bool

    public init(name: String, description: String, isMonitor: Bool, isDefault: Bool) {
        (self.name, self.description, self.isMonitor, self.isDefault) = (name, description, isMonitor, isDefault)
    }
}

/// What an audio source is made from.
public struct AudioSourceOptions: Sendable {
    /// The device to open (`pulse:DEVICE`); nil for the source's default.
    public var device: String?
    /// Preferred sample rate and layout, where the source can deliver any.
    public var sampleRate: Int
    public var channelLayout: ChannelLayout
    /// The video frame rate: the synthetic tone clicks where the synthetic scene flashes.
    public var frameRate: Rational
    /// Pace an offline source by the clock, as if it were live.
    public var realtime: Bool
    public var clock: any HostClock
    /// A live synthetic source's sample clock runs this much fast (0.001) or slow (-0.001)
    /// against the host clock: a device whose crystal is off, for testing drift correction.
    public var clockSkew: Double
    /// A file to read (`wav`).
    public var path: String?
    /// Shared with the live synthetic scene: where its flashes are (`synthetic`).
    public var flashClock: SyntheticFlashClock?

    public init(device: String? = nil, sampleRate: Int = 48_000, channelLayout: ChannelLayout = .stereo,
                frameRate: Rational = Rational(30)!, realtime: Bool = false, clock: any HostClock = MonotonicClock(),
                clockSkew: Double = 0, path: String? = nil, flashClock: SyntheticFlashClock? = nil) {
        self.device = device
        self.sampleRate = sampleRate
        self.channelLayout = channelLayout
        self.frameRate = frameRate
        self.realtime = realtime
        self.clock = clock
        self.clockSkew = clockSkew
        self.path = path
        self.flashClock = flashClock
    }
}

/// Chooses audio sources by name, as `CaptureSourceRegistry` does for video. The core
/// registers `synthetic` and `wav`; `SwiftRecordPulse` registers `pulse`.
public final class AudioSourceRegistry: Sendable {
    public typealias Factory = @Sendable (AudioSourceOptions) throws -> any AudioCaptureSource
    public typealias DeviceLister = @Sendable () throws -> [AudioDeviceInfo]

    public struct Entry: Sendable {
        public let name: String
        public let summary: String
        let factory: Factory
        /// Lists the devices, throwing when the server cannot be reached; nil for sources without devices.
        public let listDevices: DeviceLister?
    }

    public static let shared: AudioSourceRegistry = {
        let r = AudioSourceRegistry()
        r.register(name: SyntheticAudioSource.name, summary: "a 440 Hz tone with a click wherever the synthetic scene flashes") {
            try SyntheticAudioSource(options: $0)
        }
        r.register(name: WAVFileSource.name, summary: "a WAV file, or raw PCM (s16le at the given rate and layout); for convert") {
            try WAVFileSource(options: $0)
        }
        return r
    }()

    private let entries = Locked<[String: Entry]>([:])

    public init() {}

    public func register(name: String, summary: String, listDevices: DeviceLister? = nil, factory: @escaping Factory) {
        entries.withLock { $0[name] = Entry(name: name, summary: summary, factory: factory, listDevices: listDevices) }
    }

    public var names: [String] { entries.withLock { $0.keys.sorted() } }
    public func entry(named name: String) -> Entry? { entries.withLock { $0[name] } }

    public func makeSource(named name: String, options: AudioSourceOptions) throws -> any AudioCaptureSource {
        guard let entry = entry(named: name) else {
            throw SwiftRecordError(.invalidArgument, operation: "audio",
                                   message: "unknown audio source '\(name)'; expected one of: \(names.joined(separator: ", "))")
        }
        return try entry.factory(options)
    }
}

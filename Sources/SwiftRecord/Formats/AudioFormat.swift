/// How PCM samples are laid out: sample type, interleaving, rate and channels
/// (`AudioStreamBasicDescription` on Apple platforms).
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// The type of one sample.
    public enum SampleType: String, Sendable, CaseIterable {
        /// Signed 16-bit integers.
        case s16
        /// Signed 32-bit integers.
        case s32
        /// 32-bit floats, nominally in -1…1.
        case f32

        /// Bytes one sample of one channel takes.
        public var bytesPerSample: Int {
            switch self {
            case .s16: return 2
            case .s32, .f32: return 4
            }
        }
    }

    /// The type of each sample.
    public var sampleType: SampleType
    /// One buffer per channel (planar) instead of one with the channels interleaved.
    public var isPlanar: Bool
    /// Samples per second per channel.
    public var sampleRate: Int
    /// The channels and the speakers they are for.
    public var channelLayout: ChannelLayout

    /// A format: interleaved signed 16-bit stereo at 48 kHz unless told otherwise.
    public init(sampleType: SampleType = .s16, isPlanar: Bool = false, sampleRate: Int = 48_000,
                channelLayout: ChannelLayout = .stereo) {
        self.sampleType = sampleType
        self.isPlanar = isPlanar
        self.sampleRate = sampleRate
        self.channelLayout = channelLayout
    }

    /// How many channels the layout has.
    public var channelCount: Int { channelLayout.channelCount }
    /// Buffers a sample buffer of this format has: one per channel when planar, else one.
    public var planeCount: Int { isPlanar ? channelCount : 1 }
    /// Bytes one sample frame (all channels) takes in one plane.
    public var bytesPerFrameInPlane: Int { isPlanar ? sampleType.bytesPerSample : sampleType.bytesPerSample * channelCount }

    public var description: String {
        "\(sampleType)\(isPlanar ? " planar" : "") \(sampleRate) Hz \(channelLayout)"
    }

    /// Throws unless the format can be converted: a rate of 1 Hz to 768 kHz and 1 to 64 channels.
    public func validate(_ operation: String) throws(SwiftRecordError) {
        guard (1...768_000).contains(sampleRate) else {
            throw SwiftRecordError(.invalidArgument, operation: operation,
                                   message: "sample rate \(sampleRate) Hz is out of range; expected 1…768000")
        }
        guard (1...64).contains(channelCount) else {
            throw SwiftRecordError(.invalidArgument, operation: operation,
                                   message: "\(channelCount) channels is out of range; expected 1…64")
        }
    }
}

/// Which speakers the channels are for, by FFmpeg's layout names ("mono", "stereo",
/// "5.1", …) or a bare count (`AudioChannelLayout` on Apple platforms).
public struct ChannelLayout: Sendable, Hashable, CustomStringConvertible {
    /// FFmpeg's name of the layout, or "N channels" for an unordered count.
    public let name: String
    public let channelCount: Int

    public static let mono = ChannelLayout(name: "mono", channelCount: 1)
    public static let stereo = ChannelLayout(name: "stereo", channelCount: 2)
    public static let surround51 = ChannelLayout(name: "5.1", channelCount: 6)

    /// The usual layout for `channelCount` channels: mono, stereo, 2.1, quad, 5.0, 5.1,
    /// 6.1, 7.1; otherwise the channels are unordered.
    public init(channelCount: Int) {
        let names = [1: "mono", 2: "stereo", 3: "2.1", 4: "quad", 5: "5.0", 6: "5.1", 7: "6.1", 8: "7.1"]
        self.init(name: names[channelCount] ?? "\(channelCount) channels", channelCount: channelCount)
    }

    /// A layout by FFmpeg's name ("mono", "stereo", "5.1(side)", …); nil if FFmpeg does not know it.
    public init?(name: String) {
        guard let count = ChannelLayout.channelCount(ofLayoutNamed: name) else { return nil }
        self.init(name: name, channelCount: count)
    }

    private init(name: String, channelCount: Int) {
        self.name = name
        self.channelCount = channelCount
    }

    public var description: String { name }
}

/// An audio codec an `AssetWriterInput` can encode to (`AVFormatIDKey`).
public enum AudioCodec: String, Sendable, CaseIterable, CustomStringConvertible {
    /// AAC-LC through FFmpeg's native encoder (`kAudioFormatMPEG4AAC`). MP4, MOV, MKV.
    case aac
    /// Opus through libopus (`kAudioFormatOpus`). WebM, MKV, MP4; always 48 kHz.
    case opus

    public var description: String { rawValue }

    var encoderNames: [String] {
        switch self {
        case .aac: return ["aac"]
        case .opus: return ["libopus", "opus"]
        }
    }
}

/// What an audio input encodes to (`outputSettings` with `AVFormatIDKey`,
/// `AVSampleRateKey`, `AVNumberOfChannelsKey`, `AVEncoderBitRateKey`).
///
/// Samples appended in any PCM format, rate and layout are converted to this one
/// (libswresample, in the writer's pipeline).
public struct AudioSettings: Sendable, Hashable {
    /// The codec: AAC or Opus (`AVFormatIDKey`).
    public var codec: AudioCodec
    /// Samples per second. Opus encodes at 48 kHz only (8, 12, 16 and 24 kHz are taken too).
    public var sampleRate: Int
    /// The channels encoded (`AVNumberOfChannelsKey`).
    public var channelLayout: ChannelLayout
    /// Bits per second for all channels together.
    public var bitRate: Int

    /// Settings: AAC at 48 kHz, stereo, 128 kbit/s unless told otherwise.
    public init(codec: AudioCodec = .aac, sampleRate: Int = 48_000, channelLayout: ChannelLayout = .stereo,
                bitRate: Int = 128_000) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channelLayout = channelLayout
        self.bitRate = bitRate
    }

    /// The settings' format for validation (the sample type is the encoder's business).
    var format: AudioFormat { AudioFormat(sampleRate: sampleRate, channelLayout: channelLayout) }
}

extension FileType {
    /// The sound codec a file of this type gets when none is chosen: AAC, Opus in WebM.
    public var defaultAudioCodec: AudioCodec { supports(AudioCodec.aac) ? .aac : .opus }

    /// Whether this container can carry `codec`.
    public func supports(_ codec: AudioCodec) -> Bool {
        switch (self, codec) {
        case (.webm, .aac): return false
        case (.mov, .opus): return false
        default: return true
        }
    }
}

extension FileType {
    /// The refusal of `codec` in this container (`record`, `convert`): the codecs of its kind
    /// this container carries, and the containers that carry `codec`.
    package func refusal(of codec: VideoCodec, operation: String) -> SwiftRecordError {
        refusal(of: "\(codec)", option: "--codec", fitting: VideoCodec.allCases.filter(supports).map(\.rawValue),
                carriers: FileType.allCases.filter { $0.supports(codec) }, kind: .unsupported, operation: operation)
    }

    package func refusal(of codec: AudioCodec, operation: String) -> SwiftRecordError {
        refusal(of: "\(codec) sound", option: "--audio-codec", fitting: AudioCodec.allCases.filter(supports).map(\.rawValue),
                carriers: FileType.allCases.filter { $0.supports(codec) }, kind: .invalidArgument, operation: operation)
    }

    private func refusal(of what: String, option: String, fitting: [String], carriers: [FileType],
                         kind: SwiftRecordError.Kind, operation: String) -> SwiftRecordError {
        SwiftRecordError(kind, operation: operation,
                         message: "a .\(self) file cannot carry \(what); \(option) \(fitting.joined(separator: " or ")) for .\(self), or name the output "
                             + carriers.map { ".\($0)" }.joined(separator: " or "))
    }
}

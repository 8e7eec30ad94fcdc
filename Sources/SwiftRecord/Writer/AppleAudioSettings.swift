import Foundation

// Apple's names for audio output settings (`AVFormatIDKey`, …), so an
// `AVAssetWriterInput(mediaType: .audio, outputSettings: [...])` ports as written.

/// The audio format: `kAudioFormatMPEG4AAC` or `kAudioFormatOpus` (Core Audio's four-character codes).
public let AVFormatIDKey = "AVFormatIDKey"
/// Samples per second.
public let AVSampleRateKey = "AVSampleRateKey"
/// Channels (1 mono, 2 stereo, 6 for 5.1).
public let AVNumberOfChannelsKey = "AVNumberOfChannelsKey"
/// Bits per second for all channels together.
public let AVEncoderBitRateKey = "AVEncoderBitRateKey"

/// Core Audio's `'aac '`: AAC-LC.
public let kAudioFormatMPEG4AAC: UInt32 = 0x6161_6320
/// Core Audio's `'opus'`.
public let kAudioFormatOpus: UInt32 = 0x6F70_7573

extension AudioSettings {
    /// Settings from an output-settings dictionary with Apple's keys:
    ///
    /// ```swift
    /// let settings = try AudioSettings(outputSettings: [
    ///     AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 48_000,
    ///     AVNumberOfChannelsKey: 2, AVEncoderBitRateKey: 128_000,
    /// ])
    /// ```
    ///
    /// Every key is optional (AAC, 48 kHz, stereo, 128 kbit/s otherwise). Any other key, or
    /// a value of the wrong kind, throws `.invalidArgument` naming the key and what it takes.
    public init(outputSettings dictionary: [String: Any]) throws(SwiftRecordError) {
        var keys = try AppleSettingsReader(dictionary, what: "outputSettings", known: AppleSettingsReader.audioKeys)
        self.init()
        if let id = try keys.take(AVFormatIDKey, AppleSettingsReader.integer) {
            switch UInt32(truncatingIfNeeded: id) {
            case kAudioFormatMPEG4AAC: codec = .aac
            case kAudioFormatOpus: codec = .opus
            default: throw AppleSettingsReader.bad(AVFormatIDKey, "\(id)", "kAudioFormatMPEG4AAC or kAudioFormatOpus")
            }
        }
        if let rate = try keys.take(AVSampleRateKey, AppleSettingsReader.integer) {
            guard (8_000...192_000).contains(rate) else { throw AppleSettingsReader.bad(AVSampleRateKey, "\(rate)", "a rate from 8000 to 192000 Hz") }
            sampleRate = rate
        }
        if let channels = try keys.take(AVNumberOfChannelsKey, AppleSettingsReader.integer) {
            guard (1...8).contains(channels) else { throw AppleSettingsReader.bad(AVNumberOfChannelsKey, "\(channels)", "1 to 8 channels") }
            channelLayout = ChannelLayout(channelCount: channels)
        }
        if let bps = try keys.take(AVEncoderBitRateKey, AppleSettingsReader.integer) {
            guard bps > 0 else { throw AppleSettingsReader.bad(AVEncoderBitRateKey, "\(bps)", "a positive bit rate in bits per second") }
            bitRate = bps
        }
    }
}

extension AppleSettingsReader {
    static let audioKeys: [(name: String, value: String)] = [
        ("AVFormatIDKey", AVFormatIDKey), ("AVSampleRateKey", AVSampleRateKey),
        ("AVNumberOfChannelsKey", AVNumberOfChannelsKey), ("AVEncoderBitRateKey", AVEncoderBitRateKey),
    ]
}

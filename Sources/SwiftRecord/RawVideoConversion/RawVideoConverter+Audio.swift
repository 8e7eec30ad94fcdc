import Foundation

extension RawVideoConverter {
    /// Sound to put beside the converted pictures (`convert in.yuv --audio in.wav`).
    public struct AudioOptions: Sendable {
        /// A WAV file (16/24/32-bit integer or 32-bit float PCM), or raw interleaved s16le
        /// PCM (any other name) at `rawSampleRate` and `rawChannelLayout`.
        public var path: String
        /// nil: AAC, or Opus in WebM.
        public var codec: AudioCodec?
        /// Bits per second; nil: 128 kbit/s.
        public var bitRate: Int?
        /// Raw PCM only: its rate and layout (a WAV header says its own). The track keeps
        /// the file's rate and layout (Opus: 48 kHz unless the file is at one Opus takes).
        public var rawSampleRate: Int
        public var rawChannelLayout: ChannelLayout

        public init(path: String, codec: AudioCodec? = nil, bitRate: Int? = nil, rawSampleRate: Int = 48_000,
                    rawChannelLayout: ChannelLayout = .stereo) {
            self.path = path
            self.codec = codec
            self.bitRate = bitRate
            self.rawSampleRate = rawSampleRate
            self.rawChannelLayout = rawChannelLayout
        }
    }

    /// The sound file's format and the track it becomes (`Options.audio`), nil without sound.
    public var audioTrack: (file: AudioFormat, settings: AudioSettings)? {
        audioPlan.map { ($0.source.format, $0.settings) }
    }

    /// The sound file and its track, checked before anything is written.
    struct AudioPlan: Sendable {
        let source: WAVFileSource
        let settings: AudioSettings
    }

    /// Opens the sound file and settles its track: a file that is not PCM, the output
    /// itself, or a codec the container cannot carry is an error here, before the output exists.
    static func makeAudioPlan(_ options: AudioOptions?, videoInput: String, fileType: FileType,
                              outputPath: String) throws(SwiftRecordError) -> AudioPlan? {
        guard let options else { return nil }
        let video = videoInput == "-" ? FileIdentity(descriptor: STDIN_FILENO) : FileIdentity(path: videoInput)
        let sound = options.path == "-" ? FileIdentity(descriptor: STDIN_FILENO) : FileIdentity(path: options.path)
        if let sound {
            guard sound != video else {
                throw SwiftRecordError(.invalidArgument, operation: "--audio",
                                       message: "'\(options.path)' is the video input too; expected a separate .wav or raw PCM file")
            }
            let output = try OutputFile(outputPath, what: "output", overwrite: true)
            try OutputFile.checkDistinct(outputs: [("output", output)], inputs: [("--audio file", sound)])
        }
        let source: WAVFileSource
        do {
            source = try WAVFileSource(options: AudioSourceOptions(sampleRate: options.rawSampleRate, channelLayout: options.rawChannelLayout,
                                                                   path: options.path))
        } catch let e as SwiftRecordError {
            throw e
        } catch {
            throw SwiftRecordError(.io, operation: "--audio", message: "\(options.path): \(error)")
        }
        let codec = options.codec ?? (fileType == .webm ? .opus : .aac)
        guard fileType.supports(codec) else {
            throw SwiftRecordError(.unsupported, operation: "--audio-codec",
                                   message: "a .\(fileType) file cannot carry \(codec); use "
                                   + AudioCodec.allCases.filter(fileType.supports).map(\.rawValue).joined(separator: " or "))
        }
        var settings = AudioSettings(codec: codec, sampleRate: source.format.sampleRate, channelLayout: source.format.channelLayout,
                                     bitRate: options.bitRate ?? 128_000)
        // Opus encodes at 48 kHz (and 8/12/16/24); anything else is resampled to 48 kHz.
        if codec == .opus, ![8_000, 12_000, 16_000, 24_000, 48_000].contains(settings.sampleRate) {
            settings.sampleRate = 48_000
        }
        // An encoder codes whole frames (AAC 1024 samples, Opus 20 ms): less sound than one
        // becomes no track at all, so say so rather than write a file without it.
        let frameSeconds = codec == .opus ? 0.02 : 1024 / Double(settings.sampleRate)
        let needed = Int((frameSeconds * Double(source.format.sampleRate)).rounded(.up))
        if let count = source.sampleFrameCount, count < needed {
            throw SwiftRecordError(.invalidData, operation: "--audio",
                                   message: "'\(options.path)' holds \(count) sample frame\(count == 1 ? "" : "s") of \(source.format) sound, too short for one whole \(codec) frame; expected at least \(needed) (\(String(format: "%.1f", frameSeconds * 1000)) ms)")
        }
        return AudioPlan(source: source, settings: settings)
    }

    /// Feeds the sound file to its input as the pictures advance, so the tracks interleave,
    /// and ends it exactly where the pictures end. Used on the conversion thread only.
    struct AudioFeed {
        let source: WAVFileSource
        let input: AssetWriterInput
        private var pending: CapturedAudio?
        private var ended = false
        private(set) var seconds = 0.0

        init(source: WAVFileSource, input: AssetWriterInput) {
            self.source = source
            self.input = input
        }

        /// Appends the sound before `time` (the last buffer cut there).
        mutating func append(upTo time: MediaTime) throws(SwiftRecordError) {
            while !ended {
                if pending == nil {
                    do {
                        pending = try source.nextChunk()
                    } catch let e as SwiftRecordError {
                        throw e
                    } catch {
                        throw SwiftRecordError(.io, operation: "--audio", message: "\(source.path): \(error)")
                    }
                }
                guard let chunk = pending else {
                    ended = true
                    return
                }
                let samples = chunk.samples
                let start = samples.presentationTimeStamp
                guard start < time else { return }
                let rate = Double(samples.format.sampleRate)
                let fits = Int(((time - start).seconds * rate).rounded())
                let taken = fits < samples.frameCount ? samples.slice(0..<fits) : samples
                pending = fits < samples.frameCount ? CapturedAudio(samples: samples.slice(fits..<samples.frameCount), followsGap: false) : nil
                if taken.frameCount > 0 {
                    try input.append(taken)
                    seconds += Double(taken.frameCount) / rate
                }
            }
        }
    }
}

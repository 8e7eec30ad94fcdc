import Foundation

/// PCM from a WAV file (16-, 24- or 32-bit integer, 32-bit float; `WAVE_FORMAT_EXTENSIBLE`
/// too), or raw interleaved 16-bit little-endian PCM at the options' rate and layout
/// (any other extension). Offline: read as fast as it is asked, stamped by sample count.
/// For `convert in.yuv --audio in.wav`. Not shared between threads while reading.
public final class WAVFileSource: AudioCaptureSource {
    public static let name = "wav"
    public let identifier = WAVFileSource.name
    public let format: AudioFormat
    public let isLive = false
    public let path: String
    /// Bytes per sample in the file (24-bit samples are widened to 32 on reading).
    private let fileSampleBytes: Int
    /// Bytes of sample data the header announces; nil when it does not say (a stream).
    private let dataLength: Int64?

    /// The stream is reached only through the lock.
    private struct State {
        var stream: RawInputStream?
        var framesRead = 0
        var bytesLeft: Int64?
        var interrupted = false
    }
    private let state: Locked<State>

    /// Sample frames per buffer: 10 ms at 48 kHz.
    static let chunkFrames = 480

    public init(options: AudioSourceOptions) throws {
        guard let path = options.path else {
            throw SwiftRecordError(.invalidArgument, operation: "wav", message: "no file given; expected the path of a .wav file or raw PCM")
        }
        self.path = path
        let stream = try RawInputStream(path: path, expected: "an audio file (.wav, or raw PCM)")
        if path.lowercased().hasSuffix(".wav") {
            let header = try WAVHeader(reading: stream, name: path)
            format = header.format
            fileSampleBytes = header.bytesPerSample
            dataLength = header.dataLength
        } else {
            format = AudioFormat(sampleType: .s16, sampleRate: options.sampleRate, channelLayout: options.channelLayout)
            fileSampleBytes = 2
            dataLength = stream.length
        }
        try format.validate("wav \(path)")
        state = Locked(State(stream: stream, bytesLeft: dataLength))
    }

    public var captureDescription: String? { "\(path) (\(format))" }

    /// Sample frames in the file, when its length is known (a regular file, or a WAV
    /// header that says).
    public var sampleFrameCount: Int? {
        dataLength.map { Int($0 / Int64(fileSampleBytes * format.channelCount)) }
    }

    public func start() throws {}

    public func stop() {
        state.withLock { s in
            s.stream?.close()
            s.stream = nil
        }
    }

    public func interrupt() {
        state.withLock { $0.interrupted = true }
    }

    public func nextChunk() throws -> CapturedAudio? {
        try state.withLock { s throws(SwiftRecordError) -> CapturedAudio? in
            guard !s.interrupted, let stream = s.stream else { return nil }
            let frameBytes = fileSampleBytes * format.channelCount
            var want = WAVFileSource.chunkFrames * frameBytes
            if let left = s.bytesLeft { want = Int(min(Int64(want), left)) }
            guard want >= frameBytes else { return nil }
            var bytes = try stream.readBytes(want)
            let got = bytes.count
            let frames = got / frameBytes
            guard frames > 0 else { return nil }
            s.bytesLeft = s.bytesLeft.map { $0 - Int64(got) }
            bytes.removeLast(bytes.count - frames * frameBytes)
            if fileSampleBytes == 3 { bytes = WAVFileSource.widen24(bytes) }
            let time = MediaTime(value: Int64(s.framesRead), timescale: Int32(clamping: format.sampleRate))
            s.framesRead += frames
            return CapturedAudio(samples: try AudioSampleBuffer(format: format, presentationTimeStamp: time, planes: [bytes]))
        }
    }

    /// 24-bit little-endian samples as 32-bit ones (the low byte zero).
    static func widen24(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: bytes.count / 3 * 4)
        for i in 0..<(bytes.count / 3) {
            out[i * 4 + 1] = bytes[i * 3]
            out[i * 4 + 2] = bytes[i * 3 + 1]
            out[i * 4 + 3] = bytes[i * 3 + 2]
        }
        return out
    }
}

extension RawInputStream {
    /// Up to `count` bytes: fewer only at the end of the input.
    func readBytes(_ count: Int) throws(SwiftRecordError) -> [UInt8] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, count), alignment: 8)
        defer { buffer.deallocate() }
        var got = 0
        while got < count {
            let n = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[got..<count]))
            if n == 0 { break }
            got += n
        }
        return Array(buffer[0..<got])
    }
}

/// The `fmt ` and `data` chunks of a RIFF/WAVE header.
struct WAVHeader {
    let format: AudioFormat
    let bytesPerSample: Int
    let dataLength: Int64?

    init(reading stream: RawInputStream, name: String) throws(SwiftRecordError) {
        func fail(_ what: String) -> SwiftRecordError {
            SwiftRecordError(.invalidData, operation: "wav \(name)", message: what)
        }
        func read(_ n: Int) throws(SwiftRecordError) -> [UInt8] {
            let bytes = try stream.readBytes(n)
            if bytes.count < n { throw fail("the file ends inside its header (\(bytes.count) of \(n) bytes); expected a complete RIFF/WAVE header") }
            return bytes
        }
        func u16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        func u32(_ b: [UInt8], _ i: Int) -> Int { u16(b, i) | u16(b, i + 2) << 16 }
        let riff = try read(12)
        guard riff[0..<4].elementsEqual("RIFF".utf8), riff[8..<12].elementsEqual("WAVE".utf8) else {
            throw fail("not a WAV file (no RIFF/WAVE signature); expected a .wav file, or raw PCM under another extension")
        }
        var fmt: (code: Int, channels: Int, rate: Int, bits: Int)?
        while true {
            let head = try read(8)
            let id = String(decoding: head[0..<4], as: UTF8.self)
            let size = u32(head, 4)
            if id == "data" {
                guard let f = fmt else { throw fail("the data chunk comes before a 'fmt ' chunk") }
                let type: AudioFormat.SampleType
                switch (f.code, f.bits) {
                case (1, 16): type = .s16
                case (1, 24), (1, 32): type = .s32
                case (3, 32): type = .f32
                default:
                    throw fail("\(f.bits)-bit \(f.code == 3 ? "float" : f.code == 1 ? "integer" : "format \(f.code)") samples are not supported; expected 16-, 24- or 32-bit integer or 32-bit float PCM")
                }
                guard f.channels > 0, f.rate > 0 else { throw fail("\(f.channels) channels at \(f.rate) Hz; expected at least one channel and a positive rate") }
                format = AudioFormat(sampleType: type, sampleRate: f.rate, channelLayout: ChannelLayout(channelCount: f.channels))
                bytesPerSample = f.bits / 8
                // 0 and 0xFFFFFFFF: a header written before the length was known (a stream).
                dataLength = size == 0 || size == 0xFFFF_FFFF ? nil : Int64(size)
                return
            }
            guard size < 1 << 20 else { throw fail("chunk '\(id)' claims \(size) bytes; expected a 'fmt ' or 'data' chunk") }
            let body = try read(size + (size & 1))
            if id == "fmt " {
                guard size >= 16 else { throw fail("the 'fmt ' chunk is \(size) bytes; expected at least 16") }
                var code = u16(body, 0)
                if code == 0xFFFE, size >= 26 { code = u16(body, 24) }  // WAVE_FORMAT_EXTENSIBLE: the sub-format
                fmt = (code, u16(body, 2), u32(body, 4), u16(body, 14))
            }
        }
    }
}

import CoreMedia
import Foundation
import SwiftRecord

/// Where and how an `SCRecordingOutput` writes.
public final class SCRecordingOutputConfiguration: @unchecked Sendable {
    // @unchecked: a plain settings object, read once when the recording starts.
    public var outputURL: URL?
    /// `.mov` (the default), `.mp4`, `.mkv`, `.webm` (`AVFileType`).
    public var outputFileType: FileType = .mov
    /// `.h264` (the default) or `.hevc` (`AVVideoCodecType`); also `.vp9`, `.av1`.
    public var videoCodecType: VideoCodec = .h264

    public init() {}
}

/// Hears how a recording output went.
public protocol SCRecordingOutputDelegate: AnyObject {
    func recordingOutputDidStartRecording(_ recordingOutput: SCRecordingOutput)
    func recordingOutput(_ recordingOutput: SCRecordingOutput, didFailWithError error: any Error)
    func recordingOutputDidFinishRecording(_ recordingOutput: SCRecordingOutput)
}

extension SCRecordingOutputDelegate {
    public func recordingOutputDidStartRecording(_ recordingOutput: SCRecordingOutput) {}
    public func recordingOutput(_ recordingOutput: SCRecordingOutput, didFailWithError error: any Error) {}
    public func recordingOutputDidFinishRecording(_ recordingOutput: SCRecordingOutput) {}
}

/// A stream's pictures written to a file by the library's writer (`AssetWriter`), at a
/// variable frame rate: each new picture at its capture time, idle ones left out (the
/// picture before lasts), the file ending at the stop. The stream's sound, when it
/// captures any, goes to AAC tracks of its own ("Audio" for `capturesAudio`, then
/// "Microphone"), from the first picture on, on the pictures' clock.
public final class SCRecordingOutput: Sendable {
    private struct State {
        var writer: AssetWriter?
        var adaptor: PixelBufferAdaptor?
        /// The sound the stream captures, set until the file opens; then its tracks.
        var soundFormats: [SCStreamOutputType: AudioFormat] = [:]
        /// The stream's highest frame rate (the key-frame interval's and the encoder's hint).
        var frameRate = Rational(60)!
        var soundInputs: [SCStreamOutputType: AssetWriterInput] = [:]
        var first: MediaTime?
        var last: MediaTime?
        var failed = false
        var done = false
        /// Pictures the encoder had no room for (left out, the one before lasting longer).
        var skipped = 0
    }
    let configuration: SCRecordingOutputConfiguration
    private let delegate: RecordingDelegateHandle
    private let state = Locked(State())

    public init(configuration: SCRecordingOutputConfiguration, delegate: any SCRecordingOutputDelegate) {
        (self.configuration, self.delegate) = (configuration, RecordingDelegateHandle(object: delegate))
    }

    /// From the first picture to the last written.
    public var recordedDuration: CMTime {
        state.withLock { s in s.first.flatMap { f in s.last.map { $0 - f } } ?? .zero }
    }

    /// The file's size so far, in bytes.
    public var recordedFileSize: Int {
        guard let url = configuration.outputURL,
              let size = try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber else { return 0 }
        return size.intValue
    }

    /// Pictures left out because the encoder was behind (not Apple's).
    public var skippedFrameCount: Int { state.withLock { $0.skipped } }

    /// Checked when the output is added: a file to write to.
    func validate() throws {
        guard configuration.outputURL != nil else {
            throw SwiftRecordError(.invalidArgument, operation: "SCRecordingOutput", message: "the configuration has no outputURL")
        }
    }

    /// The sound the stream captures (tracks for it) and its frame rate, used when the file
    /// opens (at the first picture).
    func prepare(sound formats: [SCStreamOutputType: AudioFormat], frameRate: Rational) {
        state.withLock { s in if s.writer == nil { (s.soundFormats, s.frameRate) = (formats, frameRate) } }
    }

    /// Writes a sound chunk to its track, once the file is open (sound before the first
    /// picture is left out, as the file starts there); waits while the track's queue is full.
    func appendSound(_ samples: AudioSampleBuffer, of type: SCStreamOutputType) async {
        guard let input = state.withLock({ s in s.failed || s.done ? nil : s.soundInputs[type] }) else { return }
        do {
            try await input.append(samples)
        } catch {
            // A file being finished takes no more; any other refusal fails the recording.
            let report = state.withLock { s -> Bool in
                guard !s.done, !s.failed else { return false }
                s.failed = true
                s.writer?.cancelWriting()
                return true
            }
            if report { delegate.object?.recordingOutput(self, didFailWithError: error) }
        }
    }

    /// Writes `picture` (a new one; idle ones are not passed), opening the file on the first.
    func append(_ picture: PixelBuffer, at time: MediaTime) {
        let outcome = state.withLock { s -> (started: Bool, error: SwiftRecordError?) in
            guard !s.failed, !s.done else { return (false, nil) }
            do throws(SwiftRecordError) {
                var started = false
                if s.writer == nil {
                    let (writer, adaptor, sound) = try open(width: picture.width, height: picture.height, pixelFormat: picture.pixelFormat,
                                                            sound: s.soundFormats, frameRate: s.frameRate)
                    try writer.startSession(atSourceTime: time)
                    (s.writer, s.adaptor, s.soundInputs, s.first, started) = (writer, adaptor, sound, time, true)
                }
                if try s.adaptor?.appendIfReady(picture, withPresentationTime: time) == true { s.last = time } else { s.skipped += 1 }
                return (started, nil)
            } catch {
                s.failed = true
                s.writer?.cancelWriting()
                return (false, error)
            }
        }
        if outcome.started { delegate.object?.recordingOutputDidStartRecording(self) }
        if let error = outcome.error { delegate.object?.recordingOutput(self, didFailWithError: error) }
    }

    private func open(width: Int, height: Int, pixelFormat: PixelFormat, sound: [SCStreamOutputType: AudioFormat], frameRate: Rational)
        throws(SwiftRecordError) -> (AssetWriter, PixelBufferAdaptor, [SCStreamOutputType: AssetWriterInput]) {
        guard let url = configuration.outputURL else {
            throw SwiftRecordError(.invalidArgument, operation: "SCRecordingOutput", message: "the configuration has no outputURL")
        }
        let writer = AssetWriter(outputURL: url, fileType: configuration.outputFileType)
        let input = AssetWriterInput(outputSettings: SCRecordingOutput.videoSettings(configuration.videoCodecType, width: width, height: height, frameRate: frameRate))
        input.expectsMediaDataInRealTime = true
        try writer.add(input)
        let adaptor = PixelBufferAdaptor(assetWriterInput: input,
                                         sourcePixelBufferAttributes: PixelBufferAttributes(width: width, height: height, pixelFormat: pixelFormat))
        var inputs: [SCStreamOutputType: AssetWriterInput] = [:]
        for type in [SCStreamOutputType.audio, .microphone] {
            guard let format = sound[type] else { continue }
            let track = AssetWriterInput(outputSettings: AudioSettings(codec: .aac, sampleRate: format.sampleRate, channelLayout: format.channelLayout))
            track.expectsMediaDataInRealTime = true
            track.metadata.title = type == .audio ? "Audio" : "Microphone"
            try writer.add(track)
            inputs[type] = track
        }
        try writer.startWriting()
        return (writer, adaptor, inputs)
    }

    /// swift-record's command line's defaults for a screen at a content-driven rate: 2 Mbit/s,
    /// the veryfast preset, H.264's High profile, a key frame at least every 2 s, no frame
    /// reordering (frames far apart keep their durations).
    static func videoSettings(_ codec: VideoCodec, width: Int, height: Int, frameRate: Rational) -> VideoSettings {
        var settings = VideoSettings(codec: codec, width: width, height: height, rateControl: .averageBitRate(2_000_000),
                                     maxKeyFrameInterval: max(1, Int((2 * frameRate.doubleValue).rounded())), expectedSourceFrameRate: frameRate,
                                     profile: codec == .h264 ? "high" : nil, preset: "veryfast")
        settings.maxKeyFrameIntervalDuration = 2
        settings.encoderOptions["bf"] = "0"
        return settings
    }

    /// Ends the file at `end` (the stop) and finishes it; tells the delegate.
    func finish(at end: MediaTime) async {
        let writer = state.withLock { s -> AssetWriter? in
            guard !s.done else { return nil }
            s.done = true
            return s.failed ? nil : s.writer
        }
        guard let writer else {
            if state.withLock({ !$0.failed && $0.writer == nil }) {
                delegate.object?.recordingOutput(self, didFailWithError: SwiftRecordError(.invalidState, operation: "SCRecordingOutput",
                                                                                    message: "the stream stopped before its first picture: no file was written"))
            }
            return
        }
        do {
            if let last = state.withLock({ $0.last }) { try writer.endSession(atSourceTime: max(end, last)) }
            for input in state.withLock({ Array($0.soundInputs.values) }) { input.markAsFinished() }
            try await writer.finishWriting()
            delegate.object?.recordingOutputDidFinishRecording(self)
        } catch {
            delegate.object?.recordingOutput(self, didFailWithError: error)
        }
    }
}

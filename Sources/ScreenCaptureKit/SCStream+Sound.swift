import CoreMedia
import Foundation
import SwiftRecord
import SwiftRecordPulse

/// One of a stream's sound sources: the desktop's sound (`.audio`: the default PulseAudio
/// sink's monitor) or the microphone (`.microphone`: a PulseAudio source), stamped on the
/// host clock the pictures are stamped on.
struct StreamSound: Sendable {
    let type: SCStreamOutputType
    let source: PulseAudioSource

    /// The sound sources `c` asks for, their server and devices checked (a missing server
    /// or device throws, naming the setting, the cause and what to do): never a stream that
    /// starts without the sound it was asked for. Blocks while the server is asked.
    static func open(_ c: SCStreamConfiguration) throws(SwiftRecordError) -> [StreamSound] {
        var made: [StreamSound] = []
        var options = AudioSourceOptions(sampleRate: c.sampleRate, channelLayout: ChannelLayout(channelCount: c.channelCount))
        if c.capturesAudio {
            let source = try checked("capturesAudio", "the desktop's sound (the default PulseAudio sink's monitor)") { () throws(SwiftRecordError) in
                let source = try PulseAudioSource(options: options)
                try source.checkDevice()
                if c.excludesCurrentProcessAudio { try checkOwnSound() }
                return source
            }
            made.append(StreamSound(type: .audio, source: source))
        }
        if c.captureMicrophone {
            let device = c.microphoneCaptureDeviceID ?? "@DEFAULT_SOURCE@"
            options.device = device
            let source = try checked("captureMicrophone", "the microphone (PulseAudio source \(device))") { () throws(SwiftRecordError) in
                let source = try PulseAudioSource(options: options)
                try source.checkDevice()
                return source
            }
            made.append(StreamSound(type: .microphone, source: source))
        }
        return made
    }

    private static func checked(_ setting: String, _ what: String,
                                _ body: () throws(SwiftRecordError) -> PulseAudioSource) throws(SwiftRecordError) -> PulseAudioSource {
        do {
            return try body()
        } catch {
            throw SwiftRecordError(error.kind, operation: "SCStream.startCapture",
                                   message: "\(setting) records \(what), which failed: \(error.message); start a PulseAudio (or PipeWire-Pulse) server, name another with $PULSE_SERVER, or set \(setting) to false")
        }
    }

    /// Throws while this process plays sound: a sink's monitor would hold it
    /// (`excludesCurrentProcessAudio`).
    static func checkOwnSound() throws(SwiftRecordError) {
        let count = try PulseAudioSource.playbackStreamCount(ofProcess: getpid())
        guard count == 0 else {
            throw SwiftRecordError(.unsupported, operation: "SCStream",
                                   message: "excludesCurrentProcessAudio: this process plays \(count) PulseAudio stream\(count == 1 ? "" : "s"), and a sink's monitor mixes every stream of the sink (PulseAudio cannot leave one process out); the stream does not record sound it was told to leave out. Set excludesCurrentProcessAudio to false, or play this process's sound elsewhere")
        }
    }

    /// What each source's samples are (for a recording's tracks).
    static func formats(_ sounds: [StreamSound]) -> [SCStreamOutputType: AudioFormat] {
        Dictionary(sounds.map { ($0.type, $0.source.format) }, uniquingKeysWith: { a, _ in a })
    }
}

extension SCStream {
    /// Hands `sound`'s chunks to the outputs of its type and the recordings until the task is
    /// cancelled; a source that ends by itself (the device or server went) throws, naming why.
    func pump(_ sound: StreamSound) async throws {
        let chunks = sound.source.sounds(bufferingNewest: 64)
        for try await chunk in chunks {
            deliverSound(chunk, of: sound.type)
            for r in recordings { await r.appendSound(chunk.samples, of: sound.type) }
        }
        guard !Task.isCancelled else { return }
        throw SwiftRecordError(.io, operation: "SCStream",
                               message: "the \(sound.type == .audio ? "desktop's sound" : "microphone") ended: \(sound.source.endReason ?? "the PulseAudio source gave no more samples")")
    }

    /// Checks every second that this process still plays nothing (`excludesCurrentProcessAudio`).
    func watchOwnSound() async throws {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            guard !Task.isCancelled else { return }
            try await ThreadTask().run(name: "SCStream.excludesCurrentProcessAudio") { try StreamSound.checkOwnSound() }
        }
    }
}

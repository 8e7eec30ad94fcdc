import CoreMedia
import CoreVideo
import Foundation
import SwiftRecord
import SwiftRecordX11

/// A capture stream: the filter's content, as the configuration says, to its outputs.
///
/// Beneath it, the capture source's `frames()` sequence (the live capture loop's
/// scheduler on a thread of its own, the newest `queueDepth` pictures waiting for the
/// outputs, older ones dropped), and the sound sources' `sounds()` (see `StreamSound`),
/// all on one clock.
public final class SCStream: Sendable {
    private struct Output {
        let output: OutputHandle
        let type: SCStreamOutputType
        let queue: DispatchQueue
    }
    private struct State {
        var outputs: [Output] = []
        var recordings: [SCRecordingOutput] = []
        var task: Task<Void, Never>?
        var frames: CaptureFrames?
        /// Pictures left out because the outputs held every converted buffer, and the
        /// drops of the runs before an update.
        var heldDrops = 0
        /// What the running capture's sound sources deliver (a recording's sound tracks).
        var soundFormats: [SCStreamOutputType: AudioFormat] = [:]
        var filter: SCContentFilter
        var configuration: SCStreamConfiguration
    }
    private let delegate: StreamDelegateHandle
    private let state: Locked<State>

    public init(filter: SCContentFilter, configuration: SCStreamConfiguration, delegate: (any SCStreamDelegate)?) {
        state = Locked(State(filter: filter, configuration: configuration))
        self.delegate = StreamDelegateHandle(object: delegate)
    }

    /// Adds an output for `type`, called on `sampleHandlerQueue` (a serial queue of its own if nil).
    public func addStreamOutput(_ output: any SCStreamOutput, type: SCStreamOutputType, sampleHandlerQueue: DispatchQueue?) throws {
        let queue = sampleHandlerQueue ?? DispatchQueue(label: "SCStream.output")
        state.withLock { $0.outputs.append(Output(output: OutputHandle(object: output), type: type, queue: queue)) }
    }

    public func removeStreamOutput(_ output: any SCStreamOutput, type: SCStreamOutputType) throws {
        state.withLock { $0.outputs.removeAll { $0.output.object === output && $0.type == type } }
    }

    /// Adds a recording output: the stream's new pictures written to its file from the
    /// next picture on, finished by `stopCapture()` or `removeRecordingOutput(_:)`.
    public func addRecordingOutput(_ recordingOutput: SCRecordingOutput) throws {
        try recordingOutput.validate()
        state.withLock { s in
            recordingOutput.prepare(sound: s.soundFormats, frameRate: s.configuration.frameRate)
            s.recordings.append(recordingOutput)
        }
    }

    /// Stops the recording output and finishes its file (in the background; its delegate
    /// hears when it is done).
    public func removeRecordingOutput(_ recordingOutput: SCRecordingOutput) throws {
        let found = state.withLock { s -> Bool in
            let before = s.recordings.count
            s.recordings.removeAll { $0 === recordingOutput }
            return s.recordings.count < before
        }
        guard found else {
            throw SwiftRecordError(.invalidArgument, operation: "SCStream.removeRecordingOutput", message: "the recording output was not added to this stream")
        }
        let end = MonotonicClock().now()
        Task { await recordingOutput.finish(at: end) }
    }

    /// Pictures dropped because the outputs were `queueDepth` pictures behind, or held on to
    /// every buffer of the configured size and format (`queueDepth` + 4; Apple's stream
    /// stalls likewise while its surfaces are held).
    public var droppedFrameCount: Int { state.withLock { ($0.frames?.droppedCount ?? 0) + $0.heldDrops } }

    /// Opens the content and starts delivering; throws what the display server said.
    public func startCapture() async throws {
        guard state.withLock({ $0.task == nil }) else {
            throw SwiftRecordError(.invalidState, operation: "SCStream.startCapture", message: "the stream is already capturing; stopCapture() first")
        }
        try await run()
    }

    /// Captures with `configuration` from now on; a capturing stream restarts its grabs with
    /// it (its outputs and recordings stay; a recording's pictures keep their first size).
    public func updateConfiguration(_ streamConfig: SCStreamConfiguration) async throws {
        state.withLock { $0.configuration = streamConfig }
        try await restart()
    }

    /// Captures `contentFilter`'s content from now on, as ``updateConfiguration(_:)`` does.
    public func updateContentFilter(_ contentFilter: SCContentFilter) async throws {
        state.withLock { $0.filter = contentFilter }
        try await restart()
    }

    /// Ends the running capture (if any) without finishing the recordings, and starts anew.
    private func restart() async throws {
        guard let task = state.withLock({ s in defer { s.task = nil }; return s.task }) else { return }
        task.cancel()
        await task.value
        state.withLock { s in
            s.heldDrops += s.frames?.droppedCount ?? 0
            s.frames = nil
        }
        do {
            try await run()
        } catch {
            let end = MonotonicClock().now()
            for recording in state.withLock({ $0.recordings }) { await recording.finish(at: end) }
            throw error
        }
    }

    /// Opens the content and runs the capture task; returns at its first picture.
    private func run() async throws {
        let (filter, c) = state.withLock { ($0.filter, $0.configuration) }
        let opened = Locked<[StreamSound]>([])
        if c.capturesAudio || c.captureMicrophone {
            try await ThreadTask().run(name: "SCStream.sound") { let s = try StreamSound.open(c); opened.withLock { $0 = s } }
        }
        let sounds = opened.withLock { $0 }
        let source = try filter.makeSource(showsCursor: c.showsCursor, sourceRect: c.sourceRect, method: .damage)
        guard let (format, fullRange) = FourCC.format(c.pixelFormat) else {
            throw SwiftRecordError(.invalidArgument, operation: "SCStreamConfiguration.pixelFormat",
                                   message: "pixel format \(FourCC.name(c.pixelFormat)) is not supported; use kCVPixelFormatType_32BGRA or _420YpCbCr8Planar")
        }
        _ = fullRange
        let native = source.nativeSize
        let size = VideoSize(width: c.width > 0 ? c.width : native.width, height: c.height > 0 ? c.height : native.height)
        let converter = size == native && format == source.pixelFormat ? nil
            : try PictureConverter(from: native, source.pixelFormat, to: size, format, bufferCount: c.queueDepth + 4,
                                   placement: c.scalesToFit ? .scaled : .unscaledTopLeft)
        let frames = source.frames(frameRate: c.frameRate, bufferingNewest: c.queueDepth)
        let formats = StreamSound.formats(sounds)
        state.withLock { s in
            s.soundFormats = formats
            for r in s.recordings { r.prepare(sound: formats, frameRate: c.frameRate) }
        }
        let content = c.scalesToFit ? PixelRegion(x: 0, y: 0, width: size.width, height: size.height)
            : PixelRegion(x: 0, y: 0, width: min(native.width, size.width), height: min(native.height, size.height))
        let watchesOwnSound = c.capturesAudio && c.excludesCurrentProcessAudio
        let started = Locked<CheckedContinuation<Void, any Error>?>(nil)
        try await withCheckedThrowingContinuation { (k: CheckedContinuation<Void, any Error>) in
            started.withLock { $0 = k }
            let task = Task { [self] in
                do {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for sound in sounds { group.addTask { try await self.pump(sound) } }
                        if watchesOwnSound { group.addTask { try await self.watchOwnSound() } }
                        group.addTask {
                            var first = true
                            for try await frame in frames {
                                if first { first = false; started.withLock { $0?.resume(); $0 = nil } }
                                try self.deliver(frame, converter: converter, size: size, content: content)
                            }
                        }
                        // The first to end (a stop, or a failure) ends the others.
                        try await group.next()
                        group.cancelAll()
                    }
                    started.withLock { $0?.resume(); $0 = nil }
                } catch {
                    let k = started.withLock { k in defer { k = nil }; return k }
                    if let k { k.resume(throwing: error) } else { delegate.object?.stream(self, didStopWithError: error) }
                    // The files written so far end here, playable.
                    let end = MonotonicClock().now()
                    for recording in state.withLock({ $0.recordings }) { await recording.finish(at: end) }
                }
            }
            state.withLock { $0.task = task; $0.frames = frames }
        }
    }

    /// Stops delivering; returns once no output will be called again.
    public func stopCapture() async throws {
        let task = state.withLock { s in defer { s.task = nil }; return s.task }
        guard let task else {
            throw SwiftRecordError(.invalidState, operation: "SCStream.stopCapture", message: "the stream is not capturing")
        }
        task.cancel()
        await task.value
        let end = MonotonicClock().now()
        for recording in state.withLock({ $0.recordings }) { await recording.finish(at: end) }
        for output in state.withLock({ $0.outputs }) { output.queue.sync {} }
    }

    /// The recording outputs now.
    var recordings: [SCRecordingOutput] { state.withLock { $0.recordings } }

    /// A sound chunk to the outputs of its type, as Apple's `.audio`/`.microphone` sample buffers.
    func deliverSound(_ chunk: CapturedAudio, of type: SCStreamOutputType) {
        let outputs = state.withLock { $0.outputs.filter { $0.type == type } }
        guard !outputs.isEmpty else { return }
        let sample = CMSampleBuffer.audio(chunk.samples)
        for o in outputs {
            o.queue.async { o.output.object.stream(self, didOutputSampleBuffer: sample, of: type) }
        }
    }

    private func deliver(_ frame: CapturedFrame, converter: PictureConverter?, size: VideoSize, content: PixelRegion) throws {
        var picture = frame.pixelBuffer
        let outputs = state.withLock { $0.outputs.filter { $0.type == .screen } }
        // The file takes the source's own picture when its size is the configured one (the
        // writer converts its format, once); an idle picture adds nothing to it.
        let native = frame.pixelBuffer.width == size.width && frame.pixelBuffer.height == size.height
        if native, !frame.isUnchanged {
            for r in state.withLock({ $0.recordings }) { r.append(frame.pixelBuffer, at: frame.captureTime) }
        }
        // Pictures are converted only for outputs to see, or a recording at another size.
        if outputs.isEmpty && (native || frame.isUnchanged) { return }
        if let converter {
            do {
                picture = try converter.convert(frame.pixelBuffer)
            } catch {
                guard error.kind == .poolExhausted else { throw error }
                state.withLock { $0.heldDrops += 1 }
                return
            }
            if !native, !frame.isUnchanged {
                for r in state.withLock({ $0.recordings }) { r.append(picture, at: frame.captureTime) }
            }
        }
        let scaled = converter != nil && content.width == size.width && content.height == size.height
        let sx = scaled ? Double(size.width) / Double(frame.pixelBuffer.width) : 1
        let sy = scaled ? Double(size.height) / Double(frame.pixelBuffer.height) : 1
        let dirty = frame.dirtyRects?.map { r in
            PixelRegion(x: Int(Double(r.x) * sx), y: Int(Double(r.y) * sy), width: Int((Double(r.width) * sx).rounded(.up)), height: Int((Double(r.height) * sy).rounded(.up)))
        }
        let info = PictureCaptureInfo(isUnchanged: frame.isUnchanged, dirtyRects: dirty,
                                      contentRect: content, captureTime: frame.captureTime)
        let sample = CMSampleBuffer.video(SampleBuffer(pixelBuffer: picture, presentationTimeStamp: frame.captureTime, captureInfo: info))
        for o in outputs {
            o.queue.async { o.output.object.stream(self, didOutputSampleBuffer: sample, of: .screen) }
        }
    }
}

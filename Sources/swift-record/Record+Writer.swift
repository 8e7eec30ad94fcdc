import ArgumentParser
import Foundation
import SwiftRecord
import SwiftRecordPulse

/// The writer `Record.startWriter` started, with what goes beside it.
struct StartedWriter {
    let writer: AssetWriter
    let adaptor: PixelBufferAdaptor
    /// The second video track's (`--camera NAME` beside a screen).
    let cameraAdaptor: PixelBufferAdaptor?
    /// The main video track's encoder settings.
    let settings: VideoSettings
    let frameRateMode: FrameRateMode
    let timingLog: TimingLog?
    let clickPlayer: PulseClickPlayer?
}

extension Record {
    /// The writer for the output with every track and output of the plan, started (the
    /// live outputs connected), then the timing log and the test click player. What fails
    /// is undone: nothing is left of the file.
    func startWriter(_ plan: RecordingPlan, output: String, files: WrittenFiles, sources: OpenedSources,
                     control: RecordingControl) throws(RecordExit) -> StartedWriter {
        let capture = sources.capture, native = capture.nativeSize
        // The encoder's size: --scale, or the source's made even (the adaptor scales to it).
        let (settings, frameRateMode) = plan.videoSettings(size: scale ?? VideoSize(width: native.width + native.width % 2,
                                                                                     height: native.height + native.height % 2))
        let writer: AssetWriter
        do {
            writer = try AssetWriter(outputURL: URL(fileURLWithPath: output))
        } catch {
            throw RecordExit(error.userMessage, ExitStatus.failed)
        }
        let adaptor: PixelBufferAdaptor
        var cameraAdaptor: PixelBufferAdaptor?
        do {
            writer.overwritesExistingFile = replace.overwrite
            writer.metadata = AssetMetadata(title: "swift-record \(capture.identifier) recording", creationDate: Date())
            writer.shouldOptimizeForNetworkUse = true
            if !outputs.noFragments {
                writer.movieFragmentInterval = outputs.fragmentInterval
                writer.initialMovieFragmentInterval = min(outputs.fragmentInterval, MediaTime(seconds: 1))
            }
            let input = AssetWriterInput(outputSettings: settings)
            input.expectsMediaDataInRealTime = capture.isLive
            input.simulatedEncodeDelay = simulateEncodeDelay.map { .milliseconds($0) } // FAULT-INJECTION
            adaptor = PixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes:
                PixelBufferAttributes(width: native.width, height: native.height, pixelFormat: capture.pixelFormat))
            try writer.add(input)
            if let camera = sources.cameraTrack {
                let cameraInput = AssetWriterInput(outputSettings: plan.cameraSettings(size: camera.nativeSize, bitRate: cameraOptions.cameraBitrate ?? 1_000_000))
                cameraInput.expectsMediaDataInRealTime = true
                cameraInput.metadata = AssetMetadata(title: "Camera")
                cameraAdaptor = PixelBufferAdaptor(assetWriterInput: cameraInput, sourcePixelBufferAttributes:
                    PixelBufferAttributes(width: camera.nativeSize.width, height: camera.nativeSize.height, pixelFormat: camera.pixelFormat))
                try writer.add(cameraInput)
            }
            for live in plan.outputs.live { try writer.add(live) }
            if let buffer = try replay.makeBuffer() { try writer.add(buffer) }
            if sound.audioMix, !sources.audio.isEmpty {
                try writer.add(try sound.makeInput(for: writer.fileType, title: AudioOptions.mixTitle, mixVolumes: sources.audio.map(\.volume)))
            } else {
                for opened in sources.audio {
                    try writer.add(try sound.makeInput(for: writer.fileType, title: opened.title))
                }
            }
            // A stop while the live outputs connect cancels the connects at once.
            let live = plan.outputs.live
            control.whileStarting { for output in live { output.cancel() } }
            try writer.startWriting()
            try writer.startSession(atSourceTime: .zero)
            control.whileStarting(nil)
        } catch {
            control.whileStarting(nil)
            try checkStartUp(control) { writer.cancelWriting() }
            throw RecordExit(error.userMessage, ExitStatus.failed)
        }
        try checkStartUp(control) { writer.cancelWriting() }
        var log: TimingLog?
        if let timingLog = files.timingLog {
            do {
                log = try TimingLog(file: timingLog)
            } catch {
                writer.cancelWriting()
                throw RecordExit("--timing-log: \(error.message)", ExitStatus.failed)
            }
        }
        let clickPlayer: PulseClickPlayer?
        do { clickPlayer = try sound.startClickPlayer(flashClock: sources.flashClock, fps: plan.frameRate) } catch {
            writer.cancelWriting()
            log?.discard()
            throw RecordExit("--simulate-click-player: \((error as? SwiftRecordError)?.message ?? "\(error)")", ExitStatus.failed)
        }
        return StartedWriter(writer: writer, adaptor: adaptor, cameraAdaptor: cameraAdaptor, settings: settings,
                             frameRateMode: frameRateMode, timingLog: log, clickPlayer: clickPlayer)
    }
}

import ArgumentParser
import Foundation
import SwiftRecord
import SwiftRecordCamera
import SwiftRecordX11
import SwiftRecordPulse
import SwiftRecordWayland
import SwiftRecordBroadcast

/// How a `record` run ends early: what to say on stderr (nil when it was said already)
/// and the exit status. The one way out of `Record.run` besides its report.
struct RecordExit: Error {
    let message: String?
    let status: ExitCode

    init(_ message: String?, _ status: ExitCode) {
        (self.message, self.status) = (message, status)
    }
}

/// What `Record.openSources` opened: the pictures, a camera on a track of its own, the sound.
struct OpenedSources {
    let capture: any CaptureSource
    let cameraTrack: (any CaptureSource)?
    let audio: [OpenedAudio]
    /// The synthetic scene's flashes, shared with the synthetic sound and the click player.
    let flashClock: SyntheticFlashClock
}

extension Record {
    /// Ends the run (exit 1) if a stop came during start-up, after `undo` removed what
    /// start-up created.
    func checkStartUp(_ control: RecordingControl, _ undo: () -> Void = {}) throws(RecordExit) {
        guard let name = control.stopRequested else { return }
        undo()
        throw RecordExit("\(name) before the recording started; nothing was recorded", ExitStatus.failed)
    }

    /// The output's path: the one given, or a default name reserved (created exclusively,
    /// so two runs in one second never share a name) and announced.
    func reserveOutput(_ plan: RecordingPlan) throws(RecordExit) -> String {
        guard !plan.outputs.fileWasGiven else { return plan.outputs.file }
        let path: String
        do {
            path = try OutputFile.reserveUnique(stem: String(plan.outputs.file.dropLast(4)), extension: ".mp4")
        } catch {
            throw RecordExit(error.userMessage, ExitStatus.failed)
        }
        if !quiet { note("swift-record: recording to \(path)" + (plan.outputs.live.isEmpty ? "" : " while streaming")) }
        return path
    }

    /// Every file the run writes, checked together against the rule for written files.
    func checkFiles(_ plan: RecordingPlan, output: String) throws(RecordExit) -> WrittenFiles {
        do {
            return try WrittenFiles(output: output, statsJSON: outputs.statsJSON, timingLog: outputs.timingLog, restoreToken: wayland.restoreToken,
                                    hlsPlaylists: plan.outputs.live.filter { $0.kind == .hls }.map(\.url.path),
                                    hlsFragmentedMP4: outputs.hlsFmp4, overwrite: replace.overwrite)
        } catch {
            throw RecordExit(error.userMessage, ExitStatus.beforeWriting(error))
        }
    }

    /// Opens the plan's picture source (and a camera beside or over it), says what it
    /// records, then opens the sound sources.
    func openSources(_ plan: RecordingPlan, files: WrittenFiles, control: RecordingControl) throws(RecordExit) -> OpenedSources {
        if let announcement = plan.sourceNote, plan.source == .synthetic || !quiet { note(announcement) }
        if let codecNote = plan.codecNote, !quiet { note("swift-record: " + codecNote) }
        let flashClock = SyntheticFlashClock()
        // A stop while the screen is asked for (the desktop's chooser open) gives up at once.
        let startStop = WakeUp()
        var cameraConfiguration = cameraOptions.configuration(name: plan.source.cameraName)
        cameraConfiguration.startStop = startStop
        let capture: any CaptureSource
        var cameraTrack: (any CaptureSource)?
        do {
            control.whileStarting { startStop.interrupt() }
            defer { control.whileStarting(nil) }
            let made = try openPictures(plan, files: files, camera: cameraConfiguration, flashClock: flashClock, startStop: startStop)
            switch plan.camera {
            case .overlay(_, let corner, let size, let margin):
                // The camera over the screen: found and started before anything is written,
                // its pictures converted straight to the overlay's size (scaled once).
                var overlayCamera = cameraConfiguration
                overlayCamera.deliveredSize = size
                let camera = try CameraSource.open(configuration: overlayCamera)
                capture = OverlaySource(base: try screen.stepped(made), overlay: camera, corner: corner, overlaySize: size, margin: margin)
            case .secondTrack:
                capture = try screen.stepped(made)
                // The camera on a track of its own: found and started before anything is written.
                cameraTrack = try CameraSource.open(configuration: cameraConfiguration)
            case .none:
                capture = try screen.stepped(made)
            }
        } catch let e as SwiftRecordError {
            let said = plan.source.isScreen || plan.source.isCamera || e.operation == "camera" ? e.message : "--source: " + e.message
            // The user closing the portal's chooser: not done (1), not an interrupted conversion.
            throw RecordExit(said, e.kind == .cancelled ? ExitStatus.failed : ExitStatus.beforeWriting(e))
        } catch let end as RecordExit {
            throw end
        } catch {
            throw RecordExit("--source: \(error)", ExitStatus.failed)
        }
        if !quiet, let description = capture.captureDescription { note("swift-record: recording \(description)") }
        if !quiet, let description = cameraTrack?.captureDescription { note("swift-record: and on a second video track \(description)") }
        for notice in (cameraTrack?.notices ?? []) + capture.notices + (plan.source.isScreen ? screen.captureNotices(scaling: scale != nil) : []) {
            note("swift-record: \(notice)")
        }
        let audio: [OpenedAudio]
        do {
            audio = try sound.makeSources(plan.sounds, registry: AudioSourceRegistry.shared, videoIsLive: capture.isLive, fps: plan.frameRate,
                                          realtime: realtime, flashClock: flashClock, quiet: quiet)
        } catch {
            throw RecordExit("--audio: \((error as? SwiftRecordError)?.message ?? "\(error)")", ExitStatus.beforeWriting(error))
        }
        try checkStartUp(control)
        return OpenedSources(capture: capture, cameraTrack: cameraTrack, audio: audio, flashClock: flashClock)
    }

    /// The source `plan.source` names, opened; a Wayland screen's new restore token saved.
    private func openPictures(_ plan: RecordingPlan, files: WrittenFiles, camera: CameraSource.Configuration,
                              flashClock: SyntheticFlashClock, startStop: WakeUp) throws -> any CaptureSource {
        let options = CaptureSourceOptions(size: size, frameRate: plan.frameRate, realtime: realtime)
        switch plan.source {
        case .x11:
            return try X11Source.open(configuration: screen.configuration(scaling: scale != nil))
        case .wayland:
            return try openWayland(files: files, startStop: startStop)
        case .synthetic:
            var options = options
            options.configure(SyntheticSource.Configuration(flashClock: flashClock))
            return try SyntheticSource(options: options)
        case .camera:
            return try CameraSource.open(configuration: camera)
        case .rawVideo(let path):
            var options = options
            options.configure(RawVideoFileSource.Configuration(path: path, size: size, pixelFormat: pixFmt, frameRate: plan.frameRate,
                                                               maximumFrames: length.frames))
            return try RawVideoFileSource(captureOptions: options)
        case .pipeWire(let node):
            var configuration = PipeWireNodeSource.Configuration(node: node, size: size, frameRate: max(1, Int(plan.frameRate.doubleValue.rounded())))
            configuration.startStop = startStop
            return try PipeWireNodeSource(configuration: configuration)
        case .broadcast(let name):
            if !quiet { note("swift-record: waiting for a broadcast sender on '\(name)'") }
            var configuration = BroadcastSource.Configuration(name: name)
            configuration.startStop = startStop
            return try BroadcastSource(configuration: configuration)
        }
    }

    /// A Wayland screen through the portal or Mutter (announced when chosen here), with the
    /// portal's restore token read before and written after.
    private func openWayland(files: WrittenFiles, startStop: WakeUp) throws -> WaylandSource {
        let (screenCast, announcement) = wayland.chosenScreenCast(monitor: screen.monitor) { ScreenCastPortal.isAvailable() }
        if let announcement, !quiet { note(announcement) }
        var previousToken: String?
        if screenCast == .portal, let path = wayland.restoreToken {
            do {
                previousToken = try RestoreTokenFile.read(path)
            } catch {
                throw RecordExit(error.message, ExitStatus.beforeWriting(error))
            }
        }
        var configuration = wayland.configuration(screenCast: screenCast, restoreToken: previousToken, screen: screen, scaling: scale != nil)
        configuration.startStop = startStop
        let cast = try WaylandSource(configuration: configuration)
        guard let file = files.restoreToken else { return cast }
        if let token = cast.restoreToken {
            do {
                try RestoreTokenFile.write(token, to: file, previous: previousToken)
            } catch {
                throw RecordExit("--restore-token: \(error.message)", ExitStatus.failed)
            }
        } else if !quiet {
            note("swift-record: the desktop portal gave no restore token; the chooser will show again next time")
        }
        return cast
    }
}

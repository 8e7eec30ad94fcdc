import Foundation
import SwiftRecord
import SwiftRecordPulse
import SwiftRecordWayland
import SwiftRecordX11

/// What in-app capture records when the application named nothing else (a display server
/// must be named; the sound server is asked before the display, so a missing one is said
/// before a portal shows its chooser): as close to
/// Apple's "this app's screen and sound" as the display and sound servers can say.
///
/// - Pictures: on X11 (`$DISPLAY`), this process's own windows, the ones whose
///   `_NET_WM_PID` is `getpid()` (one window is followed as it moves; several give the
///   rectangle around them); the whole screen when none says it is ours. On Wayland alone
///   (`$WAYLAND_DISPLAY` without `$DISPLAY`), where a client cannot name its windows to a
///   recorder, the desktop portal's chooser, offering windows and screens.
/// - `.audioApp`: this process's playback streams alone (the PulseAudio sink inputs whose
///   `application.process.id` is ours, as `app:PID` records them); silence while it plays
///   nothing.
/// - `.audioMic`: the server's default source (`@DEFAULT_SOURCE@`), when
///   `isMicrophoneEnabled`.
struct InAppSources {
    let screen: any CaptureSource
    let appAudio: any AudioCaptureSource
    let microphone: (any AudioCaptureSource)?
    /// What was chosen, for the log.
    let description: String

    static let sampleRate = 48_000

    /// Whether a display server is named in the environment at all.
    static var displayIsNamed: Bool {
        let env = ProcessInfo.processInfo.environment
        return [env["DISPLAY"], env["WAYLAND_DISPLAY"]].contains { !($0 ?? "").isEmpty }
    }

    static func make(microphone: Bool) throws(SwiftRecordError) -> InAppSources {
        guard displayIsNamed else { throw noDisplay }
        // Sound before pictures: a missing sound server is said before a portal's chooser is shown.
        var options = AudioSourceOptions()
        options.sampleRate = sampleRate
        let pid = String(getpid())
        let app: PulseAudioSource
        var mic: PulseAudioSource?
        do {
            app = try PulseAudioSource(options: options, application: pid)
            // The server is asked now, so that a missing one is said at startCapture.
            try app.checkServer()
            if microphone {
                options.device = "@DEFAULT_SOURCE@"
                let source = try PulseAudioSource(options: options)
                try source.checkDevice()
                mic = source
            }
        } catch {
            throw SwiftRecordError(error.kind, operation: "RPScreenRecorder.startCapture",
                                   message: "in-app capture records this process's sound\(microphone ? " and the default microphone" : "") through PulseAudio, which failed: \(error.message); or name other sources with setSources(screen:appAudio:microphone:)")
        }
        let (screen, what) = try pictures()
        let sound = "the sound of process \(pid)" + (mic.map { " and \($0.captureDescription ?? "the default microphone")" } ?? "")
        return InAppSources(screen: screen, appAudio: app, microphone: mic, description: "\(what); \(sound)")
    }

    private static func pictures() throws(SwiftRecordError) -> (any CaptureSource, String) {
        let env = ProcessInfo.processInfo.environment
        if !(env["DISPLAY"] ?? "").isEmpty {
            let own = try X11Source.windows(ofProcess: getpid())
            var configuration = X11Source.Configuration()
            let what: String
            switch own.count {
            case 0:
                what = "the whole X11 screen (no window says it is this process's: _NET_WM_PID)"
            case 1:
                configuration.area = .window(own[0].window)
                what = "this process's X11 window 0x\(String(own[0].window, radix: 16))"
            default:
                let areas = own.map(\.area)
                let left = areas.map(\.x).min() ?? 0, top = areas.map(\.y).min() ?? 0
                let right = areas.map { $0.x + $0.width }.max() ?? 0, bottom = areas.map { $0.y + $0.height }.max() ?? 0
                configuration.area = .region(CaptureRect(x: left, y: top, width: right - left, height: bottom - top))
                what = "the area around this process's \(own.count) X11 windows"
            }
            return (try X11Source.open(configuration: configuration), what)
        }
        if !(env["WAYLAND_DISPLAY"] ?? "").isEmpty {
            var configuration = WaylandSource.Configuration()
            configuration.screenCast = .portal
            configuration.portal.sourceTypes = [.window, .monitor]
            return (try WaylandSource(configuration: configuration), "the window or screen picked in the desktop portal's chooser")
        }
        throw noDisplay
    }

    static let noDisplay = SwiftRecordError(.unsupported, operation: "RPScreenRecorder.startCapture",
                                            message: "no display server is named ($DISPLAY or $WAYLAND_DISPLAY): there is no screen to capture; or say what to capture with setSources(screen:appAudio:microphone:)")
}

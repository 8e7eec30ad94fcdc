// ReplayKit's in-app capture as Apple spells it, over SwiftRecord's `ScreenRecorder`. A port
// keeps `import ReplayKit`; what is captured is the platform's part (see `setSources`).
@_exported import CoreMedia
@_exported import Foundation
import Logging

/// What a captured sample is (`RPSampleBufferType`: `.video`, `.audioApp`, `.audioMic`).
public typealias RPSampleBufferType = SampleBufferType

/// The shared screen recorder (`RPScreenRecorder`): the app's own screen and sound, as
/// Apple's. Here that is this process's X11 windows (`_NET_WM_PID`), else the screen or,
/// on Wayland, what the portal's chooser gives; this process's PulseAudio streams
/// (`.audioApp`) and the default source (`.audioMic`). An application may name other
/// sources instead (``setSources(screen:appAudio:microphone:frameRate:)``, not Apple's).
/// A thin wrapper over SwiftRecord's `ScreenRecorder`.
public final class RPScreenRecorder: Sendable {
    private struct Sources {
        var screen: (any CaptureSource)?
        var appAudio: (any AudioCaptureSource)?
        var microphone: (any AudioCaptureSource)?
        var frameRate = Rational(30)!
        var microphoneEnabled = false
        var running: ScreenRecorder?
    }
    private let state = Locked(Sources())
    private static let instance = RPScreenRecorder()
    private static let log = Logger(label: "swift-record.replaykit")

    private init() {}

    /// The one recorder (`shared()`).
    public class func shared() -> RPScreenRecorder { instance }

    /// Not Apple's: other sources than this process's windows and sound (a synthetic
    /// scene, a file, a whole desktop's sound); a nil `screen` goes back to this process's
    /// own. Set before `startCapture`.
    public func setSources(screen: (any CaptureSource)?, appAudio: (any AudioCaptureSource)?, microphone: (any AudioCaptureSource)?,
                           frameRate: Rational = Rational(30)!) {
        state.withLock { s in
            (s.screen, s.appAudio, s.microphone, s.frameRate) = (screen, screen == nil ? nil : appAudio, screen == nil ? nil : microphone, frameRate)
        }
    }

    /// Whether capture can start (`isAvailable`): a screen was given, or a display server
    /// is named (`$DISPLAY`, `$WAYLAND_DISPLAY`) for in-app capture to find this process's
    /// windows on.
    public var isAvailable: Bool { state.withLock { $0.screen != nil } || InAppSources.displayIsNamed }
    /// Whether capture is running (`isRecording`).
    public var isRecording: Bool { state.withLock { $0.running?.isRecording ?? false } }
    /// Whether the microphone is captured too (`isMicrophoneEnabled`); off by default, as Apple's.
    public var isMicrophoneEnabled: Bool {
        get { state.withLock { $0.microphoneEnabled } }
        set { state.withLock { $0.microphoneEnabled = newValue } }
    }

    /// Starts capturing (`startCapture(handler:completionHandler:)`): every sample goes to
    /// `captureHandler` with its type, on one serial queue; `completionHandler` says whether
    /// capture started. Without ``setSources(screen:appAudio:microphone:frameRate:)``, this
    /// process's own windows and sound and the default microphone (`InAppSources` says
    /// how they are found); a missing display or sound server is the completion handler's
    /// error. A source that fails later ends the capture, and `stopCapture` hands its
    /// error over.
    public func startCapture(handler captureHandler: (@Sendable (CMSampleBuffer, RPSampleBufferType, (any Error)?) -> Void)?,
                             completionHandler: (@Sendable ((any Error)?) -> Void)? = nil) {
        let operation = "RPScreenRecorder.startCapture"
        let given = state.withLock { s in (s.screen, s.appAudio, s.microphone, s.frameRate, s.microphoneEnabled, s.running?.isRecording == true) }
        let made: Result<ScreenRecorder, SwiftRecordError>
        if given.5 {
            made = .failure(SwiftRecordError(.invalidState, operation: operation, message: "capture is running already"))
        } else if let screen = given.0 {
            made = .success(ScreenRecorder(screen: screen, appAudio: given.1, microphone: given.4 ? given.2 : nil, frameRate: given.3))
        } else {
            made = Result { () throws(SwiftRecordError) -> ScreenRecorder in
                let inApp = try InAppSources.make(microphone: given.4)
                RPScreenRecorder.log.info("in-app capture: \(inApp.description)")
                return ScreenRecorder(screen: inApp.screen, appAudio: inApp.appAudio, microphone: inApp.microphone, frameRate: given.3)
            }
        }
        let claimed = made.flatMap { recorder in
            state.withLock { s -> Result<ScreenRecorder, SwiftRecordError> in
                if s.running?.isRecording == true {
                    return .failure(SwiftRecordError(.invalidState, operation: operation, message: "capture is running already"))
                }
                s.running = recorder
                return .success(recorder)
            }
        }
        switch claimed {
        case .failure(let error):
            RPScreenRecorder.log.error("\(error.message)")
            completionHandler?(error)
        case .success(let recorder):
            recorder.startCapture(handler: { sample, type in captureHandler?(sample, type, nil) }, completionHandler: completionHandler)
        }
    }

    /// Stops capturing once the last sample was handed over (`stopCapture()`, `async throws`).
    public func stopCapture() async throws {
        guard let recorder = state.withLock({ $0.running }) else { return }
        try await recorder.stopCapture()
    }

    /// Stops capturing, then calls `handler` with the error that ended it, if one did
    /// (`stopCapture(handler:)`).
    public func stopCapture(handler: (@Sendable ((any Error)?) -> Void)? = nil) {
        Task {
            do {
                try await stopCapture()
                handler?(nil)
            } catch {
                handler?(error)
            }
        }
    }
}

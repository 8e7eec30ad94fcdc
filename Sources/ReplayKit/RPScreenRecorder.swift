// ReplayKit's in-app capture as Apple spells it, over SwiftRecord's `ScreenRecorder`. A port
// keeps `import ReplayKit`; what is captured is the platform's part (see `setSources`).
@_exported import CoreMedia
@_exported import Foundation
import Logging

/// What a captured sample is (`RPSampleBufferType`: `.video`, `.audioApp`, `.audioMic`).
public typealias RPSampleBufferType = SampleBufferType

/// The shared screen recorder (`RPScreenRecorder`). On Apple platforms it captures the app's
/// own screen and sound; here the application says once what stands for them
/// (``setSources(screen:appAudio:microphone:frameRate:)``, the platform part of a port),
/// and the capture calls are Apple's. A thin wrapper over SwiftRecord's `ScreenRecorder`.
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

    /// Not Apple's: what stands for the app's screen and sound here (an X11 or Wayland
    /// screen or window, a PulseAudio monitor, the default microphone). Set before
    /// `startCapture`; the platform part of a port.
    public func setSources(screen: any CaptureSource, appAudio: (any AudioCaptureSource)?, microphone: (any AudioCaptureSource)?,
                           frameRate: Rational = Rational(30)!) {
        state.withLock { s in
            (s.screen, s.appAudio, s.microphone, s.frameRate) = (screen, appAudio, microphone, frameRate)
        }
    }

    /// Whether capture can start (`isAvailable`): a screen was given.
    public var isAvailable: Bool { state.withLock { $0.screen != nil } }
    /// Whether capture is running (`isRecording`).
    public var isRecording: Bool { state.withLock { $0.running?.isRecording ?? false } }
    /// Whether the microphone is captured too (`isMicrophoneEnabled`); off by default, as Apple's.
    public var isMicrophoneEnabled: Bool {
        get { state.withLock { $0.microphoneEnabled } }
        set { state.withLock { $0.microphoneEnabled = newValue } }
    }

    /// Starts capturing (`startCapture(handler:completionHandler:)`): every sample goes to
    /// `captureHandler` with its type, on one serial queue; `completionHandler` says whether
    /// capture started. A source that fails later ends the capture, and `stopCapture`
    /// hands its error over.
    public func startCapture(handler captureHandler: (@Sendable (CMSampleBuffer, RPSampleBufferType, (any Error)?) -> Void)?,
                             completionHandler: (@Sendable ((any Error)?) -> Void)? = nil) {
        let made = state.withLock { s -> Result<ScreenRecorder, SwiftRecordError> in
            guard let screen = s.screen else {
                return .failure(SwiftRecordError(.invalidState, operation: "RPScreenRecorder.startCapture",
                                                 message: "no screen to capture; call setSources(screen:appAudio:microphone:) first"))
            }
            if s.running?.isRecording == true {
                return .failure(SwiftRecordError(.invalidState, operation: "RPScreenRecorder.startCapture", message: "capture is running already"))
            }
            let recorder = ScreenRecorder(screen: screen, appAudio: s.appAudio, microphone: s.microphoneEnabled ? s.microphone : nil,
                                          frameRate: s.frameRate)
            s.running = recorder
            return .success(recorder)
        }
        switch made {
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

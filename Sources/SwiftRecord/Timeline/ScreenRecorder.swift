import Foundation

/// ReplayKit's in-app capture (`RPScreenRecorder.startCapture(handler:completionHandler:)`):
/// the screen, the programs' sound and the microphone handed to one handler as samples with
/// their type (`.video`, `.audioApp`, `.audioMic`) and capture-clock time stamps, for the
/// application to write (into an ``AssetWriter`` with two audio inputs, say) or send.
///
/// A ``MediaCaptureSession`` with one ``CaptureDataOutput`` underneath; samples arrive in
/// capture order per type, on one serial queue.
public final class ScreenRecorder: Sendable {
    /// The picture source and the sound sources, as given.
    public let screen: any CaptureSource
    public let appAudio: (any AudioCaptureSource)?
    public let microphone: (any AudioCaptureSource)?
    /// The pace of a live screen.
    public let frameRate: Rational

    private let queue = DispatchQueue(label: "swift-record.screen-recorder")
    private let current = Locked<(session: MediaCaptureSession, output: CaptureDataOutput)?>(nil)

    public init(screen: any CaptureSource, appAudio: (any AudioCaptureSource)? = nil, microphone: (any AudioCaptureSource)? = nil,
                frameRate: Rational = Rational(30)!) {
        self.screen = screen
        self.appAudio = appAudio
        self.microphone = microphone
        self.frameRate = frameRate
    }

    /// True between `startCapture` and `stopCapture` (`isRecording`).
    public var isRecording: Bool { current.withLock { $0?.session.isRunning ?? false } }

    /// Starts capturing; every sample goes to `handler` (on the recorder's serial queue).
    /// `completionHandler` is called once capture has started (nil), or with the error that
    /// kept it from starting (capture running already); a source that fails to start or
    /// fails later ends the capture, and ``stopCapture()`` throws its error.
    public func startCapture(handler: @escaping @Sendable (MediaSample, SampleBufferType) -> Void,
                             completionHandler: (@Sendable ((any Error)?) -> Void)? = nil) {
        let session = MediaCaptureSession(frameRate: frameRate)
        let output = CaptureDataOutput()
        output.setSampleBufferHandler(queue: queue, handler)
        do {
            try session.addInput(CaptureInput(source: screen))
            if let appAudio { try session.addInput(CaptureInput(audioSource: appAudio, type: .audioApp)) }
            if let microphone { try session.addInput(CaptureInput(audioSource: microphone, type: .audioMic)) }
            try session.addOutput(output)
            let busy = current.withLock { c -> Bool in
                if c?.session.isRunning == true { return true }
                c = (session, output)
                return false
            }
            if busy { throw SwiftRecordError(.invalidState, operation: "startCapture", message: "capture is running already; stopCapture first") }
            try session.startRunning()
        } catch {
            completionHandler?(error)
            return
        }
        completionHandler?(nil)
    }

    /// Stops capturing and waits until the last sample was handed over; the error that
    /// ended the capture, if one did.
    public func stopCapture() async throws {
        guard let (session, _) = current.withLock({ $0 }) else { return }
        _ = try await session.stopRunning()
        // The handler's queue empties after the last sample was handed to it.
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in queue.async { c.resume() } }
    }

    /// Samples handed over and pictures dropped (the handler too slow) by the last capture.
    public var deliveredSamples: [SampleBufferType: Int] { current.withLock { $0?.output.deliveredSamples ?? [:] } }
    public var droppedPictures: Int { current.withLock { $0?.output.droppedPictures ?? 0 } }
}

import Foundation

/// Captures from cameras and microphones into outputs (`AVCaptureSession`), as Apple's
/// samples write it: `beginConfiguration()`, inputs and outputs added, `commitConfiguration()`,
/// `startRunning()`, a movie file started and stopped while it runs, `stopRunning()`.
///
/// A thin layer over SwiftRecord's ``MediaCaptureSession``, which runs inputs into outputs
/// from start to stop: each stretch of this session is one run of one. While no file
/// records, the session runs only when a data output has a delegate (the devices read,
/// their samples handed over); `startRecording(to:recordingDelegate:)` ends that run and
/// starts one with the movie file, `stopRecording()` ends it (the file finished, the
/// delegate told) and the data outputs' run resumes. So the devices are opened again at each
/// switch: a moment without samples, which Apple's session does not have.
public final class AVCaptureSession: Sendable {
    /// The picture size asked of the camera (`AVCaptureSession.Preset`). The camera takes its
    /// nearest mode; `.high`, `.photo` and `.inputPriority` leave the camera's usual mode.
    public struct Preset: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let high = Preset(rawValue: "AVCaptureSessionPresetHigh")
        public static let medium = Preset(rawValue: "AVCaptureSessionPresetMedium")
        public static let low = Preset(rawValue: "AVCaptureSessionPresetLow")
        public static let photo = Preset(rawValue: "AVCaptureSessionPresetPhoto")
        public static let inputPriority = Preset(rawValue: "AVCaptureSessionPresetInputPriority")
        public static let qvga320x240 = Preset(rawValue: "AVCaptureSessionPreset320x240")
        public static let cif352x288 = Preset(rawValue: "AVCaptureSessionPreset352x288")
        public static let vga640x480 = Preset(rawValue: "AVCaptureSessionPreset640x480")
        public static let qHD960x540 = Preset(rawValue: "AVCaptureSessionPreset960x540")
        public static let iFrame960x540 = Preset(rawValue: "AVCaptureSessionPresetiFrame960x540")
        public static let hd1280x720 = Preset(rawValue: "AVCaptureSessionPreset1280x720")
        public static let iFrame1280x720 = Preset(rawValue: "AVCaptureSessionPresetiFrame1280x720")
        public static let hd1920x1080 = Preset(rawValue: "AVCaptureSessionPreset1920x1080")
        public static let hd4K3840x2160 = Preset(rawValue: "AVCaptureSessionPreset3840x2160")

        /// The size asked of the camera; nil: its usual mode. `.medium` and `.low` are
        /// Apple's sizes on the iPhone (480x360, 192x144).
        public var size: VideoSize? {
            switch self {
            case .medium: VideoSize(width: 480, height: 360)
            case .low: VideoSize(width: 192, height: 144)
            case .qvga320x240: VideoSize(width: 320, height: 240)
            case .cif352x288: VideoSize(width: 352, height: 288)
            case .vga640x480: VideoSize(width: 640, height: 480)
            case .qHD960x540, .iFrame960x540: VideoSize(width: 960, height: 540)
            case .hd1280x720, .iFrame1280x720: VideoSize(width: 1280, height: 720)
            case .hd1920x1080: VideoSize(width: 1920, height: 1080)
            case .hd4K3840x2160: VideoSize(width: 3840, height: 2160)
            default: nil
            }
        }
    }

    /// One run of SwiftRecord's session, and the file it records, if any.
    final class Run: Sendable {
        let native: MediaCaptureSession
        let movie: AVCaptureFileOutput?
        let ended = DispatchSemaphore(value: 0)
        init(native: MediaCaptureSession, movie: AVCaptureFileOutput?) { (self.native, self.movie) = (native, movie) }
    }

    struct State: Sendable {
        var inputs: [AVCaptureInput] = []
        var outputs: [AVCaptureOutput] = []
        var preset = Preset.high
        var configuring = 0
        var running = false
        var run: Run?
    }
    let state = Locked(State())
    /// Starts and ends runs one at a time, in the order asked.
    let transitions = DispatchQueue(label: "swift-record.AVCaptureSession")

    public init() {}

    /// The inputs added (`inputs`).
    public var inputs: [AVCaptureInput] { state.withLock { $0.inputs } }
    /// The outputs added (`outputs`).
    public var outputs: [AVCaptureOutput] { state.withLock { $0.outputs } }
    /// True from `startRunning()` to `stopRunning()` (`isRunning`).
    public var isRunning: Bool { state.withLock { $0.running } }

    /// The size asked of the camera (`sessionPreset`, `.high` by default); taken at the next run.
    public var sessionPreset: Preset {
        get { state.withLock { $0.preset } }
        set { state.withLock { $0.preset = newValue } }
    }

    /// Whether `preset` can be asked for (`canSetSessionPreset(_:)`): always; the camera takes its nearest mode.
    public func canSetSessionPreset(_ preset: Preset) -> Bool { true }

    /// Starts a batch of changes (`beginConfiguration()`); changes take effect at the next run.
    public func beginConfiguration() { state.withLock { $0.configuring += 1 } }
    /// Ends it (`commitConfiguration()`).
    public func commitConfiguration() { state.withLock { $0.configuring = max(0, $0.configuring - 1) } }

    /// Whether `input` can be added (`canAddInput(_:)`): once, one camera and one microphone.
    public func canAddInput(_ input: AVCaptureInput) -> Bool {
        state.withLock { Self.refusal(of: input, in: $0) == nil }
    }

    /// Adds `input` (`addInput(_:)`); where Apple raises an exception, the reason is logged.
    public func addInput(_ input: AVCaptureInput) {
        let refusal = state.withLock { s -> String? in
            if let why = Self.refusal(of: input, in: s) { return why }
            s.inputs.append(input)
            return nil
        }
        if let refusal { log.error("AVCaptureSession.addInput(_:): \(refusal)") }
    }

    /// Removes `input` (`removeInput(_:)`).
    public func removeInput(_ input: AVCaptureInput) { state.withLock { $0.inputs.removeAll { $0 === input } } }

    /// Whether `output` can be added (`canAddOutput(_:)`): once, one of each kind.
    public func canAddOutput(_ output: AVCaptureOutput) -> Bool {
        state.withLock { Self.refusal(of: output, in: $0) == nil }
    }

    /// Adds `output` (`addOutput(_:)`); where Apple raises an exception, the reason is logged.
    public func addOutput(_ output: AVCaptureOutput) {
        let refusal = state.withLock { s -> String? in
            if let why = Self.refusal(of: output, in: s) { return why }
            s.outputs.append(output)
            return nil
        }
        if let refusal { return log.error("AVCaptureSession.addOutput(_:): \(refusal)") }
        output.added(to: self)
    }

    /// Removes `output` (`removeOutput(_:)`).
    public func removeOutput(_ output: AVCaptureOutput) {
        state.withLock { $0.outputs.removeAll { $0 === output } }
        output.added(to: nil)
    }

    private static func refusal(of input: AVCaptureInput, in s: State) -> String? {
        guard let input = input as? AVCaptureDeviceInput else { return "only AVCaptureDeviceInput is supported" }
        if s.inputs.contains(where: { $0 === input }) { return "this input was added already" }
        if s.inputs.contains(where: { ($0 as? AVCaptureDeviceInput)?.mediaType == input.mediaType }) {
            return "the session has a \(input.mediaType == .video ? "camera" : "microphone") already; one of each"
        }
        return nil
    }

    private static func refusal(of output: AVCaptureOutput, in s: State) -> String? {
        if s.outputs.contains(where: { $0 === output }) { return "this output was added already" }
        if s.outputs.contains(where: { type(of: $0) == type(of: output) }) { return "the session has a \(type(of: output)) already; one of each kind" }
        return nil
    }

    /// Starts the session (`startRunning()`), blocking until it runs. A failure to open a
    /// device is logged and leaves it stopped (`isRunning` false).
    public func startRunning() {
        transitions.sync {
            guard state.withLock({ s -> Bool in
                defer { s.running = true }
                return !s.running
            }) else { return }
            do { try beginRun(recording: nil) } catch {
                log.error("AVCaptureSession.startRunning(): \(error)")
                state.withLock { $0.running = false }
            }
        }
    }

    /// Stops the session (`stopRunning()`), blocking until it has: a file being recorded is
    /// finished first and its delegate told.
    public func stopRunning() {
        transitions.sync {
            state.withLock { $0.running = false }
            endRun()
        }
    }
}

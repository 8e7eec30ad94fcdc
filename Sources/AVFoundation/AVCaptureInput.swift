import Foundation

/// What a session captures from (`AVCaptureInput`); ``AVCaptureDeviceInput`` is the one kind.
///
/// Sendable: it has no state; its one subclass keeps its own behind a lock. (A class others
/// derive from cannot be checked by the compiler, hence `@unchecked`.)
public class AVCaptureInput: @unchecked Sendable {
    init() {}
}

/// A camera or microphone added to a session (`AVCaptureDeviceInput`). Made, the device is
/// opened once to check it can be (Apple's initialiser throws when it cannot), and that
/// source is recorded by the session's next run; each later run (a recording started or
/// stopped while the session runs) opens the device again.
public final class AVCaptureDeviceInput: AVCaptureInput, @unchecked Sendable {
    /// The device (`device`).
    public let device: AVCaptureDevice

    private enum Opened: Sendable {
        case camera(any CaptureSource, asked: VideoSize?)
        case microphone(any AudioCaptureSource)
    }
    /// The source opened and not yet recorded.
    private let opened: Locked<Opened?>

    /// Opens `device`; throws a `SwiftRecordError` saying why when it cannot be
    /// (`init(device:)`): the camera gone or sending no picture format, no PulseAudio server,
    /// no such source.
    public init(device: AVCaptureDevice) throws {
        self.device = device
        if device.hasMediaType(.video) {
            opened = Locked(.camera(try device.openCamera(size: nil), asked: nil))
        } else {
            opened = Locked(.microphone(try device.openMicrophone()))
        }
        super.init()
    }

    deinit {
        if case .camera(let source, _) = opened.withLock({ $0 }) { source.stop() }
    }

    /// The kind of media the input gives.
    var mediaType: AVMediaType { device.hasMediaType(.video) ? .video : .audio }

    /// A source for a run: the one opened already when it was asked for `size`, else the
    /// device opened again.
    func captureInput(size: VideoSize?) throws(SwiftRecordError) -> CaptureInput {
        let kept = opened.withLock { o in
            defer { o = nil }
            return o
        }
        switch kept {
        case .camera(let source, let asked) where asked == size:
            return CaptureInput(source: source)
        case .camera(let source, _):
            source.stop()
            return CaptureInput(source: try device.openCamera(size: size))
        case .microphone(let source):
            return CaptureInput(audioSource: source, type: .audioMic)
        case nil:
            if mediaType == .video { return CaptureInput(source: try device.openCamera(size: size)) }
            return CaptureInput(audioSource: try device.openMicrophone(), type: .audioMic)
        }
    }
}

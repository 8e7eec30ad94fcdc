import Foundation

/// Where a session's samples go (`AVCaptureOutput`): a movie file
/// (``AVCaptureMovieFileOutput``) or a delegate (``AVCaptureVideoDataOutput``,
/// ``AVCaptureAudioDataOutput``).
///
/// Sendable: its state is behind a lock, and so is every subclass's. (A class others derive
/// from cannot be checked by the compiler, hence `@unchecked`.)
public class AVCaptureOutput: @unchecked Sendable {
    private struct Owner: Sendable { weak var session: AVCaptureSession? }
    private let owner = Locked(Owner())

    init() {}

    /// The kinds of media the output takes.
    var mediaTypes: [AVMediaType] { [.video, .audio] }

    /// The session the output was added to.
    var session: AVCaptureSession? { owner.withLock { $0.session } }
    func added(to session: AVCaptureSession?) { owner.withLock { $0.session = session } }

    /// One connection per kind of media the output takes and the session's inputs give
    /// (`connections`).
    public var connections: [AVCaptureConnection] {
        let given = Set(session?.inputs.compactMap { ($0 as? AVCaptureDeviceInput)?.mediaType } ?? [])
        return mediaTypes.filter(given.contains).map { AVCaptureConnection(output: self, mediaType: $0) }
    }

    /// The connection carrying `mediaType`, nil when no input gives it (`connection(with:)`).
    public func connection(with mediaType: AVMediaType) -> AVCaptureConnection? {
        connections.first { $0.mediaType == mediaType }
    }
}

/// The path of one kind of media from the session's inputs to an output (`AVCaptureConnection`).
public final class AVCaptureConnection: Sendable {
    private struct Owner: Sendable { weak var output: AVCaptureOutput? }
    private let owner: Owner
    /// The media it carries.
    let mediaType: AVMediaType

    init(output: AVCaptureOutput, mediaType: AVMediaType) {
        owner = Owner(output: output)
        self.mediaType = mediaType
    }

    /// The output it leads to (`output`).
    public var output: AVCaptureOutput? { owner.output }
    /// Always true: a connection cannot be turned off here (`isEnabled`).
    public var isEnabled: Bool { true }
    /// True while the session runs (`isActive`).
    public var isActive: Bool { output?.session?.isRunning ?? false }
}

/// Receives the pictures of an ``AVCaptureVideoDataOutput``
/// (`AVCaptureVideoDataOutputSampleBufferDelegate`).
public protocol AVCaptureVideoDataOutputSampleBufferDelegate: AnyObject {
    /// A picture, on the queue given to `setSampleBufferDelegate(_:queue:)`.
    func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection)
}

/// Receives the sound of an ``AVCaptureAudioDataOutput``
/// (`AVCaptureAudioDataOutputSampleBufferDelegate`).
public protocol AVCaptureAudioDataOutputSampleBufferDelegate: AnyObject {
    /// A buffer of sound, on the queue given to `setSampleBufferDelegate(_:queue:)`.
    func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection)
}

extension AVCaptureVideoDataOutputSampleBufferDelegate {
    /// Optional in Apple's protocol: does nothing.
    public func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection) {}
}

extension AVCaptureAudioDataOutputSampleBufferDelegate {
    /// Optional in Apple's protocol: does nothing.
    public func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection) {}
}

/// A delegate handed to another queue, as Apple's capture outputs hand theirs: the port's
/// delegate is called on the queue it chose, as on Apple's platforms, and is responsible
/// for what it shares across queues, as there.
struct DelegateReference<Delegate>: @unchecked Sendable {
    let delegate: Delegate
}

/// What the two data outputs share: the delegate, its queue, and SwiftRecord's
/// `CaptureDataOutput` made for each run.
struct SampleBufferDelivery<Delegate>: Sendable {
    var delegate: DelegateReference<Delegate>?
    var queue: DispatchQueue?

    /// A SwiftRecord data output for one run handing `types` to `call` on the queue; nil
    /// without a delegate.
    func nativeOutput(_ types: Set<SampleBufferType>, picturesInFlight: Int,
                      _ call: @escaping @Sendable (Delegate, CMSampleBuffer) -> Void) -> CaptureDataOutput? {
        guard let delegate, let queue else { return nil }
        let output = CaptureDataOutput(sampleTypes: types, maximumPicturesInFlight: picturesInFlight)
        output.setSampleBufferHandler(queue: queue) { sample, _ in call(delegate.delegate, sample) }
        return output
    }
}

/// Hands every picture the session captures to a delegate on a queue (`AVCaptureVideoDataOutput`),
/// through SwiftRecord's ``CaptureDataOutput``; each sample's time is on the capture clock.
public final class AVCaptureVideoDataOutput: AVCaptureOutput, @unchecked Sendable {
    private struct State: Sendable {
        var delivery = SampleBufferDelivery<any AVCaptureVideoDataOutputSampleBufferDelegate>()
        var alwaysDiscardsLateVideoFrames = true
    }
    private let state = Locked(State())

    public override init() { super.init() }

    override var mediaTypes: [AVMediaType] { [.video] }

    /// Pictures arriving while the delegate still handles the one before are dropped
    /// (`alwaysDiscardsLateVideoFrames`, true by default); false: up to 15 wait.
    public var alwaysDiscardsLateVideoFrames: Bool {
        get { state.withLock { $0.alwaysDiscardsLateVideoFrames } }
        set { state.withLock { $0.alwaysDiscardsLateVideoFrames = newValue } }
    }

    /// Where pictures go (`setSampleBufferDelegate(_:queue:)`): `captureOutput(_:didOutput:from:)`
    /// of `sampleBufferDelegate`, on `sampleBufferCallbackQueue`. Takes effect when the
    /// session next starts running or recording.
    public func setSampleBufferDelegate(_ sampleBufferDelegate: (any AVCaptureVideoDataOutputSampleBufferDelegate)?,
                                        queue sampleBufferCallbackQueue: DispatchQueue?) {
        state.withLock { s in
            s.delivery.delegate = sampleBufferDelegate.map(DelegateReference.init)
            s.delivery.queue = sampleBufferDelegate == nil ? nil : sampleBufferCallbackQueue
        }
    }

    /// The delegate (`sampleBufferDelegate`).
    public var sampleBufferDelegate: (any AVCaptureVideoDataOutputSampleBufferDelegate)? { state.withLock { $0.delivery.delegate?.delegate } }
    /// Its queue (`sampleBufferCallbackQueue`).
    public var sampleBufferCallbackQueue: DispatchQueue? { state.withLock { $0.delivery.queue } }

    /// SwiftRecord's data output for one run; nil without a delegate.
    func nativeOutput() -> CaptureDataOutput? {
        let (delivery, discards) = state.withLock { ($0.delivery, $0.alwaysDiscardsLateVideoFrames) }
        let connection = AVCaptureConnection(output: self, mediaType: .video)
        return delivery.nativeOutput([.video], picturesInFlight: discards ? 1 : 15) { [weak self] delegate, sample in
            guard let self else { return }
            delegate.captureOutput(self, didOutput: sample, from: connection)
        }
    }
}

/// Hands every buffer of sound the session captures to a delegate on a queue
/// (`AVCaptureAudioDataOutput`), through SwiftRecord's ``CaptureDataOutput``.
public final class AVCaptureAudioDataOutput: AVCaptureOutput, @unchecked Sendable {
    private let delivery = Locked(SampleBufferDelivery<any AVCaptureAudioDataOutputSampleBufferDelegate>())

    public override init() { super.init() }

    override var mediaTypes: [AVMediaType] { [.audio] }

    /// Where sound goes (`setSampleBufferDelegate(_:queue:)`): `captureOutput(_:didOutput:from:)`
    /// of `sampleBufferDelegate`, on `sampleBufferCallbackQueue`; never dropped.
    public func setSampleBufferDelegate(_ sampleBufferDelegate: (any AVCaptureAudioDataOutputSampleBufferDelegate)?,
                                        queue sampleBufferCallbackQueue: DispatchQueue?) {
        delivery.withLock { d in
            d.delegate = sampleBufferDelegate.map(DelegateReference.init)
            d.queue = sampleBufferDelegate == nil ? nil : sampleBufferCallbackQueue
        }
    }

    /// The delegate (`sampleBufferDelegate`).
    public var sampleBufferDelegate: (any AVCaptureAudioDataOutputSampleBufferDelegate)? { delivery.withLock { $0.delegate?.delegate } }
    /// Its queue (`sampleBufferCallbackQueue`).
    public var sampleBufferCallbackQueue: DispatchQueue? { delivery.withLock { $0.queue } }

    /// SwiftRecord's data output for one run; nil without a delegate.
    func nativeOutput() -> CaptureDataOutput? {
        let connection = AVCaptureConnection(output: self, mediaType: .audio)
        return delivery.withLock { $0 }.nativeOutput([.audioApp, .audioMic], picturesInFlight: 1) { [weak self] delegate, sample in
            guard let self else { return }
            delegate.captureOutput(self, didOutput: sample, from: connection)
        }
    }
}

import Foundation
import Logging
import SwiftRecord
import SwiftRecordPipeWire

/// How the compositor shows the mouse cursor in a screen cast (Mutter's `cursor-mode`,
/// the portal's `cursor_mode` bits).
enum CursorMode: UInt32 {
    case hidden = 0, embedded = 1, metadata = 2
}

/// A Wayland screen as a live capture source: the compositor's screen cast, read as a
/// PipeWire video stream.
///
/// Wayland gives no client the screen; a program asks the compositor over D-Bus, which
/// answers with a PipeWire node that streams the pictures. This source asks through the
/// desktop portal (``ScreenCastPortal``: any desktop, the desktop's chooser, a restore
/// token to skip it next time) or GNOME's compositor directly (`org.gnome.Mutter.ScreenCast`:
/// no chooser, one monitor), holding the one D-Bus connection the cast lives on until
/// `stop()`, and reads the node with
/// libpipewire in shared memory (BGRx, BGRA, RGBx or RGBA; the stride and crop region the
/// compositor sends are honoured). A compositor that offers only DMA-BUF (GPU memory)
/// is refused with an error saying so.
///
/// The compositor sends a picture only when something changed. Each `nextFrame(from:)`
/// copies the newest one into a BGRA buffer from the pool, once; when nothing came since,
/// it returns the same picture marked unchanged, so a session repeats it at a constant
/// frame rate or, in the content-driven mode, lengthens the previous frame.
///
/// The compositor or PipeWire going away makes `nextFrame` throw a `SwiftRecordError`
/// saying so; the session then finishes the file with what it has.
public final class WaylandSource: CaptureSource {
    public static let name = "wayland"

    /// Which monitor, through which interface, with or without the cursor.
    public struct Configuration: CaptureSourceConfiguration {
        public static let sourceName = WaylandSource.name

        /// The D-Bus interface the screen is asked for through.
        public enum ScreenCast: String, Sendable, CaseIterable {
            /// The desktop portal (`org.freedesktop.portal.ScreenCast`): the desktop's chooser.
            case portal
            /// GNOME's compositor directly (`org.gnome.Mutter.ScreenCast`): no chooser.
            case mutter
        }

        /// Through which interface; nil: the portal when one answers on the session bus
        /// (``ScreenCastPortal/isAvailable(timeout:)``), else Mutter.
        public var screenCast: ScreenCast?
        /// The monitor's connector name (`Meta-0`, `HDMI-1`); nil: the primary monitor.
        /// Mutter only: through the portal the user picks in the chooser.
        public var monitor: String?
        /// What the portal's chooser offers, the restore token to send and whether to ask
        /// for a new one (the cursor follows `showsCursor`).
        public var portal: ScreenCastPortal.Options
        /// The compositor draws the mouse cursor into the pictures.
        public var showsCursor: Bool
        /// With `showsCursor`: the compositor sends the cursor beside the pictures (cursor mode
        /// "metadata", `SPA_META_Cursor`) and this source draws it in, moving over a still
        /// picture without the compositor sending a new one.
        public var drawsCursorFromMetadata = false
        /// How long asking for the screen and agreeing on a format may take.
        public var startTimeout: Duration
        /// Only this rectangle of the monitor's picture (an odd side grows by a pixel); nil: all of it.
        public var region: PixelRegion?
        /// Whole BGRA pictures copied out each time, or (`damage`) yuv420p pictures in which
        /// only what the compositor says changed (`SPA_META_VideoDamage`) is copied and
        /// converted; a compositor that sends no damage metadata gets whole copies then.
        public var captureMethod: ScreenCaptureMethod
        /// The colours (matrix, range) of the `damage` method's yuv420p pictures: the
        /// encoder's, so they reach it without another conversion.
        public var pictureColor: ColorProperties
        /// A cast the portal already granted (``ScreenCastPortal/Grant``): read it, asking
        /// nothing again (`screenCast`, `monitor` and `portal` are then not used).
        public var grant: ScreenCastPortal.Grant?
        /// Interrupted, it gives up asking for the screen at once (a `.cancelled` error, the
        /// chooser closed): the command line's Ctrl-C while the chooser is open.
        package var startStop: WakeUp?

        public init(screenCast: ScreenCast? = nil, monitor: String? = nil, portal: ScreenCastPortal.Options = .init(), showsCursor: Bool = true,
                    startTimeout: Duration = .seconds(10), region: PixelRegion? = nil,
                    captureMethod: ScreenCaptureMethod = .full, pictureColor: ColorProperties = .bt709) {
            self.screenCast = screenCast
            self.monitor = monitor
            self.portal = portal
            self.showsCursor = showsCursor
            self.startTimeout = startTimeout
            self.region = region
            self.captureMethod = captureMethod
            self.pictureColor = pictureColor
        }
    }

    public let identifier = WaylandSource.name
    public let nativeSize: VideoSize
    /// BGRA; yuv420p with the `damage` capture method.
    public let pixelFormat: PixelFormat
    public let nativeFrameRate: Rational? = nil
    public let isLive = true
    public let configuration: Configuration
    /// The PipeWire node the pictures come from.
    public let node: UInt32
    /// The interface the screen was asked for through (the configuration's, or the one
    /// chosen when it named none).
    public let screenCast: Configuration.ScreenCast
    /// Through the portal: the token that skips the chooser next time (write it where the
    /// next run reads it into ``ScreenCastPortal/Options/restoreToken``); nil otherwise.
    public let restoreToken: String?

    /// The screen cast and its stream, until `stop()`.
    private final class Cast {
        let session: any ScreenCastSession
        let stream: PipeWireStream
        init(session: any ScreenCastSession, stream: PipeWireStream) {
            self.session = session
            self.stream = stream
        }
        deinit { stream.stop(); session.stop() }
    }

    struct Delivered {
        /// The picture delivered last (the `full` method).
        var picture: PixelBuffer?
        /// The screen and its conversion (the `damage` method).
        var damaged: StreamDamagePictures?
        var index = 0
        /// When the D-Bus session was last checked for the compositor closing it.
        var checkedAt: Int64 = 0
        var copier = StreamPictureCopy()
        var statistics = GrabStatistics()
    }

    /// The stream's pictures (internal: tests reach the borrow's hook through it).
    let frames: StreamFrames
    private let cast: Locked<Cast?>
    private let delivered: Locked<Delivered>
    private let clock: any HostClock
    let format: StreamFormat
    /// The rectangle of the monitor's picture recorded: `region` made even, or all of it.
    public let captureArea: PixelRegion
    /// The rectangle given to `copy`: the region, or nil for the whole picture.
    let copyRegion: PixelRegion?

    /// Asks the compositor for the screen and waits until the stream has agreed on a format,
    /// so every mistake (no compositor, no PipeWire, an unknown monitor) shows before
    /// recording starts.
    public init(configuration: Configuration = Configuration(), clock: any HostClock = MonotonicClock()) throws(SwiftRecordError) {
        self.configuration = configuration
        self.clock = clock
        let seconds = configuration.startTimeout.components.seconds
        var deadline = MonotonicClock.deadline(after: configuration.startTimeout)
        let opened = try WaylandSource.openCast(configuration, deadline: deadline)
        let session = opened.session
        // The chooser may have taken the user a while: the stream has its own time.
        deadline = MonotonicClock.deadline(after: configuration.startTimeout)
        let stream: PipeWireStream
        do {
            stream = try PipeWireStream(node: session.node, remote: opened.remote,
                                        cursorMetadata: configuration.showsCursor && configuration.drawsCursorFromMetadata)
        } catch {
            session.stop()
            throw error
        }
        let frames = stream.frames
        let agreed = frames.waitForFormat(untilNanoseconds: deadline, stop: configuration.startStop)
        guard let agreed, case .success(let format) = agreed else {
            stream.stop()
            session.stop()
            if case .failure(let error) = agreed {
                throw error.kind == .cancelled ? error : SwiftRecordError(.io, operation: "wayland",
                    message: "\(error.message); swift-record reads shared-memory pictures (BGRx, BGRA, RGBx, RGBA): a compositor that offers only DMA-BUF (GPU memory) is not supported yet; nothing was recorded")
            }
            throw SwiftRecordError(.io, operation: "wayland",
                                   message: "the compositor's PipeWire stream (node \(session.node)) agreed on no picture format within \(seconds) s; swift-record reads shared-memory pictures (BGRx, BGRA, RGBx, RGBA), not DMA-BUF; nothing was recorded")
        }
        guard format.pixelFormat.isRGB else {
            stream.stop()
            session.stop()
            throw SwiftRecordError(.unsupported, operation: "wayland", message: "the screen cast's stream chose \(format.pixelFormat), not a 4-byte RGB layout; nothing was recorded")
        }
        let whole = VideoSize(width: format.width, height: format.height)
        if let region = configuration.region {
            let even = region.evenSided(within: whole)
            guard region.width > 0, region.height > 0, region.x >= 0, region.y >= 0,
                  region.x + region.width <= whole.width, region.y + region.height <= whole.height, even.width >= 2, even.height >= 2 else {
                stream.stop()
                session.stop()
                throw SwiftRecordError(.invalidArgument, operation: "region",
                                       message: "region \(region) is not inside the \(whole) picture of the screen cast; expected x + width ≤ \(whole.width), y + height ≤ \(whole.height) and at least 2x2 pixels; nothing was recorded")
            }
            captureArea = even
            copyRegion = even
        } else {
            captureArea = PixelRegion(x: 0, y: 0, width: whole.width, height: whole.height)
            copyRegion = nil
        }
        self.format = format
        self.frames = frames
        node = session.node
        screenCast = opened.screenCast
        restoreToken = opened.restoreToken
        nativeSize = captureArea.size
        if configuration.captureMethod == .damage {
            do throws(SwiftRecordError) {
                let screen = try PixelBuffer(width: nativeSize.width, height: nativeSize.height, pixelFormat: .bgra)
                delivered = Locked(Delivered(damaged: StreamDamagePictures(pictures: try DamagePicture(screen: screen, color: configuration.pictureColor))))
            } catch {
                stream.stop()
                session.stop()
                throw error
            }
            pixelFormat = .yuv420p
        } else {
            delivered = Locked(Delivered())
            pixelFormat = .bgra
        }
        cast = Locked(Cast(session: session, stream: stream))
    }

    /// Adds `wayland` to `registry` (the command line does this at start-up): made from the
    /// options' `WaylandSource.Configuration`, or the default one (the portal when it answers, else Mutter).
    public static func register(in registry: CaptureSourceRegistry = .shared) {
        registry.register(name: WaylandSource.name, summary: "a Wayland screen through the desktop portal or GNOME's Mutter, and PipeWire") {
            try WaylandSource(configuration: $0.configuration(Configuration.self) ?? Configuration(), clock: $0.clock)
        }
    }

    public var captureDescription: String? {
        let whole: String
        switch screenCast {
        case .mutter: whole = "monitor \(configuration.monitor ?? "(primary)") through GNOME's screen cast (PipeWire node \(node)) at \(nativeSize)"
        case .portal: whole = "the screen the desktop portal granted (PipeWire node \(node)) at \(nativeSize)"
        }
        return (copyRegion.map { "region \($0) of " } ?? "") + whole
    }

    public var notices: [String] {
        guard let region = configuration.region, region != captureArea else { return [] }
        return ["capturing \(captureArea) instead of \(region): 4:2:0 video needs even sides"]
    }

    /// Pictures copied from the stream (`fullGrabs`), repeated (`unchanged`) and letterboxed
    /// because the monitor changed size (`letterboxed`).
    public var grabStatistics: GrabStatistics? { delivered[\.statistics] }

    /// Pictures the compositor has sent so far (those superseded before a grab included).
    public var picturesReceived: Int { frames.state[\.received] }

    /// How long the first picture may take to come.
    static let firstPictureWait: Int64 = 10_000_000_000
    /// How long a streaming cast may send no first picture before it is read again.
    static let firstPictureRetry: Int64 = 2_000_000_000
    /// How often the D-Bus session is checked for the compositor closing the cast.
    static let sessionCheckInterval: Int64 = 250_000_000

    public func start() throws {}

    public func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        // The first picture: a cast shows the screen at once, but give it time on a busy
        // machine, and read the cast again as a new reader when none came (headless Mutter,
        // busy, sometimes sends a still screen's one picture before the new reader can take
        // it, and then nothing). Later the last picture repeats whatever the stream does (its
        // buffers go when the compositor stops sending).
        if !delivered.withLock({ $0.picture != nil || $0.damaged?.pictures.primed == true }) {
            let reconnects = frames.waitForFirstPicture(untilNanoseconds: MonotonicClock.nanoseconds() + WaylandSource.firstPictureWait,
                                                        reconnectingAfter: WaylandSource.firstPictureRetry) {
                cast.withLock { $0?.stream.reconnect() }
            }
            if reconnects > 0 {
                Log.capture.info("the compositor sent no first picture within \(WaylandSource.firstPictureRetry / 1_000_000) ms; read its stream again \(reconnects) time(s)")
            }
        }
        try checkSession()
        let now = clock.now()
        let (frame, announcement) = try delivered.withLock { (d: inout sending Delivered) throws(SwiftRecordError) -> (CapturedFrame?, String?) in
            let look = try look(primed: d.damaged.map { $0.pictures.primed } ?? (d.picture != nil), damageMethod: d.damaged != nil)
            if look.stopping { return (nil, nil) }
            d.statistics.pictures += 1
            d.statistics.picturePixels = nativeSize.width * nativeSize.height
            if d.damaged != nil {
                return try updateDamaged(&d, look, now: now)
            }
            if let held = look.held {
                // Copied with the stream's lock released: PipeWire's callback meanwhile only
                // swaps newer buffers in, and this one goes back when the copy is done.
                defer { frames.endBorrow() }
                look.whileBorrowed?()
                let picture = try pool.makePixelBuffer()
                let outcome = d.copier.copy(held.pointer, format: look.format, region: copyRegion, into: picture)
                // The cursor where it is on the monitor, so moved by the region's corner; not
                // over a letterboxed picture (scaled: its place there would be wrong).
                if outcome == .copied { look.cursor?.composite(into: picture, shiftedBy: copyRegion.map { ($0.x, $0.y) } ?? (0, 0)) }
                d.picture = picture
                d.index += 1
                d.statistics.fullGrabs += 1
                d.statistics.grabbedPixels += d.statistics.picturePixels
                let announcement = d.copier.announcement(after: outcome, recordingSize: nativeSize)
                d.statistics.letterboxed = d.copier.letterboxed
                return (CapturedFrame(pixelBuffer: picture, captureTime: now, index: d.index), announcement)
            }
            guard let picture = d.picture else {
                throw SwiftRecordError(.io, operation: "wayland", message: "the compositor sent no picture within \(WaylandSource.firstPictureWait / 1_000_000_000) s")
            }
            d.index += 1
            d.statistics.unchanged += 1
            return (CapturedFrame(pixelBuffer: picture, captureTime: now, index: d.index, isUnchanged: true), nil)
        }
        // Said outside the locks: a slow standard error never holds up PipeWire's thread.
        if let announcement { Log.capture.warning("\(announcement)") }
        return frame
    }

    /// Throws when the compositor closed the cast (checked every `sessionCheckInterval`).
    private func checkSession() throws(SwiftRecordError) {
        let now = MonotonicClock.nanoseconds()
        let due = delivered.withLock { d in
            guard now - d.checkedAt >= WaylandSource.sessionCheckInterval else { return false }
            d.checkedAt = now
            return true
        }
        guard due else { return }
        let result: Result<Void, SwiftRecordError>? = cast.withLockIfAvailable { c in
            guard let c else { return .success(()) }
            do throws(SwiftRecordError) { try c.session.checkOpen(); return .success(()) } catch { return .failure(error) }
        }
        if case .failure(let error) = result { throw error }
    }

    /// Ends the cast and the stream. Safe to call more than once.
    public func stop() {
        frames.state.withLockNotifying { $0.stopping = true }
        cast.withLock { $0 = nil }
    }
}

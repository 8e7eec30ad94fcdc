internal import CX11
import Foundation
import SwiftRecord

/// A rectangle of the screen in pixels (`--region`, a window's frame).
public typealias CaptureRect = PixelRegion

/// The X11 screen (all of it, a region, or one window) as a live capture source.
///
/// Each `nextFrame(from:)` grabs the screen at once and returns a BGRA picture stamped
/// with the monotonic time of the grab. With MIT-SHM (a local server) the server copies
/// the screen straight into shared memory that the returned pixel buffer wraps: no copy
/// on our side; those buffers come from the source's own small ring of segments, reused
/// once the previous frame's holders let go. Without MIT-SHM (a remote display)
/// `XGetImage` fills a buffer from the pool given. The cursor is composited from XFixes.
/// 24- and 32-bit visuals are supported.
///
/// With `CaptureMethod.damage` (and the XDamage extension, for the screen or a region)
/// the source follows the screen's changes instead: it grabs and converts only the
/// rectangles that changed since the last picture, returns the previous picture untouched
/// when nothing did, and delivers yuv420p pictures in the encoder's colours (see
/// `DamageState`). Without XDamage it grabs whole pictures and says so in `notices`.
///
/// Xlib protocol and I/O errors never end the process: a window that closes, a screen
/// that shrinks under the capture area or a server that goes away make `nextFrame`
/// throw a `SwiftRecordError` saying so.
///
/// The counterpart of a screen-capture `AVCaptureScreenInput` / ScreenCaptureKit stream.
public final class X11Source: CaptureSource {
    public static let name = "x11"

    /// What to capture from an X display, and how: the source's typed settings.
    public struct Configuration: CaptureSourceConfiguration {
        public static let sourceName = X11Source.name

        /// The part of the screen to record.
        public enum Area: Sendable, Equatable {
            /// The whole screen.
            case screen
            /// A rectangle of the screen.
            case region(CaptureRect)
            /// A window, followed as it moves (its size is fixed when capture starts).
            case window(UInt)
            /// A RandR 1.5 monitor by name (`X11Source.monitors(display:)` lists them).
            case monitor(String)
        }

        /// `:0`, `:1.0`, `host:0`; nil means `$DISPLAY`.
        public var display: String?
        public var area: Area
        /// Draw the mouse cursor into the pictures (XFixes).
        public var showsCursor: Bool
        /// Use MIT-SHM when the server offers it; otherwise (or when false) `XGetImage`.
        public var allowsSharedMemory: Bool
        /// How each picture is grabbed: all of it every time, or only what changed.
        public var captureMethod: CaptureMethod
        /// The colours (matrix, range) of the yuv420p pictures damage-driven capture
        /// delivers: the encoder's, so they reach it without another conversion.
        public var pictureColor: ColorProperties

        /// Whole pictures every time (BGRA), or only the changed parts (yuv420p, XDamage).
        public typealias CaptureMethod = ScreenCaptureMethod

        public init(display: String? = nil, area: Area = .screen, showsCursor: Bool = true, allowsSharedMemory: Bool = true,
                    captureMethod: CaptureMethod = .full, pictureColor: ColorProperties = .bt709) {
            self.display = display
            self.area = area
            self.showsCursor = showsCursor
            self.allowsSharedMemory = allowsSharedMemory
            self.captureMethod = captureMethod
            self.pictureColor = pictureColor
        }
    }

    public let identifier = X11Source.name
    public let nativeSize: VideoSize
    /// BGRA; yuv420p when the source follows damage (`followsDamage`).
    public let pixelFormat: PixelFormat
    public let nativeFrameRate: Rational? = nil
    public let isLive = true

    public let configuration: Configuration
    /// The display's name as opened (`:1`).
    public let displayName: String
    /// The size of the screen captured from.
    public let screenSize: VideoSize
    /// The area asked for (the region, the window's rectangle, or the screen).
    public let requestedArea: CaptureRect
    /// The area captured at the start: `requestedArea` grown (or, at the screen's edge,
    /// shrunk) by a pixel where a side is odd, because 4:2:0 video needs even sides.
    public let initialCaptureArea: CaptureRect
    /// True when only the screen's changes are grabbed and converted (`CaptureMethod.damage`
    /// with XDamage, for the screen or a region; a followed window is grabbed whole).
    public let followsDamage: Bool
    /// Said when damage-driven capture was asked for and cannot be had.
    private let damageNotice: String?
    /// The counts behind `grabStatistics`, apart from the grabber's lock (which a stuck grab holds).
    private let grabCounts = Locked<GrabStatistics?>(nil)

    /// The connection and the ring. The grabbing thread holds the lock for each grab (an X
    /// round trip or two: the connection and the shared-memory segments are the grab's
    /// alone while it runs); `stop()` from another thread does not wait behind it, see
    /// `stop()`.
    private let grabber: Locked<X11Grabber>

    /// Opens the display and checks the area, so every mistake shows before recording
    /// starts. `clock` stamps each picture with the moment it was taken.
    public init(configuration: Configuration = Configuration(), clock: any HostClock = MonotonicClock()) throws(SwiftRecordError) {
        self.configuration = configuration
        let connection = try X11Connection(name: configuration.display)
        guard let display = connection.display else { throw connection.lostError }
        displayName = connection.name
        screenSize = VideoSize(width: connection.screenWidth, height: connection.screenHeight)

        let requested: CaptureRect
        switch configuration.area {
        case .window(let window):
            requested = try X11Source.windowArea(window, connection: connection)
        case .region(let region):
            guard region.width > 0, region.height > 0, region.x >= 0, region.y >= 0,
                  region.x + region.width <= screenSize.width, region.y + region.height <= screenSize.height else {
                throw SwiftRecordError(.invalidArgument, operation: "region",
                                       message: "region \(region) is not inside the \(screenSize) screen of display \(connection.name); expected x + width ≤ \(screenSize.width) and y + height ≤ \(screenSize.height)")
            }
            requested = region
        case .monitor(let name):
            requested = try X11Source.monitorArea(name, connection: connection)
        case .screen:
            requested = CaptureRect(x: 0, y: 0, width: screenSize.width, height: screenSize.height)
        }
        requestedArea = requested
        let even = X11Source.evenArea(requested, screen: screenSize)
        guard even.width >= 2, even.height >= 2 else {
            throw SwiftRecordError(.invalidArgument, operation: "region", message: "area \(requested) is too small to record; expected at least 2x2 pixels")
        }
        initialCaptureArea = even
        nativeSize = even.size

        // One pixel through XGetImage tells the layout and proves the area can be read.
        _ = connection.takeError()
        guard let probe = XGetImage(display, connection.root, Int32(even.x), Int32(even.y), 1, 1, sr_all_planes(), ZPixmap) else {
            let reason = connection.isLost ? "the X server went away" : connection.takeError().map { connection.describe($0) } ?? "no image"
            throw SwiftRecordError(.io, operation: "XGetImage", message: "cannot read the screen of display \(connection.name): \(reason)")
        }
        let layout = X11PixelLayout(probe.pointee)
        sr_x_destroy_image(probe)
        guard layout.isSupported else {
            throw SwiftRecordError(.unsupported, operation: "x11", message: "display \(connection.name) uses a pixel layout swift-record cannot read (\(layout.description)); use a 24- or 32-bit colour depth")
        }
        var isWindow = false
        if case .window = configuration.area { isWindow = true }
        let wantsDamage = configuration.captureMethod == .damage && !isWindow
        let damageProblem = wantsDamage ? DamageState.unavailability(display, name: connection.name) : nil
        followsDamage = wantsDamage && damageProblem == nil
        damageNotice = damageProblem.map { "\($0): grabbing the whole picture every frame" }
        pixelFormat = followsDamage ? .yuv420p : .bgra
        grabber = Locked(X11Grabber(connection: connection, configuration: configuration, clock: clock, layout: layout, area: even,
                                    damageColor: followsDamage ? configuration.pictureColor : nil))
    }

    /// Adds `x11` to `registry` (the command line does this at start-up): made from the
    /// options' `X11Source.Configuration`, or the whole screen of `$DISPLAY` without one,
    /// with `open` (a server that does not answer is an error after `answerTimeout`).
    public static func register(in registry: CaptureSourceRegistry = .shared) {
        registry.register(name: X11Source.name, summary: "the X11 screen, a region of it, or a window (MIT-SHM, XFixes cursor)") {
            try X11Source.open(configuration: $0.configuration(Configuration.self) ?? Configuration(), clock: $0.clock)
        }
    }

    /// How long opening the display may take. A stopped or hung X server accepts the
    /// connection and never answers its handshake, and Xlib waits for it forever.
    public static let answerTimeout: Duration = .seconds(5)

    /// `init(configuration:clock:)`, on a thread of its own so that a server that does not
    /// answer is an error after `timeout` ("the X server at :1 did not answer within 5 s")
    /// instead of a hang. The abandoned opening finishes (and closes) by itself if the
    /// server ever answers.
    public static func open(configuration: Configuration = Configuration(), clock: any HostClock = MonotonicClock(),
                            timeout: Duration = answerTimeout) throws(SwiftRecordError) -> X11Source {
        try answered(display: configuration.display, timeout: timeout) { () throws(SwiftRecordError) in
            try X11Source(configuration: configuration, clock: clock)
        }
    }

    /// `body`'s result, run on a thread of its own; an error naming `display` when it has
    /// not returned within `timeout` (it finishes by itself if the server ever answers).
    static func answered<T: Sendable>(display: String?, timeout: Duration,
                                      _ body: @escaping @Sendable () throws(SwiftRecordError) -> T) throws(SwiftRecordError) -> T {
        let outcome = Locked<Result<T, SwiftRecordError>?>(nil)
        let thread = Thread {
            let result = Result { () throws(SwiftRecordError) -> T in try body() }
            outcome.withLockNotifying { $0 = result }
        }
        thread.name = "swift-record.x11-open"
        thread.start()
        let deadline = MonotonicClock.deadline(after: timeout)
        guard let result = outcome.wait(untilNanoseconds: deadline, { $0 }) else {
            let name = display.flatMap { $0.isEmpty ? nil : $0 } ?? ProcessInfo.processInfo.environment["DISPLAY"] ?? "(DISPLAY)"
            throw SwiftRecordError(.io, operation: "x11",
                                   message: "the X server at \(name) did not answer within \(timeout.components.seconds) s (is it stopped or hung?); nothing was recorded")
        }
        return try result.get()
    }

    public var captureDescription: String? {
        let what: String
        switch configuration.area {
        case .screen: what = "the screen"
        case .region: what = "region \(requestedArea)"
        case .monitor(let name): what = "monitor \(name) (\(requestedArea))"
        case .window(let id): what = "window \(X11Source.hex(id))"
        }
        return "\(what) of display \(displayName) at \(nativeSize)"
    }

    public var notices: [String] {
        (initialCaptureArea == requestedArea ? []
            : ["capturing \(initialCaptureArea) instead of \(requestedArea): 4:2:0 video needs even sides"])
            + (damageNotice.map { [$0] } ?? [])
    }

    /// Whole, partial and skipped grabs so far, when the source follows damage.
    public var grabStatistics: GrabStatistics? { grabCounts.withLock { $0 } }

    /// True when pictures come straight from shared memory (after `start()`).
    public var usesSharedMemory: Bool { grabber.withLock { $0.method == .sharedMemory } }

    /// The shared-memory segments in use (diagnostics and tests).
    var sharedMemorySegmentIDs: [Int32] {
        grabber.withLock { g in
            g.ring.map { $0.image.segment.id } + [g.scratch, g.damageState?.scratch, g.damageState?.screenImage].compactMap { $0?.segment.id }
        }
    }

    /// The area the last picture showed (it moves with a followed window).
    public var captureArea: CaptureRect { grabber.withLock { $0.area } }

    public func start() throws {
        try grabber.withLock { (g: inout sending X11Grabber) throws(SwiftRecordError) in try g.start() }
    }

    public func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        try grabber.withLock { (g: inout sending X11Grabber) throws(SwiftRecordError) -> CapturedFrame? in
            do throws(SwiftRecordError) {
                let frame = try g.grab(from: pool)
                if let counts = g.damageState?.statistics { grabCounts.withLock { $0 = counts } }
                return frame
            } catch {
                // After an I/O error Xlib keeps the display locked for the thread that saw it:
                // only this thread can close it, so it is closed here, at once.
                if g.connection?.isLost == true { g.release() }
                throw error
            }
        }
    }

    /// Releases the connection and the shared memory. Does not wait behind a grab that
    /// is stuck (a frozen X server never answers): that grab keeps the connection, and
    /// releases it itself if it ever returns with an error.
    public func stop() {
        _ = grabber.withLockIfAvailable { $0.release() }
    }
}

internal import CX11
import Foundation
import SwiftRecord

/// A rectangle of the screen in pixels (`--region`, a window's frame).
public typealias CaptureRect = PixelRegion

/// What to capture from an X display, and how.
public struct X11CaptureConfiguration: Sendable {
    /// `:0`, `:1.0`, `host:0`; nil means `$DISPLAY`.
    public var displayName: String?
    /// Part of the screen to capture; nil means the whole screen (or the window).
    public var region: CaptureRect?
    /// A window to follow as it moves (its size is fixed when capture starts).
    public var windowID: UInt?
    /// Draw the mouse cursor into the pictures (XFixes).
    public var showsCursor: Bool
    /// Use MIT-SHM when the server offers it; otherwise (or when false) `XGetImage`.
    public var allowsSharedMemory: Bool
    /// Stamps each picture with the moment it was taken.
    public var clock: any HostClock

    public init(displayName: String? = nil, region: CaptureRect? = nil, windowID: UInt? = nil, showsCursor: Bool = true,
                allowsSharedMemory: Bool = true, clock: any HostClock = MonotonicClock()) {
        self.displayName = displayName
        self.region = region
        self.windowID = windowID
        self.showsCursor = showsCursor
        self.allowsSharedMemory = allowsSharedMemory
        self.clock = clock
    }
}

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
/// Xlib protocol and I/O errors never end the process: a window that closes, a screen
/// that shrinks under the capture area or a server that goes away make `nextFrame`
/// throw a `SwiftRecordError` saying so.
///
/// The counterpart of a screen-capture `AVCaptureScreenInput` / ScreenCaptureKit stream.
public final class X11Source: CaptureSource, @unchecked Sendable {
    public static let name = "x11"

    public let identifier = X11Source.name
    public let nativeSize: VideoSize
    public let pixelFormat = PixelFormat.bgra
    public let nativeFrameRate: Rational? = nil
    public let isLive = true

    public let configuration: X11CaptureConfiguration
    /// The display's name as opened (`:1`).
    public let displayName: String
    /// The size of the screen captured from.
    public let screenSize: VideoSize
    /// The area asked for (the region, the window's rectangle, or the screen).
    public let requestedArea: CaptureRect
    /// The area captured at the start: `requestedArea` grown (or, at the screen's edge,
    /// shrunk) by a pixel where a side is odd, because 4:2:0 video needs even sides.
    public let initialCaptureArea: CaptureRect

    /// Segments in the shared-memory ring: the picture being grabbed, the last one shown
    /// (a session repeats it when a tick has no new picture), one waiting for the encoder,
    /// and a spare for an encoder that keeps a reference.
    static let ringCapacity = 4

    /// Grabs after which a ring segment no one used is given back (its pages then leave
    /// the process's memory): two seconds at 30 fps. A short encoder stall makes the ring
    /// grow; steady recording needs one segment.
    static let idleSegmentLifetime = 60

    private struct Slot {
        let image: SharedMemoryImage
        var buffer: PixelBuffer
        /// The grab count when this slot was last filled.
        var lastUsed: Int
    }

    private enum Method { case sharedMemory, getImage }

    private let lock = NSLock()
    private var connection: X11Connection?
    private var visual: UnsafeMutablePointer<Visual>?
    private var depth: Int32 = 0
    private var layout: X11PixelLayout
    private var method = Method.getImage
    private var ring: [Slot] = []
    /// Shared-memory image converted from when the layout is not BGRA.
    private var scratch: SharedMemoryImage?
    private var cursor: CursorOverlay?
    private var area: CaptureRect
    private var frameIndex = 0

    /// Opens the display and checks the area, so every mistake shows before recording starts.
    public init(configuration: X11CaptureConfiguration) throws(SwiftRecordError) {
        self.configuration = configuration
        let connection = try X11Connection(name: configuration.displayName)
        guard let display = connection.display else { throw connection.lostError }
        displayName = connection.name
        screenSize = VideoSize(width: connection.screenWidth, height: connection.screenHeight)

        let requested: CaptureRect
        if let window = configuration.windowID {
            guard configuration.region == nil else {
                throw SwiftRecordError(.invalidArgument, operation: "x11", message: "give a region or a window, not both")
            }
            requested = try X11Source.windowArea(window, connection: connection)
        } else if let region = configuration.region {
            guard region.width > 0, region.height > 0, region.x >= 0, region.y >= 0,
                  region.x + region.width <= screenSize.width, region.y + region.height <= screenSize.height else {
                throw SwiftRecordError(.invalidArgument, operation: "region",
                                       message: "region \(region) is not inside the \(screenSize) screen of display \(connection.name); expected x + width ≤ \(screenSize.width) and y + height ≤ \(screenSize.height)")
            }
            requested = region
        } else {
            requested = CaptureRect(x: 0, y: 0, width: screenSize.width, height: screenSize.height)
        }
        requestedArea = requested
        let even = X11Source.evenArea(requested, screen: screenSize)
        guard even.width >= 2, even.height >= 2 else {
            throw SwiftRecordError(.invalidArgument, operation: "region", message: "area \(requested) is too small to record; expected at least 2x2 pixels")
        }
        initialCaptureArea = even
        area = even
        nativeSize = even.size

        // One pixel through XGetImage tells the layout and proves the area can be read.
        _ = connection.takeError()
        guard let probe = XGetImage(display, connection.root, Int32(even.x), Int32(even.y), 1, 1, sr_all_planes(), ZPixmap) else {
            let reason = connection.isLost ? "the X server went away" : connection.takeError().map { connection.describe($0) } ?? "no image"
            throw SwiftRecordError(.io, operation: "XGetImage", message: "cannot read the screen of display \(connection.name): \(reason)")
        }
        layout = X11PixelLayout(probe.pointee)
        sr_x_destroy_image(probe)
        guard layout.isSupported else {
            throw SwiftRecordError(.unsupported, operation: "x11", message: "display \(connection.name) uses a pixel layout swift-record cannot read (\(layout.description)); use a 24- or 32-bit colour depth")
        }
        visual = XDefaultVisual(display, connection.screen)
        depth = XDefaultDepth(display, connection.screen)
        self.connection = connection
    }

    /// A source from the command line's options: parameters `display`, `region`
    /// (`x,y,w,h`), `window` (an id, decimal or 0x hex), `cursor` (`on`/`off`), `shm` (`on`/`off`).
    public convenience init(options: CaptureSourceOptions) throws(SwiftRecordError) {
        let p = options.parameters
        var config = X11CaptureConfiguration(displayName: p["display"], clock: options.clock)
        if let text = p["region"] {
            config.region = try ValueParsing.region(text)
        }
        if let text = p["window"] {
            guard let id = X11Source.parseWindowID(text) else {
                throw SwiftRecordError(.invalidArgument, operation: "window", message: "'\(text)' is not a window id; expected a number such as 0x2a00007 or 44040199 (xwininfo shows it)")
            }
            config.windowID = id
        }
        config.showsCursor = p["cursor"].map { $0 != "off" && $0 != "0" } ?? true
        config.allowsSharedMemory = p["shm"].map { $0 != "off" && $0 != "0" } ?? true
        try self.init(configuration: config)
    }

    /// Adds `x11` to `registry` (the command line does this at start-up).
    public static func register(in registry: CaptureSourceRegistry = .shared) {
        registry.register(name: X11Source.name, summary: "the X11 screen, a region of it, or a window (MIT-SHM, XFixes cursor)") {
            try X11Source(options: $0)
        }
    }

    deinit { release() }

    /// `0x2a00007` or `44040199`.
    public static func parseWindowID(_ text: String) -> UInt? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        let id = t.hasPrefix("0x") ? UInt(t.dropFirst(2), radix: 16) : UInt(t)
        return id.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Grows an odd side by one pixel (right or down, or left or up at the screen's edge),
    /// or shrinks it when the screen itself is that small.
    static func evenArea(_ r: CaptureRect, screen: VideoSize) -> CaptureRect {
        func fix(_ start: Int, _ length: Int, _ limit: Int) -> (Int, Int) {
            guard length % 2 != 0 else { return (start, length) }
            if start + length + 1 <= limit { return (start, length + 1) }
            if start > 0 { return (start - 1, length + 1) }
            return (start, length - 1)
        }
        let (x, w) = fix(r.x, r.width, screen.width)
        let (y, h) = fix(r.y, r.height, screen.height)
        return CaptureRect(x: x, y: y, width: w, height: h)
    }

    /// The window's rectangle on the screen, clipped to the screen's size.
    private static func windowArea(_ window: UInt, connection: X11Connection) throws(SwiftRecordError) -> CaptureRect {
        guard let display = connection.display else { throw connection.lostError }
        _ = connection.takeError()
        var attributes = XWindowAttributes()
        guard XGetWindowAttributes(display, window, &attributes) != 0 else {
            throw SwiftRecordError(.invalidArgument, operation: "window", message: "display \(connection.name) has no window \(hex(window)); xwininfo shows the ids")
        }
        let position = try windowPosition(window, connection: connection)
        let w = min(Int(attributes.width), connection.screenWidth)
        let h = min(Int(attributes.height), connection.screenHeight)
        return clamp(CaptureRect(x: position.x, y: position.y, width: w, height: h),
                     screen: VideoSize(width: connection.screenWidth, height: connection.screenHeight))
    }

    /// Where the window's top-left corner is on the root window (a round trip).
    private static func windowPosition(_ window: UInt, connection: X11Connection) throws(SwiftRecordError) -> (x: Int, y: Int) {
        guard let display = connection.display, !connection.isLost else { throw connection.lostError }
        var x: Int32 = 0, y: Int32 = 0
        var child: UInt = 0
        if XTranslateCoordinates(display, window, connection.root, 0, 0, &x, &y, &child) == 0 {
            if connection.isLost { throw connection.lostError }
            _ = connection.takeError()
            throw SwiftRecordError(.io, operation: "window", message: "window \(hex(window)) is gone from display \(connection.name) (closed?)")
        }
        return (Int(x), Int(y))
    }

    /// Moves `r` so it lies on the screen (a window partly off screen is captured at the edge).
    static func clamp(_ r: CaptureRect, screen: VideoSize) -> CaptureRect {
        var c = r
        c.x = max(0, min(r.x, screen.width - r.width))
        c.y = max(0, min(r.y, screen.height - r.height))
        return c
    }

    private static func hex(_ id: UInt) -> String { "0x" + String(id, radix: 16) }

    /// True when pictures come straight from shared memory (after `start()`).
    public var usesSharedMemory: Bool { lock.withLock { method == .sharedMemory } }

    /// The shared-memory segments in use (diagnostics and tests).
    var sharedMemorySegmentIDs: [Int32] {
        lock.withLock { ring.map { $0.image.segment.id } + (scratch.map { [$0.segment.id] } ?? []) }
    }

    /// The area the last picture showed (it moves with a followed window).
    public var captureArea: CaptureRect { lock.withLock { area } }

    public func start() throws {
        lock.lock()
        defer { lock.unlock() }
        if connection == nil {
            // Started again after stop(): reconnect.
            let c = try X11Connection(name: configuration.displayName)
            guard let display = c.display else { throw c.lostError }
            visual = XDefaultVisual(display, c.screen)
            depth = XDefaultDepth(display, c.screen)
            connection = c
        }
        guard let connection, let display = connection.display, let visual else { throw SwiftRecordError(.invalidState, operation: "x11", message: "the source is closed") }
        method = .getImage
        if configuration.allowsSharedMemory && XShmQueryExtension(display) != 0 {
            // The first segment doubles as the test that the server can use our memory.
            do throws(SwiftRecordError) {
                let image = try SharedMemoryImage(connection: connection, visual: visual, depth: depth, width: area.width, height: area.height)
                if layout.isBGRA {
                    ring.append(try makeSlot(image))
                } else {
                    scratch = image
                }
                method = .sharedMemory
            } catch {
                // A remote server, or one in another IPC namespace: XGetImage it is.
                guard error.kind == .unsupported else { throw error }
            }
        }
        if configuration.showsCursor {
            var eventBase: Int32 = 0, errorBase: Int32 = 0
            cursor = XFixesQueryExtension(display, &eventBase, &errorBase) != 0 ? CursorOverlay() : nil
        }
    }

    private func makeSlot(_ image: SharedMemoryImage) throws(SwiftRecordError) -> Slot {
        let segment = image.segment
        let buffer = try PixelBuffer(wrapping: segment.address, width: image.width, height: image.height,
                                     bytesPerRow: image.bytesPerRow, pixelFormat: .bgra) {
            // The segment stays mapped until the last holder of this picture lets go.
            withExtendedLifetime(segment) {}
        }
        return Slot(image: image, buffer: buffer, lastUsed: frameIndex)
    }

    public func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        lock.lock()
        defer { lock.unlock() }
        do {
            return try grab(from: pool)
        } catch {
            // After an I/O error Xlib keeps the display locked for the thread that saw it:
            // only this thread can close it, so it is closed here, at once.
            if connection?.isLost == true { release() }
            throw error
        }
    }

    private func grab(from pool: PixelBufferPool) throws(SwiftRecordError) -> CapturedFrame {
        guard let connection, let display = connection.display else {
            throw SwiftRecordError(.invalidState, operation: "x11", message: "the source is not started")
        }
        if connection.isLost { throw connection.lostError }
        if let window = configuration.windowID {
            let p = try X11Source.windowPosition(window, connection: connection)
            area = X11Source.clamp(CaptureRect(x: p.x, y: p.y, width: area.width, height: area.height), screen: screenSize)
        }
        let buffer: PixelBuffer
        let time: MediaTime
        switch method {
        case .sharedMemory where layout.isBGRA:
            let i = try freeSlot(connection)
            time = configuration.clock.now()
            guard ring[i].image.grab(root: connection.root, x: area.x, y: area.y) else { throw grabError(connection) }
            ring[i].lastUsed = frameIndex
            buffer = ring[i].buffer
            releaseIdleSlots()
        case .sharedMemory:
            guard let scratch else { throw SwiftRecordError(.invalidState, operation: "x11", message: "no shared-memory image") }
            buffer = try pool.makePixelBuffer()
            time = configuration.clock.now()
            guard scratch.grab(root: connection.root, x: area.x, y: area.y) else { throw grabError(connection) }
            buffer.withWriteAccess { planes in
                layout.convert(from: scratch.segment.address, bytesPerRow: scratch.bytesPerRow, into: planes[0].baseAddress,
                               bytesPerRow: planes[0].bytesPerRow, width: area.width, height: area.height)
            }
        case .getImage:
            buffer = try pool.makePixelBuffer()
            time = configuration.clock.now()
            _ = connection.takeError()
            guard let image = XGetImage(display, connection.root, Int32(area.x), Int32(area.y), UInt32(area.width), UInt32(area.height),
                                        sr_all_planes(), ZPixmap) else { throw grabError(connection) }
            defer { sr_x_destroy_image(image) }
            let imageLayout = X11PixelLayout(image.pointee)
            guard let data = image.pointee.data else { throw grabError(connection) }
            let stride = Int(image.pointee.bytes_per_line)
            let (w, h) = (area.width, area.height)
            buffer.withWriteAccess { planes in
                let plane = planes[0]
                if imageLayout.isBGRA {
                    for row in 0..<h {
                        (plane.baseAddress + row * plane.bytesPerRow).copyMemory(from: data + row * stride, byteCount: w * 4)
                    }
                } else {
                    imageLayout.convert(from: data, bytesPerRow: stride, into: plane.baseAddress, bytesPerRow: plane.bytesPerRow, width: w, height: h)
                }
            }
        }
        cursor?.draw(connection, into: buffer, originX: area.x, originY: area.y)
        if connection.isLost { throw connection.lostError }
        frameIndex += 1
        return CapturedFrame(pixelBuffer: buffer, captureTime: time, index: frameIndex - 1)
    }

    /// A ring slot no one else holds (neither a caller nor an encoder), made if there is
    /// room; `.poolExhausted` when every segment is still in use (the frame is dropped).
    private func freeSlot(_ connection: X11Connection) throws(SwiftRecordError) -> Int {
        for i in ring.indices where isKnownUniquelyReferenced(&ring[i].buffer) && ring[i].buffer.isUniquelyReferenced {
            return i
        }
        guard ring.count < X11Source.ringCapacity, let visual else {
            throw SwiftRecordError(.poolExhausted, operation: "x11", message: "all \(ring.count) shared-memory images are still in use; dropping this frame")
        }
        let image = try SharedMemoryImage(connection: connection, visual: visual, depth: depth, width: area.width, height: area.height)
        ring.append(try makeSlot(image))
        return ring.count - 1
    }

    /// Gives back segments (beyond the first) that no one has used for a while.
    private func releaseIdleSlots() {
        guard ring.count > 1 else { return }
        var i = ring.count - 1
        while i > 0 {
            if frameIndex - ring[i].lastUsed > X11Source.idleSegmentLifetime,
               isKnownUniquelyReferenced(&ring[i].buffer), ring[i].buffer.isUniquelyReferenced {
                ring[i].image.destroy()
                ring.remove(at: i)
            }
            i -= 1
        }
    }

    private func grabError(_ connection: X11Connection) -> SwiftRecordError {
        if connection.isLost { return connection.lostError }
        if let e = connection.takeError() {
            if e.code == UInt8(BadMatch) {
                return SwiftRecordError(.io, operation: "x11", message: "the capture area \(area) is no longer on the screen of display \(connection.name) (did the screen change size?)")
            }
            return SwiftRecordError(.io, operation: "x11", message: "grabbing the screen of display \(connection.name) failed: \(connection.describe(e))")
        }
        return SwiftRecordError(.io, operation: "x11", message: "grabbing the screen of display \(connection.name) failed")
    }

    public func stop() {
        lock.withLock { release() }
    }

    /// Frees the X resources in order: images (detached from the server), then the connection.
    private func release() {
        for slot in ring { slot.image.destroy() }
        ring.removeAll()
        scratch?.destroy()
        scratch = nil
        cursor = nil
        connection?.close()
        connection = nil
    }
}

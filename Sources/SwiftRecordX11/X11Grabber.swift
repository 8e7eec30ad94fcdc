internal import CX11
import SwiftRecord

/// The grabbing half of `X11Source`: the connection, the shared-memory ring, the cursor
/// and the capture area, used with the source's lock held.
///
/// Not `Sendable`: Xlib objects and the ring belong to one source, and a lost connection
/// must be closed on the thread that saw it go.
final class X11Grabber {
    /// Segments in the shared-memory ring: the picture being grabbed, the last one shown
    /// (a session repeats it when a tick has no new picture), one waiting for the encoder,
    /// and a spare for an encoder that keeps a reference.
    static let ringCapacity = 4

    /// Grabs after which a ring segment no one used is given back (its pages then leave
    /// the process's memory): two seconds at 30 fps. A short encoder stall makes the ring
    /// grow; steady recording needs one segment.
    static let idleSegmentLifetime = 60

    struct Slot {
        let image: SharedMemoryImage
        var buffer: PixelBuffer
        /// The grab count when this slot was last filled.
        var lastUsed: Int
    }

    enum Method { case sharedMemory, getImage }

    let displayName: String?
    let windowID: UInt?
    let showsCursor: Bool
    let allowsSharedMemory: Bool
    let clock: any HostClock
    let screenSize: VideoSize
    let layout: X11PixelLayout
    private(set) var connection: X11Connection?
    private var visual: UnsafeMutablePointer<Visual>?
    private(set) var depth: Int32 = 0
    var method = Method.getImage
    private(set) var ring: [Slot] = []
    /// Shared-memory image converted from when the layout is not BGRA.
    private(set) var scratch: SharedMemoryImage?
    var cursor: CursorOverlay?
    /// The colours of damage-driven capture's yuv420p pictures; nil: whole BGRA grabs.
    let damageColor: ColorProperties?
    /// Damage-driven capture, once started (X11Grabber+Damage.swift).
    var damageState: DamageState?
    /// The area the last picture showed (it moves with a followed window).
    private(set) var area: CaptureRect
    var frameIndex = 0

    init(connection: X11Connection, configuration: X11Source.Configuration, clock: any HostClock,
         layout: X11PixelLayout, area: CaptureRect, damageColor: ColorProperties?) {
        self.damageColor = damageColor
        displayName = configuration.display
        if case .window(let id) = configuration.area { windowID = id } else { windowID = nil }
        showsCursor = configuration.showsCursor
        allowsSharedMemory = configuration.allowsSharedMemory
        self.clock = clock
        screenSize = VideoSize(width: connection.screenWidth, height: connection.screenHeight)
        self.layout = layout
        self.area = area
        if let display = connection.display {
            visual = XDefaultVisual(display, connection.screen)
            depth = XDefaultDepth(display, connection.screen)
        }
        self.connection = connection
    }

    deinit { release() }

    /// Connects again if stopped, and chooses MIT-SHM or XGetImage.
    func start() throws(SwiftRecordError) {
        if connection == nil {
            // Started again after stop(): reconnect.
            let c = try X11Connection(name: displayName)
            guard let display = c.display else { throw c.lostError }
            visual = XDefaultVisual(display, c.screen)
            depth = XDefaultDepth(display, c.screen)
            connection = c
        }
        guard let connection, let display = connection.display, let visual else { throw SwiftRecordError(.invalidState, operation: "x11", message: "the source is closed") }
        method = .getImage
        if let damageColor {
            try startDamage(connection, display: display, visual: visual, color: damageColor)
            return
        }
        if allowsSharedMemory && X11Connection.serialized({ XShmQueryExtension(display) }) != 0 {
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
        if showsCursor {
            var eventBase: Int32 = 0, errorBase: Int32 = 0
            cursor = X11Connection.serialized { XFixesQueryExtension(display, &eventBase, &errorBase) } != 0 ? CursorOverlay() : nil
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

    func grab(from pool: PixelBufferPool) throws(SwiftRecordError) -> CapturedFrame {
        guard let connection, let display = connection.display else {
            throw SwiftRecordError(.invalidState, operation: "x11", message: "the source is not started")
        }
        if connection.isLost { throw connection.lostError }
        if damageColor != nil { return try grabDamage(connection, display: display) }
        if let window = windowID {
            let p = try X11Source.windowPosition(window, connection: connection)
            area = CaptureRect(x: p.x, y: p.y, width: area.width, height: area.height)
            if area.x < 0 || area.y < 0 || area.x + area.width > screenSize.width || area.y + area.height > screenSize.height {
                return try grabPartlyOffScreen(connection, display: display, pool: pool)
            }
        }
        let buffer: PixelBuffer
        let time: MediaTime
        switch method {
        case .sharedMemory where layout.isBGRA:
            let i = try freeSlot(connection)
            time = clock.now()
            guard ring[i].image.grab(root: connection.root, x: area.x, y: area.y) else { throw grabError(connection) }
            ring[i].lastUsed = frameIndex
            buffer = ring[i].buffer
            releaseIdleSlots()
        case .sharedMemory:
            guard let scratch else { throw SwiftRecordError(.invalidState, operation: "x11", message: "no shared-memory image") }
            buffer = try pool.makePixelBuffer()
            time = clock.now()
            guard scratch.grab(root: connection.root, x: area.x, y: area.y) else { throw grabError(connection) }
            buffer.withWriteAccess { planes in
                layout.convert(from: scratch.segment.address, bytesPerRow: scratch.bytesPerRow, into: planes[0].baseAddress,
                               bytesPerRow: planes[0].bytesPerRow, width: area.width, height: area.height)
            }
        case .getImage:
            buffer = try pool.makePixelBuffer()
            time = clock.now()
            _ = connection.takeError()
            try copyRoot(CaptureRect(x: area.x, y: area.y, width: area.width, height: area.height), connection, display,
                         into: buffer, atX: 0, y: 0)
        }
        return try finish(buffer, time: time, connection)
    }

    /// Draws the cursor and counts the frame.
    private func finish(_ buffer: PixelBuffer, time: MediaTime, _ connection: X11Connection) throws(SwiftRecordError) -> CapturedFrame {
        cursor?.draw(connection, into: buffer, originX: area.x, originY: area.y)
        if connection.isLost { throw connection.lostError }
        frameIndex += 1
        return CapturedFrame(pixelBuffer: buffer, captureTime: time, index: frameIndex - 1)
    }

    /// Copies `rect` of the root window (`XGetImage`) into `buffer` at (x, y), as BGRA.
    func copyRoot(_ rect: CaptureRect, _ connection: X11Connection, _ display: OpaquePointer,
                          into buffer: PixelBuffer, atX x: Int, y: Int) throws(SwiftRecordError) {
        guard let image = XGetImage(display, connection.root, Int32(rect.x), Int32(rect.y), UInt32(rect.width), UInt32(rect.height),
                                    sr_all_planes(), ZPixmap) else { throw grabError(connection) }
        defer { sr_x_destroy_image(image) }
        guard let data = image.pointee.data else { throw grabError(connection) }
        X11PixelLayout(image.pointee).copy(from: data, bytesPerRow: Int(image.pointee.bytes_per_line), into: buffer,
                                           atX: x, y: y, width: rect.width, height: rect.height)
    }

    /// A followed window partly or wholly off the screen: only its own rectangle is shown,
    /// the part beyond the screen's edge black (the picture is never moved onto a
    /// neighbouring part of the screen).
    private func grabPartlyOffScreen(_ connection: X11Connection, display: OpaquePointer,
                                              pool: PixelBufferPool) throws(SwiftRecordError) -> CapturedFrame {
        let buffer = try pool.makePixelBuffer()
        let time = clock.now()
        let (width, height) = (area.width, area.height)
        buffer.withWriteAccess { planes in
            for row in 0..<height {
                // Opaque black in BGRA.
                (planes[0].baseAddress + row * planes[0].bytesPerRow).initializeMemory(as: UInt32.self, repeating: 0xFF00_0000, count: width)
            }
        }
        let x0 = max(0, area.x), y0 = max(0, area.y)
        let x1 = min(screenSize.width, area.x + width), y1 = min(screenSize.height, area.y + height)
        if x0 < x1, y0 < y1 {
            _ = connection.takeError()
            try copyRoot(CaptureRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0), connection, display,
                         into: buffer, atX: x0 - area.x, y: y0 - area.y)
        }
        return try finish(buffer, time: time, connection)
    }

    /// A ring slot no one else holds (neither a caller nor an encoder), made if there is
    /// room; `.poolExhausted` when every segment is still in use (the frame is dropped).
    private func freeSlot(_ connection: X11Connection) throws(SwiftRecordError) -> Int {
        for i in ring.indices where isKnownUniquelyReferenced(&ring[i].buffer) && ring[i].buffer.isUniquelyReferenced {
            return i
        }
        guard ring.count < X11Grabber.ringCapacity, let visual else {
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
            if frameIndex - ring[i].lastUsed > X11Grabber.idleSegmentLifetime,
               isKnownUniquelyReferenced(&ring[i].buffer), ring[i].buffer.isUniquelyReferenced {
                ring[i].image.destroy()
                ring.remove(at: i)
            }
            i -= 1
        }
    }

    func grabError(_ connection: X11Connection) -> SwiftRecordError {
        if connection.isLost { return connection.lostError }
        if let e = connection.takeError() {
            if e.code == UInt8(BadMatch) {
                return SwiftRecordError(.io, operation: "x11", message: "the capture area \(area) is no longer on the screen of display \(connection.name) (did the screen change size?)")
            }
            return SwiftRecordError(.io, operation: "x11", message: "grabbing the screen of display \(connection.name) failed: \(connection.describe(e))")
        }
        return SwiftRecordError(.io, operation: "x11", message: "grabbing the screen of display \(connection.name) failed")
    }
    /// Frees the X resources in order: images (detached from the server), then the connection.
    func release() {
        releaseDamage()
        for slot in ring { slot.image.destroy() }
        ring.removeAll()
        scratch?.destroy()
        scratch = nil
        cursor = nil
        connection?.close()
        connection = nil
    }
}

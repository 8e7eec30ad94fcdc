internal import CX11
import SwiftRecord

/// Damage-driven capture: the X server's XDamage extension says which parts of the screen
/// changed since the last grab, and only those are grabbed and converted.
///
/// Two pictures persist between grabs (`DamagePicture`): the screen area as BGRA (with the
/// cursor drawn in), and its yuv420p conversion, the picture delivered. Each grab takes the damage gathered
/// since the last one (`XDamageSubtract`, then `XFixesFetchRegion`: one round trip),
/// grabs those rectangles into the BGRA picture, redraws the cursor if it moved, changed
/// shape or had pixels grabbed under it (its old and new rectangles are grabbed again
/// first, so it is always composited over clean pixels, once), and converts the same
/// rectangles. A grab with nothing changed returns the same picture again without touching
/// a pixel. A picture someone still holds is never changed (see `DamagePicture`). With
/// MIT-SHM and a BGRA screen, the BGRA picture is a shared-memory segment, so a whole grab
/// lands in place; rectangles go through a second segment and are copied into place.
struct DamageState {
    let damage: UInt
    let region: UInt
    /// Rectangles are grabbed into its start (MIT-SHM), or nil: `XGetImage`.
    var scratch: SharedMemoryImage?
    /// The segment the screen picture wraps, when whole grabs can land in place.
    var screenImage: SharedMemoryImage?
    /// The screen as BGRA and the yuv420p picture delivered.
    var pictures: DamagePicture
    var cursorRect: CaptureRect?
    var cursorSerial: UInt = 0
    var statistics = GrabStatistics()

    /// Why damage-driven capture cannot follow `display` (`name`), nil when it can: libXdamage
    /// cannot be loaded, or the server lacks what it needs (XDamage and XFixes regions).
    static func unavailability(_ display: OpaquePointer, name: String) -> String? {
        do throws(SwiftRecordError) {
            try XDamageLibrary.load()
        } catch {
            return error.message
        }
        var event: Int32 = 0, error: Int32 = 0
        let offered = X11Connection.serialized { XDamageQueryExtension(display, &event, &error) != 0 && XFixesQueryExtension(display, &event, &error) != 0 }
        return offered ? nil : "display \(name) has no XDamage extension"
    }
}

extension X11Grabber {
    /// Sets up damage-driven capture: the damage object on the root window, the two
    /// pictures, and a shared-memory image to grab rectangles into when the server can.
    func startDamage(_ connection: X11Connection, display: OpaquePointer, visual: UnsafeMutablePointer<Visual>,
                     color: ColorProperties) throws(SwiftRecordError) {
        if let problem = DamageState.unavailability(display, name: connection.name) {
            throw SwiftRecordError(.unsupported, operation: "x11", message: problem)
        }
        let size = area.size
        var scratch: SharedMemoryImage?, screenImage: SharedMemoryImage?
        if allowsSharedMemory && X11Connection.serialized({ XShmQueryExtension(display) }) != 0 {
            do throws(SwiftRecordError) {
                scratch = try SharedMemoryImage(connection: connection, visual: visual, depth: depth, width: size.width, height: size.height)
                if layout.isBGRA {
                    screenImage = try SharedMemoryImage(connection: connection, visual: visual, depth: depth, width: size.width, height: size.height)
                }
            } catch {
                scratch?.destroy()
                scratch = nil
                guard error.kind == .unsupported else { throw error }
            }
        }
        let screen: PixelBuffer
        if let segment = screenImage?.segment, let image = screenImage {
            screen = try PixelBuffer(wrapping: segment.address, width: size.width, height: size.height,
                                     bytesPerRow: image.bytesPerRow, pixelFormat: .bgra) { withExtendedLifetime(segment) {} }
        } else {
            screen = try PixelBuffer(width: size.width, height: size.height, pixelFormat: .bgra)
        }
        _ = connection.takeError()
        // Non-empty reports: one event when damage appears, none while it grows (no bursts).
        let damage = XDamageCreate(display, connection.root, Int32(XDamageReportNonEmpty))
        let region = XFixesCreateRegion(display, nil, 0)
        connection.sync()
        if let e = connection.takeError() {
            scratch?.destroy()
            screenImage?.destroy()
            throw SwiftRecordError(.io, operation: "XDamageCreate", message: "cannot follow the screen's changes on display \(connection.name): \(connection.describe(e))")
        }
        let pictures: DamagePicture
        do throws(SwiftRecordError) {
            pictures = try DamagePicture(screen: screen, color: color)
        } catch {
            scratch?.destroy()
            screenImage?.destroy()
            XDamageDestroy(display, damage)
            XFixesDestroyRegion(display, region)
            throw error
        }
        var state = DamageState(damage: damage, region: region, scratch: scratch, screenImage: screenImage, pictures: pictures)
        state.statistics.picturePixels = size.width * size.height
        damageState = state
        method = scratch == nil ? .getImage : .sharedMemory
        if showsCursor {
            var eventBase: Int32 = 0, errorBase: Int32 = 0
            cursor = X11Connection.serialized { XFixesQueryExtension(display, &eventBase, &errorBase) } != 0 ? CursorOverlay() : nil
        }
    }

    /// Frees the damage object and the region (while the connection is open), and the image.
    func releaseDamage() {
        guard let state = damageState else { return }
        damageState = nil
        state.scratch?.destroy()
        state.screenImage?.destroy()
        if let connection, let display = connection.display, !connection.isLost {
            XDamageDestroy(display, state.damage)
            XFixesDestroyRegion(display, state.region)
        }
    }

    /// One damage-driven picture; see `DamageState`.
    func grabDamage(_ connection: X11Connection, display: OpaquePointer) throws(SwiftRecordError) -> CapturedFrame {
        guard var state = damageState else { throw SwiftRecordError(.invalidState, operation: "x11", message: "damage capture is not set up") }
        // Taken out while in use, so `state` alone holds the picture unless the caller still does.
        damageState = nil
        defer { damageState = state }
        // Damage events only say "something changed"; the region is asked for below.
        while XPending(display) > 0 {
            var event = XEvent()
            XNextEvent(display, &event)
        }
        let time = clock.now()
        let whole = CaptureRect(x: 0, y: 0, width: area.width, height: area.height)
        XDamageSubtract(display, state.damage, 0, state.region)
        var rects = state.pictures.primed ? try damagedRects(connection, display, region: state.region, converter: state.pictures.converter) : [whole]
        // The cursor: its old and new rectangles when it moved or changed shape, its
        // rectangle when pixels under it are grabbed again.
        let now = cursor?.update(connection).map {
            CaptureRect(x: $0.x - area.x, y: $0.y - area.y, width: $0.width, height: $0.height)
        }.flatMap { $0.intersects(whole) ? $0 : nil }
        let serial = cursor?.shapeSerial ?? 0
        if now != state.cursorRect || serial != state.cursorSerial {
            rects += [state.cursorRect, now].compactMap { $0.flatMap(state.pictures.converter.aligned) }
        } else if let r = now, rects.contains(where: { $0.intersects(r) }), let a = state.pictures.converter.aligned(r) {
            rects.append(a)
        }
        (state.cursorRect, state.cursorSerial) = (now, serial)
        rects = state.pictures.simplified(rects)
        state.statistics.pictures += 1
        frameIndex += 1
        guard !rects.isEmpty else {
            state.statistics.unchanged += 1
            return CapturedFrame(pixelBuffer: state.pictures.picture, captureTime: time, index: frameIndex - 1, isUnchanged: true)
        }
        if rects == [whole], let image = state.screenImage {
            guard image.grab(root: connection.root, x: area.x, y: area.y) else { throw grabError(connection) }
        } else {
            for r in rects {
                try grabRect(r, connection, display, scratch: state.scratch, into: state.pictures.screen)
            }
        }
        if let now, rects.contains(where: { $0.intersects(now) }) {
            cursor?.composite(into: state.pictures.screen, left: now.x, top: now.y)
        }
        if connection.isLost { throw connection.lostError }
        let picture = try state.pictures.convert(rects)
        if rects == [whole] { state.statistics.fullGrabs += 1 } else { state.statistics.partialGrabs += 1 }
        state.statistics.rectangles += rects.count
        state.statistics.grabbedPixels += rects.reduce(0) { $0 + $1.width * $1.height }
        return CapturedFrame(pixelBuffer: picture, captureTime: time, index: frameIndex - 1, dirtyRects: rects)
    }

    /// The damaged rectangles inside the capture area, in its coordinates, made even.
    private func damagedRects(_ connection: X11Connection, _ display: OpaquePointer, region: UInt,
                              converter: RegionConverter) throws(SwiftRecordError) -> [CaptureRect] {
        var count: Int32 = 0
        guard let list = XFixesFetchRegion(display, region, &count) else {
            if connection.isLost { throw connection.lostError }
            return []
        }
        defer { XFree(list) }
        return (0..<Int(max(0, count))).compactMap { i in
            let r = list[i]
            return converter.aligned(CaptureRect(x: Int(r.x) - area.x, y: Int(r.y) - area.y, width: Int(r.width), height: Int(r.height)))
        }
    }

    /// Grabs `rect` of the capture area into the same place of `screen`.
    private func grabRect(_ rect: CaptureRect, _ connection: X11Connection, _ display: OpaquePointer,
                          scratch: SharedMemoryImage?, into screen: PixelBuffer) throws(SwiftRecordError) {
        let onScreen = CaptureRect(x: area.x + rect.x, y: area.y + rect.y, width: rect.width, height: rect.height)
        guard let scratch else {
            _ = connection.takeError()
            try copyRoot(onScreen, connection, display, into: screen, atX: rect.x, y: rect.y)
            return
        }
        guard scratch.grab(root: connection.root, x: onScreen.x, y: onScreen.y, width: rect.width, height: rect.height) else {
            throw grabError(connection)
        }
        layout.copy(from: scratch.segment.address, bytesPerRow: scratch.bytesPerRow(forWidth: rect.width), into: screen,
                    atX: rect.x, y: rect.y, width: rect.width, height: rect.height)
    }
}

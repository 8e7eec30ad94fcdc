import CoreMedia
import Foundation
import SwiftRecord
import SwiftRecordWayland
import SwiftRecordX11

extension SCContentFilter {
    /// Only `included` windows of the display. Neither backend can show some windows of a
    /// display and not others: throws, naming what the display's backend can do instead.
    public convenience init(display: SCDisplay, including included: [SCWindow]) throws {
        let ids = included.map { "0x" + String($0.windowID, radix: 16) }.joined(separator: ", ")
        throw SCContentFilter.refusal(display, "capture only chosen windows (\(ids.isEmpty ? "none" : ids)) of a display")
    }

    /// The display without the windows of `applications` (except `exceptingWindows`). Honoured
    /// when those applications had no window on screen when listed (nothing of them to leave
    /// out: a recorder leaving out itself); otherwise throws as `excludingWindows:` does.
    public convenience init(display: SCDisplay, excludingApplications applications: [SCRunningApplication], exceptingWindows: [SCWindow]) throws {
        let shown = Set(exceptingWindows.map(\.windowID))
        let owning = applications.filter { !$0.onScreenWindowIDs.allSatisfy(shown.contains) }
        guard owning.isEmpty else {
            let names = owning.map { "\($0.applicationName) (pid \($0.processID), \($0.onScreenWindowIDs.count) windows)" }.joined(separator: ", ")
            throw SCContentFilter.refusal(display, "leave out the windows of \(names)")
        }
        try self.init(display: display, excludingWindows: [])
    }

    /// Only the windows of `applications` on the display: throws, as `including:` does.
    public convenience init(display: SCDisplay, includingApplications applications: [SCRunningApplication], exceptingWindows: [SCWindow]) throws {
        let names = applications.map { "\($0.applicationName) (pid \($0.processID))" }.joined(separator: ", ")
        throw SCContentFilter.refusal(display, "capture only chosen applications' windows (\(names.isEmpty ? "none" : names)) of a display")
    }

    /// The error for what `display`'s backend cannot do (`what`), naming what it can.
    static func refusal(_ display: SCDisplay, _ what: String) -> SwiftRecordError {
        let message = display.connector == nil
            ? "the X11 backend cannot \(what): X11 composes every window into one screen picture; capture the display whole with SCContentFilter(display:excludingWindows: []), or one window alone with SCContentFilter(desktopIndependentWindow:)"
            : "the Wayland backend cannot \(what): Mutter's RecordMonitor casts monitor \(display.name) whole; capture the display whole with SCContentFilter(display:excludingWindows: []), or let the user pick one window with SCContentSharingPicker (the desktop portal's chooser)"
        return SwiftRecordError(.unsupported, operation: "SCContentFilter", message: message)
    }

    /// A window of `$DISPLAY` (Xwayland) in a Wayland session: Xwayland's screen holds no
    /// pictures there, and a Wayland client names no window; the portal's chooser can.
    static func waylandWindowRefusal(_ w: SCWindow) -> SwiftRecordError {
        let instead = ScreenCastPortal.isAvailable(timeout: .seconds(2))
            ? "let the user pick it with SCContentSharingPicker.shared.present(using: .window) (the desktop portal's chooser)"
            : "that needs the desktop portal's chooser (SCContentSharingPicker), and no desktop portal answers on the session bus (install xdg-desktop-portal and the desktop's backend: -gnome, -kde or -wlr); without it the Wayland backend can capture a display: SCContentFilter(display:excludingWindows: [])"
        return SwiftRecordError(.unsupported, operation: "SCContentFilter",
                                message: "the Wayland backend cannot capture window 0x\(String(w.windowID, radix: 16)) alone (desktopIndependentWindow): it is a window of $DISPLAY (Xwayland), whose screen holds no pictures in a Wayland session; \(instead)")
    }

    /// The capture source for this filter: X11's (`x11Configuration`), Mutter's screen cast of
    /// a Wayland display, or the portal's granted cast. `method`: whole pictures, or damage-driven.
    func makeSource(showsCursor: Bool, sourceRect: CGRect, method: ScreenCaptureMethod) throws -> any CaptureSource {
        var c = WaylandSource.Configuration(showsCursor: showsCursor, captureMethod: method)
        switch content {
        case .display(let d) where d.connector != nil:
            (c.screenCast, c.monitor) = (.mutter, d.connector)
        case .portal(let grant):
            // The picker asked for the cursor as metadata: drawn here when it is to show.
            (c.grant, c.drawsCursorFromMetadata) = (grant, true)
        case .window(let w) where w.xDisplay == nil && (try? SCShareableContent.displayServer(environment: ProcessInfo.processInfo.environment)) == .wayland:
            throw SCContentFilter.waylandWindowRefusal(w)
        default:
            return try X11Source(configuration: x11Configuration(showsCursor: showsCursor, sourceRect: sourceRect, method: method))
        }
        if !sourceRect.isEmpty, !sourceRect.isNull {
            let r = sourceRect.integral
            guard r.minX >= 0, r.minY >= 0, r.maxX <= contentRect.width, r.maxY <= contentRect.height else {
                throw SwiftRecordError(.invalidArgument, operation: "SCStreamConfiguration.sourceRect",
                                       message: "sourceRect \(sourceRect) is not inside the content (\(Int(contentRect.width))x\(Int(contentRect.height)))")
            }
            c.region = PixelRegion(x: Int(r.minX), y: Int(r.minY), width: Int(r.width), height: Int(r.height))
        }
        return try WaylandSource(configuration: c)
    }
}

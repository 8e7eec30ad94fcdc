import CoreMedia
import Foundation
import SwiftRecord
import SwiftRecordWayland
import SwiftRecordX11

/// What a stream captures: a display, or one window on its own.
///
/// X11 composes every window into one screen picture, so a filter there is an area of the
/// screen: a display's monitor, or a window's rectangle as it moves (what covers it is
/// captured too). On Wayland a display is one of Mutter's monitors (its `RecordMonitor`), and
/// a window only what the user picked in the desktop portal's chooser
/// (``SCContentSharingPicker``). What a backend cannot do throws at once, naming the backend
/// and what it can do instead.
public final class SCContentFilter: Sendable {
    enum Content: Sendable {
        case display(SCDisplay)
        case window(SCWindow)
        /// What the user picked in the desktop portal's chooser (a monitor or a window).
        case portal(ScreenCastPortal.Grant)
    }
    let content: Content

    init(content: Content) {
        self.content = content
    }

    /// Where the content lies on its display, in pixels (points are pixels here).
    public var contentRect: CGRect {
        switch content {
        case .display(let d): return CGRect(x: 0, y: 0, width: d.width, height: d.height)
        case .window(let w): return CGRect(origin: .zero, size: w.frame.size)
        case .portal(let grant):
            let size = grant.stream.size ?? VideoSize(width: 0, height: 0)
            return CGRect(x: 0, y: 0, width: size.width, height: size.height)
        }
    }
    /// 1: X11's and the compositor's stream's pixels are points.
    public let pointPixelScale: Float = 1

    /// The whole display, except `excluded` windows. Neither backend can leave a window out
    /// of a display's picture (X11 composes every window into one; Mutter's `RecordMonitor`
    /// casts the monitor whole): any window throws, naming what the display's backend can do.
    public init(display: SCDisplay, excludingWindows excluded: [SCWindow]) throws {
        guard excluded.isEmpty else {
            let ids = excluded.map { "0x" + String($0.windowID, radix: 16) }.joined(separator: ", ")
            throw SCContentFilter.refusal(display, "exclude windows (\(ids)) from a display")
        }
        content = .display(display)
    }

    /// One window alone: on X11, its rectangle of the screen, followed as it moves (windows
    /// over it show, as X11 has no per-window pictures without a compositor). In a Wayland
    /// session a window of `$DISPLAY` (Xwayland) cannot be captured: a stream's start and a
    /// screenshot throw, naming the Wayland backend and the portal's chooser
    /// (``SCContentSharingPicker``), which is how a Wayland window is captured.
    public init(desktopIndependentWindow window: SCWindow) {
        content = .window(window)
    }

    /// The X11 source settings this filter asks for: a stream follows the screen's damage
    /// (its pictures' dirty rectangles and idle frames), a screenshot grabs it whole.
    func x11Configuration(showsCursor: Bool, sourceRect: CGRect, method: ScreenCaptureMethod) throws -> X11Source.Configuration {
        var c = X11Source.Configuration(showsCursor: showsCursor, captureMethod: method)
        switch content {
        case .display(let d):
            c.display = d.xDisplay
            var area = d.area
            if !sourceRect.isEmpty, !sourceRect.isNull {
                let r = sourceRect.integral
                guard r.minX >= 0, r.minY >= 0, r.maxX <= CGFloat(d.width), r.maxY <= CGFloat(d.height) else {
                    throw SwiftRecordError(.invalidArgument, operation: "SCStreamConfiguration.sourceRect",
                                           message: "sourceRect \(sourceRect) is not inside display \(d.name) (\(d.width)x\(d.height))")
                }
                area = CaptureRect(x: d.area.x + Int(r.minX), y: d.area.y + Int(r.minY), width: Int(r.width), height: Int(r.height))
            }
            c.area = .region(area)
        case .window(let w):
            c.display = w.xDisplay
            c.area = .window(UInt(w.windowID))
        case .portal:
            throw SwiftRecordError(.invalidState, operation: "SCContentFilter", message: "a portal's screen cast is not an X11 area")
        }
        return c
    }
}

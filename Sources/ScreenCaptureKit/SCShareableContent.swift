import CoreMedia
import Foundation
import SwiftRecord
import SwiftRecordX11

/// A display that can be captured: on X11, one RandR monitor (`--list-monitors`'s).
public final class SCDisplay: Sendable, Equatable {
    /// The monitor's position in RandR's list, from 1 (`CGDirectDisplayID` on the Mac).
    public let displayID: UInt32
    public let width: Int, height: Int
    /// Where the monitor lies on the X11 screen, in pixels (points are pixels here).
    public let frame: CGRect
    /// The RandR monitor's name (`DP-1`, `screen`); not on the Mac.
    public let name: String
    /// The X display it is on (nil: `$DISPLAY`).
    let xDisplay: String?
    let area: CaptureRect

    init(id: UInt32, monitor: X11Source.Monitor, xDisplay: String?) {
        (displayID, name, area, self.xDisplay) = (id, monitor.name, monitor.area, xDisplay)
        (width, height) = (monitor.area.width, monitor.area.height)
        frame = CGRect(x: monitor.area.x, y: monitor.area.y, width: monitor.area.width, height: monitor.area.height)
    }

    public static func == (a: SCDisplay, b: SCDisplay) -> Bool { a.displayID == b.displayID && a.area == b.area && a.name == b.name }
}

/// An application owning windows: on X11, a process named by its windows' `_NET_WM_PID`.
public final class SCRunningApplication: Sendable, Equatable {
    /// The process's executable name (`/proc/PID/comm`); empty on the Mac's terms when
    /// unknown. Linux applications have no bundle: the executable's name.
    public let bundleIdentifier: String
    public let applicationName: String
    public let processID: pid_t

    init(processID: pid_t) {
        self.processID = processID
        let comm = (try? String(contentsOfFile: "/proc/\(processID)/comm", encoding: .utf8)) ?? ""
        applicationName = comm.trimmingCharacters(in: .whitespacesAndNewlines)
        bundleIdentifier = applicationName
    }

    public static func == (a: SCRunningApplication, b: SCRunningApplication) -> Bool { a.processID == b.processID }
}

/// A window that can be captured: on X11, a top-level (client) window.
public final class SCWindow: Sendable, Equatable {
    /// The X11 window id, truncated to 32 bits as X11 ids are (`CGWindowID`).
    public let windowID: UInt32
    public let frame: CGRect
    public let title: String?
    /// The process its `_NET_WM_PID` names; nil for a window without one (bare Xlib).
    public let owningApplication: SCRunningApplication?
    /// Mapped and viewable.
    public let isOnScreen: Bool
    /// 0: X11 has no window layers.
    public let windowLayer: Int = 0
    let xDisplay: String?

    init(_ w: X11Source.Window, application: SCRunningApplication?, xDisplay: String?) {
        (windowID, title, isOnScreen, owningApplication, self.xDisplay) = (UInt32(truncatingIfNeeded: w.id), w.title, w.isOnScreen, application, xDisplay)
        frame = CGRect(x: w.area.x, y: w.area.y, width: w.area.width, height: w.area.height)
    }

    public static func == (a: SCWindow, b: SCWindow) -> Bool { a.windowID == b.windowID }
}

/// What can be captured: the displays, windows and applications of the display server.
///
/// On X11 (`$DISPLAY`): RandR's monitors and the top-level windows. On Wayland alone the
/// compositor does not list windows to a client: asking throws, naming the portal's
/// chooser (`WaylandSource`) as what can be done instead.
public final class SCShareableContent: Sendable {
    public let displays: [SCDisplay]
    public let windows: [SCWindow]
    public let applications: [SCRunningApplication]

    init(displays: [SCDisplay], windows: [SCWindow], applications: [SCRunningApplication]) {
        (self.displays, self.windows, self.applications) = (displays, windows, applications)
    }

    /// Every display and window (on-screen or not).
    public static var current: SCShareableContent {
        get async throws { try await excludingDesktopWindows(false, onScreenWindowsOnly: false) }
    }

    /// The displays and windows, only the mapped ones with `onScreenWindowsOnly`.
    /// `excludeDesktopWindows` leaves out windows as large as the whole screen without a
    /// title (a desktop's background window).
    public static func excludingDesktopWindows(_ excludeDesktopWindows: Bool, onScreenWindowsOnly: Bool) async throws -> SCShareableContent {
        try await content(xDisplay: nil, excludeDesktopWindows: excludeDesktopWindows, onScreenWindowsOnly: onScreenWindowsOnly)
    }

    /// The content of X display `xDisplay` (nil: `$DISPLAY`); not on the Mac.
    public static func content(xDisplay: String?, excludeDesktopWindows: Bool = false, onScreenWindowsOnly: Bool = false) async throws -> SCShareableContent {
        if xDisplay == nil { try checkDisplayServer(environment: ProcessInfo.processInfo.environment) }
        let made = Locked<SCShareableContent?>(nil)
        try await ThreadTask().run(name: "SCShareableContent") {
            let monitors = try X11Source.monitors(display: xDisplay)
            let displays = monitors.enumerated().map { SCDisplay(id: UInt32($0.offset + 1), monitor: $0.element, xDisplay: xDisplay) }
            var apps: [pid_t: SCRunningApplication] = [:]
            var windows: [SCWindow] = []
            let screen = displays.reduce(CGRect.null) { $0.union($1.frame) }
            for w in try X11Source.windows(display: xDisplay) where w.isOnScreen || !onScreenWindowsOnly {
                if excludeDesktopWindows, w.title == nil, CGRect(x: w.area.x, y: w.area.y, width: w.area.width, height: w.area.height) == screen { continue }
                let app = w.processID.map { pid in apps[pid] ?? { let a = SCRunningApplication(processID: pid); apps[pid] = a; return a }() }
                windows.append(SCWindow(w, application: app, xDisplay: xDisplay))
            }
            let content = SCShareableContent(displays: displays, windows: windows, applications: apps.values.sorted { $0.processID < $1.processID })
            made.withLock { $0 = content }
        }
        guard let content = made.withLock({ $0 }) else { throw SwiftRecordError(.io, operation: "SCShareableContent", message: "the X server gave no answer") }
        return content
    }

    /// Throws unless `environment` names an X display: on Wayland alone, naming what can be
    /// done instead.
    package static func checkDisplayServer(environment env: [String: String]) throws(SwiftRecordError) {
        guard (env["DISPLAY"] ?? "").isEmpty else { return }
        throw SwiftRecordError(.unsupported, operation: "SCShareableContent",
                               message: (env["WAYLAND_DISPLAY"] ?? "").isEmpty
                                   ? "no display server is named ($DISPLAY is not set)"
                                   : "the Wayland backend cannot list displays and windows yet (a Wayland client cannot see other clients' windows; Mutter's monitors are not yet offered here); choose what to capture through the desktop portal's chooser (WaylandSource, swift-record --source wayland) or run under X11 or Xwayland ($DISPLAY)")
    }
}

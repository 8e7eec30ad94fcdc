import CoreMedia
import Foundation
import SwiftRecord
import SwiftRecordWayland
import SwiftRecordX11

/// A display that can be captured: on X11, one RandR monitor (`--list-monitors`'s); on
/// Wayland, one of Mutter's monitors (`org.gnome.Mutter.DisplayConfig`).
public final class SCDisplay: Sendable, Equatable {
    /// The monitor's position in RandR's or Mutter's list, from 1 (`CGDirectDisplayID` on the Mac).
    public let displayID: UInt32
    public let width: Int, height: Int
    /// Where the monitor lies on the X11 screen or Wayland desktop, in pixels (points are pixels here).
    public let frame: CGRect
    /// The RandR monitor's name (`DP-1`, `screen`) or Mutter's connector (`Meta-0`, `HDMI-1`); not on the Mac.
    public let name: String
    /// The X display it is on (nil: `$DISPLAY`).
    let xDisplay: String?
    let area: CaptureRect
    /// Mutter's connector when the display is a Wayland monitor (captured through Mutter's
    /// `RecordMonitor`); nil on X11.
    let connector: String?

    init(id: UInt32, monitor: X11Source.Monitor, xDisplay: String?) {
        (displayID, name, area, self.xDisplay, connector) = (id, monitor.name, monitor.area, xDisplay, nil)
        (width, height) = (monitor.area.width, monitor.area.height)
        frame = CGRect(x: monitor.area.x, y: monitor.area.y, width: monitor.area.width, height: monitor.area.height)
    }

    init(id: UInt32, monitor: WaylandSource.Monitor) {
        let size = monitor.size ?? VideoSize(width: 0, height: 0)
        area = monitor.frame ?? CaptureRect(x: 0, y: 0, width: size.width, height: size.height)
        (displayID, name, xDisplay, connector) = (id, monitor.name, nil, monitor.name)
        (width, height) = (size.width, size.height)
        frame = CGRect(x: area.x, y: area.y, width: area.width, height: area.height)
    }

    public static func == (a: SCDisplay, b: SCDisplay) -> Bool {
        a.displayID == b.displayID && a.area == b.area && a.name == b.name && a.connector == b.connector
    }
}

/// An application owning windows: on X11, a process named by its windows' `_NET_WM_PID`.
public final class SCRunningApplication: Sendable, Equatable {
    /// The process's executable name (`/proc/PID/comm`); empty on the Mac's terms when
    /// unknown. Linux applications have no bundle: the executable's name.
    public let bundleIdentifier: String
    public let applicationName: String
    public let processID: pid_t
    /// Its windows on screen when it was listed: an application with none can be left out
    /// of a display's picture (there is nothing of it to leave out).
    let onScreenWindowIDs: [UInt32]

    init(processID: pid_t, onScreenWindowIDs: [UInt32] = []) {
        (self.processID, self.onScreenWindowIDs) = (processID, onScreenWindowIDs)
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
/// On X11 (`$DISPLAY`): RandR's monitors and the top-level windows. In a Wayland session
/// (`$WAYLAND_DISPLAY`, and no `$DISPLAY` or `XDG_SESSION_TYPE=wayland`): GNOME's Mutter's
/// monitors, and no windows or applications, as ``windowsUnavailableReason`` says: a
/// Wayland client cannot see other programs' windows; ``SCContentSharingPicker`` (the
/// desktop portal's chooser) lets the user pick one.
public final class SCShareableContent: Sendable {
    public let displays: [SCDisplay]
    public let windows: [SCWindow]
    public let applications: [SCRunningApplication]
    /// Why ``windows`` is empty when the backend cannot list windows (Wayland), and what can
    /// be done instead; nil when it lists them (X11). Not on the Mac.
    public let windowsUnavailableReason: String?

    init(displays: [SCDisplay], windows: [SCWindow], applications: [SCRunningApplication], windowsUnavailableReason: String? = nil) {
        (self.displays, self.windows, self.applications) = (displays, windows, applications)
        self.windowsUnavailableReason = windowsUnavailableReason
    }

    /// Every display and window (on-screen or not).
    public static var current: SCShareableContent {
        get async throws { try await excludingDesktopWindows(false, onScreenWindowsOnly: false) }
    }

    /// The displays and windows, only the mapped ones with `onScreenWindowsOnly`.
    /// `excludeDesktopWindows` leaves out windows as large as the whole screen without a
    /// title (a desktop's background window).
    public static func excludingDesktopWindows(_ excludeDesktopWindows: Bool, onScreenWindowsOnly: Bool) async throws -> SCShareableContent {
        if try displayServer(environment: ProcessInfo.processInfo.environment) == .wayland { return try await waylandContent() }
        return try await content(xDisplay: nil, excludeDesktopWindows: excludeDesktopWindows, onScreenWindowsOnly: onScreenWindowsOnly)
    }

    /// The content of X display `xDisplay` (nil: `$DISPLAY`); not on the Mac.
    public static func content(xDisplay: String?, excludeDesktopWindows: Bool = false, onScreenWindowsOnly: Bool = false) async throws -> SCShareableContent {
        if xDisplay == nil, (ProcessInfo.processInfo.environment["DISPLAY"] ?? "").isEmpty {
            throw SwiftRecordError(.unsupported, operation: "SCShareableContent",
                                   message: "no X display is named ($DISPLAY is not set); in a Wayland session SCShareableContent.current lists Mutter's monitors")
        }
        let made = Locked<SCShareableContent?>(nil)
        try await ThreadTask().run(name: "SCShareableContent") {
            let monitors = try X11Source.monitors(display: xDisplay)
            let displays = monitors.enumerated().map { SCDisplay(id: UInt32($0.offset + 1), monitor: $0.element, xDisplay: xDisplay) }
            var apps: [pid_t: SCRunningApplication] = [:]
            var windows: [SCWindow] = []
            let screen = displays.reduce(CGRect.null) { $0.union($1.frame) }
            let listed = try X11Source.windows(display: xDisplay)
            var onScreen: [pid_t: [UInt32]] = [:]
            for w in listed where w.isOnScreen { if let pid = w.processID { onScreen[pid, default: []].append(UInt32(truncatingIfNeeded: w.id)) } }
            for w in listed where w.isOnScreen || !onScreenWindowsOnly {
                if excludeDesktopWindows, w.title == nil, CGRect(x: w.area.x, y: w.area.y, width: w.area.width, height: w.area.height) == screen { continue }
                let app = w.processID.map { pid in
                    apps[pid] ?? { let a = SCRunningApplication(processID: pid, onScreenWindowIDs: onScreen[pid] ?? []); apps[pid] = a; return a }()
                }
                windows.append(SCWindow(w, application: app, xDisplay: xDisplay))
            }
            let content = SCShareableContent(displays: displays, windows: windows, applications: apps.values.sorted { $0.processID < $1.processID })
            made.withLock { $0 = content }
        }
        guard let content = made.withLock({ $0 }) else { throw SwiftRecordError(.io, operation: "SCShareableContent", message: "the X server gave no answer") }
        return content
    }

    /// The display servers the backends capture.
    package enum DisplayServer: Sendable { case x11, wayland }

    /// Which backend `environment` asks for, as the command line chooses its source: Wayland
    /// in a Wayland session (`WAYLAND_DISPLAY`, and no `DISPLAY` or `XDG_SESSION_TYPE=wayland`:
    /// Xwayland's screen holds only X11 programs), X11 when `DISPLAY` is set; throws when
    /// neither is named.
    package static func displayServer(environment env: [String: String]) throws(SwiftRecordError) -> DisplayServer {
        let set = { (key: String) in !(env[key] ?? "").isEmpty }
        if set("WAYLAND_DISPLAY") && (!set("DISPLAY") || env["XDG_SESSION_TYPE"] == "wayland") { return .wayland }
        if set("DISPLAY") { return .x11 }
        throw SwiftRecordError(.unsupported, operation: "SCShareableContent",
                               message: "no display server is named: set $DISPLAY (X11) or $WAYLAND_DISPLAY (a Wayland session with GNOME's Mutter)")
    }
}

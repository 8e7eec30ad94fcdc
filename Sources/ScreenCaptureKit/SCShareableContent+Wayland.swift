import Foundation
import SwiftRecord
import SwiftRecordWayland

extension SCShareableContent {
    /// Why a Wayland session lists no windows, and what to do instead.
    static let waylandWindowsReason = "the Wayland backend lists no windows or applications: a Wayland client cannot see other programs' windows, and neither Mutter's D-Bus interfaces nor the desktop portal list them; let the user choose a window with SCContentSharingPicker (the desktop portal's chooser), or capture a display"

    /// A Wayland session's content: Mutter's monitors (`org.gnome.Mutter.DisplayConfig`), no
    /// windows (``windowsUnavailableReason`` says why).
    static func waylandContent() async throws -> SCShareableContent {
        let made = Locked<[WaylandSource.Monitor]>([])
        do {
            try await ThreadTask().run(name: "SCShareableContent") {
                let monitors = try WaylandSource.monitors()
                made.withLock { $0 = monitors }
            }
        } catch let error as SwiftRecordError {
            throw SwiftRecordError(.unsupported, operation: "SCShareableContent",
                                   message: "the Wayland backend lists displays through GNOME's Mutter, which did not answer (\(error.message)); on another desktop let the user choose with SCContentSharingPicker (the desktop portal's chooser)")
        }
        let monitors = made.withLock { $0 }
        // The primary monitor first, as the Mac's main display comes first.
        let ordered = monitors.filter(\.isPrimary) + monitors.filter { !$0.isPrimary }
        let displays = ordered.enumerated().map { SCDisplay(id: UInt32($0.offset + 1), monitor: $0.element) }
        return SCShareableContent(displays: displays, windows: [], applications: [], windowsUnavailableReason: waylandWindowsReason)
    }
}

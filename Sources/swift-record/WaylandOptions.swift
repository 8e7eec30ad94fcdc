import ArgumentParser
import Foundation
import SwiftRecord
import SwiftRecordWayland

/// What to record of a Wayland screen: `record`'s options for the wayland source
/// (`--no-cursor` is the screen's, shared with x11).
struct WaylandOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Wayland: how to ask the compositor for the screen: mutter (GNOME's org.gnome.Mutter.ScreenCast, no chooser; the default).", valueName: "api"),
            transform: { text in
                guard let api = WaylandSource.Configuration.ScreenCast(rawValue: text) else {
                    throw ValidationError("--screencast '\(text)' is not a screen-cast interface; expected \(WaylandSource.Configuration.ScreenCast.allCases.map(\.rawValue).joined(separator: " or "))")
                }
                return api
            })
    var screencast: WaylandSource.Configuration.ScreenCast?

    /// The first Wayland option given, by its name on the command line, if any.
    var givenOptionName: String? {
        [(screencast != nil, "--screencast")].first { $0.0 }?.1
    }

    /// `--monitor`, `--region` and `--no-cursor` are the screen's options (`ScreenOptions`),
    /// shared with x11.
    func configuration(screen: ScreenOptions) -> WaylandSource.Configuration {
        WaylandSource.Configuration(screenCast: screencast ?? .mutter, monitor: screen.monitor, showsCursor: !screen.noCursor,
                                    region: screen.region)
    }

    /// The source `record` chooses without `--source`, and what to announce about the
    /// choice: x11 with an X11 screen option; wayland with a Wayland option or in a Wayland
    /// session (WAYLAND_DISPLAY set, and no DISPLAY or XDG_SESSION_TYPE=wayland: XWayland
    /// sets DISPLAY too, and shows only X11 programs' windows); x11 with DISPLAY (or a
    /// screen option shared with Wayland: --no-cursor, --monitor, --region); else the
    /// synthetic scene.
    static func defaultSource(environment: [String: String], screenOption: String?, waylandOptionGiven: Bool) -> (name: String, note: String?) {
        func set(_ name: String) -> Bool { environment[name].map { !$0.isEmpty } ?? false }
        let waylandSession = set("WAYLAND_DISPLAY") && (!set("DISPLAY") || environment["XDG_SESSION_TYPE"] == "wayland")
        if let option = screenOption, !ScreenOptions.sharedWithWayland.contains(option) { return ("x11", nil) }
        if waylandOptionGiven || waylandSession {
            return ("wayland", "swift-record: Wayland session; recording the screen through the compositor's screen cast (use --source to choose)")
        }
        if set("DISPLAY") || screenOption != nil { return ("x11", nil) }
        return ("synthetic", "swift-record: no DISPLAY set; recording the synthetic scene (use --source to choose)")
    }
}

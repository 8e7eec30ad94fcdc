import ArgumentParser
import Foundation
import SwiftRecord
import SwiftRecordWayland

/// What to record of a Wayland screen: `record`'s options for the wayland source
/// (`--no-cursor` is the screen's, shared with x11).
struct WaylandOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Wayland: how to ask for the screen: portal (the desktop portal, org.freedesktop.portal.ScreenCast, with the desktop's chooser) or mutter (GNOME's org.gnome.Mutter.ScreenCast, no chooser). Default: portal when one answers on the session bus, else mutter (announced); mutter with --monitor.", valueName: "api"),
            transform: parsed { text throws(SwiftRecordError) in
                try ValueParsing.choice(text, among: WaylandSource.Configuration.ScreenCast.allCases, option: "--screencast", what: "a screen-cast interface")
            })
    var screencast: WaylandSource.Configuration.ScreenCast?

    @Option(help: ArgumentHelp("Wayland, portal: read the portal's restore token from this file if it exists (no chooser while it is valid) and write the new one there after the chooser.", valueName: "file"))
    var restoreToken: String?

    /// The first Wayland option given, by its name on the command line, if any (`--monitor`,
    /// `--region` and `--no-cursor` are the screen's, shared with x11: `ScreenOptions`).
    var givenOptionName: String? {
        [(screencast != nil, "--screencast"), (restoreToken != nil, "--restore-token")].first { $0.0 }?.1
    }

    /// What cannot go together with the screen's options (`monitor`, `--monitor`, is one of them).
    func validate(monitor: String?) throws {
        if screencast == .portal, monitor != nil {
            throw ValidationError("--monitor applies to --screencast mutter; through the portal the monitor is chosen in the desktop's chooser")
        }
        if screencast == .mutter, restoreToken != nil {
            throw ValidationError("--restore-token applies to --screencast portal; Mutter shows no chooser")
        }
    }

    /// The interface to ask through, and what to announce about the choice when none was
    /// given: mutter with --monitor; the portal when one answers on the session bus.
    func chosenScreenCast(monitor: String?, portalAnswers: () -> Bool) -> (WaylandSource.Configuration.ScreenCast, note: String?) {
        if let screencast { return (screencast, nil) }
        if monitor != nil { return (.mutter, nil) }
        if restoreToken != nil || portalAnswers() {
            return (.portal, "swift-record: screen cast through the desktop portal (org.freedesktop.portal.Desktop answers; --screencast mutter asks GNOME directly)")
        }
        return (.mutter, "swift-record: no desktop portal on the session bus; screen cast through GNOME's Mutter (org.gnome.Mutter.ScreenCast)")
    }

    /// The wayland source's settings (damage-driven pictures in the encoder's format and
    /// colours; whole ones with `--scale`, `scaling`).
    func configuration(screenCast: WaylandSource.Configuration.ScreenCast, restoreToken token: String?, screen: ScreenOptions,
                       scaling: Bool) -> WaylandSource.Configuration {
        WaylandSource.Configuration(screenCast: screenCast, monitor: screen.monitor,
                                    portal: ScreenCastPortal.Options(restoreToken: token), showsCursor: !screen.noCursor,
                                    region: screen.region, captureMethod: screen.captureMethod(scaling: scaling),
                                    pictureColor: EncoderOptions.colorProperties)
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

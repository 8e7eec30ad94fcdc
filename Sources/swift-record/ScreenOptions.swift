import ArgumentParser
import SwiftRecord
import SwiftRecordX11

/// What to record of the X11 screen: `record`'s options for the x11 source.
struct ScreenOptions: ParsableArguments {
    @Option(help: ArgumentHelp("X display to record (default: $DISPLAY).", valueName: ":N"))
    var display: String?

    @Option(help: ArgumentHelp("Record only this part of the screen: x,y,width,height in pixels (an odd side grows by a pixel).", valueName: "x,y,w,h"),
            transform: parsed(ValueParsing.region))
    var region: PixelRegion?

    @Option(help: ArgumentHelp("Record one window, following it as it moves: its id (xwininfo shows it), 0x hex or decimal.", valueName: "id"))
    var window: String?

    @Flag(help: "Leave the mouse cursor out of the recording.")
    var noCursor = false

    func validate() throws {
        if region != nil && window != nil {
            throw ValidationError("--region and --window both choose what to record; give one of them")
        }
        if let window, X11Source.parseWindowID(window) == nil {
            throw ValidationError("--window '\(window)' is not a window id; expected a number such as 0x2a00007 or 44040199 (xwininfo shows it)")
        }
    }

    /// The first screen option given, by its name on the command line, if any.
    var givenOptionName: String? {
        [(display != nil, "--display"), (region != nil, "--region"), (window != nil, "--window"), (noCursor, "--no-cursor")]
            .first { $0.0 }?.1
    }

    /// The x11 source's settings from the options.
    var configuration: X11Source.Configuration {
        let area: X11Source.Configuration.Area
        if let region {
            area = .region(region)
        } else if let id = window.flatMap(X11Source.parseWindowID) {
            area = .window(id)
        } else {
            area = .screen
        }
        return X11Source.Configuration(display: display, area: area, showsCursor: !noCursor)
    }
}

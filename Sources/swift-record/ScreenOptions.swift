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

    @Option(help: ArgumentHelp("Record one monitor, by name: an X11 RandR monitor (xrandr --listmonitors) or a Wayland connector (HDMI-1, eDP-1; default: the whole X screen, the primary Wayland monitor). --list-monitors shows them.", valueName: "name"),
            completion: .custom { _, _, _ in MonitorListing.names() })
    var monitor: String?

    @Flag(help: "List the monitors --monitor can record (X11 RandR monitors of $DISPLAY or --display, the Wayland compositor's monitors), then exit.")
    var listMonitors = false

    @Option(help: ArgumentHelp("Record one window, following it as it moves: its id (xwininfo shows it), 0x hex or decimal.", valueName: "id"))
    var window: String?

    @Flag(help: "Leave the mouse cursor out of the recording.")
    var noCursor = false

    @Option(help: ArgumentHelp("How to grab: damage (only what changed since the last frame: the XDamage extension on X11, the compositor's damage metadata on Wayland; the default) or full (the whole picture every frame).", valueName: "method"),
            transform: parsed { text throws(SwiftRecordError) in
                try ValueParsing.choice(text, among: [X11Source.Configuration.CaptureMethod.damage, .full], option: "--capture", what: "a capture method")
            })
    var capture: X11Source.Configuration.CaptureMethod?

    // FAULT-INJECTION: a hidden option for the damage-capture tests.
    @Option(help: ArgumentHelp("Test only: paint this workload on the display before each grab, one step per frame, and take frames as fast as the encoder does (still, terminal, cursor, mixed, motion).", valueName: "name", visibility: .hidden),
            transform: parsed { text throws(SwiftRecordError) in
                try ValueParsing.choice(text, among: X11TestWorkload.Kind.allCases, option: "--simulate-x11-workload", what: "a workload")
            })
    var simulateX11Workload: X11TestWorkload.Kind?

    func validate() throws {
        let areas = [(region != nil, "--region"), (window != nil, "--window"), (monitor != nil, "--monitor")].filter(\.0).map(\.1)
        if areas.count > 1 {
            throw ValidationError("\(areas.joined(separator: " and ")) \(areas.count == 2 ? "both" : "all") choose what to record; give one of them")
        }
        if let window, X11Source.parseWindowID(window) == nil {
            throw ValidationError("--window '\(window)' is not a window id; expected a number such as 0x2a00007 or 44040199 (xwininfo shows it)")
        }
    }

    /// The screen options that apply to a Wayland screen too.
    static let sharedWithWayland: Set<String> = ["--no-cursor", "--monitor", "--region", "--capture"]

    /// The first screen option given, by its name on the command line, if any.
    var givenOptionName: String? {
        [(display != nil, "--display"), (region != nil, "--region"), (window != nil, "--window"), (monitor != nil, "--monitor"), (noCursor, "--no-cursor"),
         (capture != nil, "--capture"), (simulateX11Workload != nil, "--simulate-x11-workload")]
            .first { $0.0 }?.1
    }

    /// The x11 source's settings from the options. Damage-driven pictures are the encoder's
    /// (`EncoderOptions.pixelFormat`, `.colorProperties`) at the captured size; with `--scale`
    /// (`scaling`), whole pictures are grabbed.
    func configuration(scaling: Bool) -> X11Source.Configuration {
        let area: X11Source.Configuration.Area
        if let region {
            area = .region(region)
        } else if let id = window.flatMap(X11Source.parseWindowID) {
            area = .window(id)
        } else if let monitor {
            area = .monitor(monitor)
        } else {
            area = .screen
        }
        return X11Source.Configuration(display: display, area: area, showsCursor: !noCursor,
                                       captureMethod: captureMethod(scaling: scaling), pictureColor: EncoderOptions.colorProperties)
    }

    /// `--capture`, or damage by default; full with `--scale` or an encoder format other than
    /// yuv420p (damage-driven pictures are yuv420p at the captured size).
    func captureMethod(scaling: Bool) -> ScreenCaptureMethod {
        !scaling && EncoderOptions.pixelFormat == .yuv420p ? capture ?? .damage : .full
    }

    /// Why an explicit `--capture damage` grabs whole pictures anyway (the source itself
    /// says when the server has no XDamage).
    func captureNotices(scaling: Bool) -> [String] {
        guard capture == .damage else { return [] }
        if window != nil { return ["--capture damage does not follow windows: grabbing the whole window every frame"] }
        return scaling ? ["--capture damage does not apply with --scale: grabbing the whole picture every frame"] : []
    }

    /// `source`, stepped through `--simulate-x11-workload` when that is given.
    func stepped(_ source: any CaptureSource) throws -> any CaptureSource {
        guard let kind = simulateX11Workload else { return source }
        return SteppedWorkloadSource(base: source, workload: try X11TestWorkload(kind: kind, display: display))
    }
}

import ArgumentParser
import Foundation
import SwiftRecord
import SwiftRecordWayland
import SwiftRecordX11

/// `swift-record screenshot`: one picture of the screen (X11, or a Wayland compositor's
/// screen cast), of a monitor, a window or a region, as a PNG or JPEG file.
struct Screenshot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screenshot",
        abstract: "Write one picture of the screen, a monitor, a window or a region as a PNG or JPEG file.",
        discussion: """
        The screen is X11's ($DISPLAY or --display) or, in a Wayland session (WAYLAND_DISPLAY set, and no DISPLAY or XDG_SESSION_TYPE=wayland), the compositor's screen cast: through the desktop portal's chooser, or GNOME's Mutter with --screencast mutter or --monitor (no chooser). --source x11 or wayland chooses. On Wayland a window is only what the user picks in the portal's chooser: --window is refused there.

        Output: -o's extension picks the format (.png, .jpg or .jpeg); without -o, screenshot-YYYYMMDD-HHMMSS.png in the current directory. An existing file is replaced only with -y (once the new one is complete).

        Exit status: 0 when the file was written; 2 when refused before writing (an existing output without -y, an unknown monitor or window, --window on Wayland); 1 when the screen could not be captured (no display server, compositor or portal; the chooser cancelled) or the file not written.

        EXAMPLES
          swift-record screenshot
              The whole screen, as screenshot-20261128-151000.png.
          swift-record screenshot --monitor HDMI-1 -o monitor.png
          swift-record screenshot --window 0x2a00007 --no-cursor -o window.jpg
          swift-record screenshot --region 0,0,640,360 -o corner.png
        """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file (.png, .jpg, .jpeg).", valueName: "file"))
    var output: String?

    /// The screens a screenshot is taken of.
    enum Screen: String, Sendable, CaseIterable {
        case x11, wayland
    }

    @Option(help: ArgumentHelp("x11 or wayland (default: wayland in a Wayland session, else x11).", valueName: "name"),
            transform: parsed { text throws(SwiftRecordError) in try ValueParsing.choice(text, among: Screen.allCases, option: "--source", what: "a screen") })
    var source: Screen?

    @OptionGroup(title: "Screen") var screen: ScreenOptions
    @OptionGroup(title: "Wayland") var wayland: WaylandOptions

    @Flag(name: .shortAndLong, help: "Only errors and warnings.")
    var quiet = false

    @OptionGroup var replace: OverwriteOption

    @OptionGroup(title: "Messages") var logging: LoggingOptions

    func validate() throws {
        if let output, ImageFileFormat(pathExtension: URL(fileURLWithPath: output).pathExtension) == nil {
            throw ValidationError("-o \(output): the extension picks the format; expected .png, .jpg or .jpeg")
        }
        if screen.capture != nil { throw ValidationError("--capture applies to record; a screenshot grabs the whole picture once") }
        if wayland.restoreToken != nil { throw ValidationError("--restore-token applies to record") }
        try wayland.validate(monitor: screen.monitor)
    }

    func run() async throws {
        logging.bootstrap()
        if screen.listMonitors { try MonitorListing.list(display: screen.display) }
        let name = output ?? "screenshot-\(Screenshot.stamp(Date())).png"
        let file: OutputFile
        let source: any CaptureSource
        do {
            file = try OutputFile(name, what: "output", overwrite: replace.overwrite)
            source = try makeSource()
        } catch {
            note("swift-record screenshot: \(error.userMessage)")
            throw ExitStatus.beforeWriting(error)
        }
        do throws(SwiftRecordError) {
            let picture = try Screenshot.grab(source)
            try file.writeImage(picture)
            if !quiet {
                note("swift-record: wrote \(file.requestedPath): \(picture.width)x\(picture.height), \(source.captureDescription ?? source.identifier)")
            }
        } catch {
            note("swift-record screenshot: \(error.userMessage)")
            throw ExitStatus.failed
        }
    }

    /// The screen asked for, opened: X11's, or a Wayland screen cast.
    private func makeSource() throws(SwiftRecordError) -> any CaptureSource {
        let environment = ProcessInfo.processInfo.environment
        // A Wayland session takes its screen from the compositor, --window included (refused
        // below, naming the chooser); --display or --source x11 asks for X11.
        let waylandOption = wayland.givenOptionName != nil
        let session = WaylandOptions.defaultSource(environment: environment, screenOption: nil, waylandOptionGiven: waylandOption).name
        let chosen = source?.rawValue ?? (screen.display == nil && session == "wayland" ? "wayland"
            : WaylandOptions.defaultSource(environment: environment, screenOption: screen.givenOptionName, waylandOptionGiven: waylandOption).name)
        switch chosen {
        case "wayland":
            if let window = screen.window {
                throw SwiftRecordError(.unsupported, operation: "--window",
                                       message: "the Wayland backend cannot take window \(window): a Wayland client cannot name other programs' windows; pick the window in the desktop portal's chooser (--screencast portal, no --window), or take a monitor (--monitor NAME)")
            }
            let (api, announcement) = wayland.chosenScreenCast(monitor: screen.monitor) { ScreenCastPortal.isAvailable() }
            if let announcement, !quiet { note(announcement) }
            return try WaylandSource(configuration: wayland.configuration(screenCast: api, restoreToken: nil, screen: screen, scaling: true))
        case "x11":
            return try X11Source(configuration: screen.configuration(scaling: true))
        default:
            throw SwiftRecordError(.io, operation: "screenshot",
                                   message: "no display server is named: set DISPLAY (X11) or WAYLAND_DISPLAY (a Wayland session), or pass --display :N")
        }
    }

    /// The source's first picture; the source stopped after.
    static func grab(_ source: any CaptureSource) throws(SwiftRecordError) -> PixelBuffer {
        defer { source.stop() }
        let size = source.nativeSize
        let pool = try PixelBufferPool(width: size.width, height: size.height, pixelFormat: source.pixelFormat, maximumBufferCount: 2)
        let frame: CapturedFrame?
        do {
            try source.start()
            frame = try source.nextFrame(from: pool)
        } catch let error as SwiftRecordError {
            throw error
        } catch {
            throw SwiftRecordError(.io, operation: "screenshot", message: "\(error)")
        }
        guard let frame else { throw SwiftRecordError(.io, operation: "screenshot", message: "the screen gave no picture") }
        return frame.pixelBuffer
    }

    /// `20261128-151000`, local time.
    static func stamp(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyyMMdd-HHmmss"
        return f.string(from: date)
    }
}

import SwiftRecord
import SwiftRecordWayland
import SwiftRecordX11

/// `record --list-monitors`: the monitors `--monitor NAME` can record, X11's (RandR 1.5) and
/// the Wayland compositor's (GNOME's Mutter), one a line, then exit.
enum MonitorListing {
    /// Tab completion of `--monitor`: the X11 monitors of `$DISPLAY` and the Wayland
    /// compositor's connectors (none where neither answers).
    static func names() -> [String] {
        ((try? X11Source.monitors(display: nil)) ?? []).map(\.name) + ((try? WaylandSource.monitors()) ?? []).map(\.name)
    }

    static func list(display: String?) throws -> Never {
        var lines: [String] = []
        var problems: [String] = []
        do {
            lines += try X11Source.monitors(display: display).map { "x11:\($0.name)\t\($0.area.width)x\($0.area.height)+\($0.area.x)+\($0.area.y)\($0.isPrimary ? " [primary]" : "")" }
        } catch {
            problems.append("x11: \(error.message)")
        }
        do {
            lines += try WaylandSource.monitors().map { m in
                "wayland:\(m.name)\t\(m.size.map { "\($0)" } ?? "?")\(m.displayName.map { " \($0)" } ?? "")\(m.isPrimary ? " [primary]" : "")"
            }
        } catch {
            problems.append("wayland: \(error.message)")
        }
        for line in lines { say(line) }
        // Where nothing answered, say why; an empty list with no reason would leave one guessing.
        if lines.isEmpty {
            for p in problems { note("swift-record: --list-monitors: \(p)") }
            throw ExitStatus.failed
        }
        throw ExitStatus.success
    }
}

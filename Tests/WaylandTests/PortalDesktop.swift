import Foundation
import TestSupport
import XCTest

/// The desktop portal on a HeadlessGNOME's bus: the real frontend (Debian's
/// `/usr/libexec/xdg-desktop-portal`), the permission store it keeps restore data in
/// (`/usr/libexec/xdg-permission-store`), and in place of the desktop's chooser a backend of
/// the tests' own (Helpers/portal-backend.py, Debian's python3 with python3-dbus and
/// python3-gi) described by a `.portal` file in a folder of this desktop's, which the frontend
/// is pointed to by `XDG_DESKTOP_PORTAL_DIR` with `XDG_CURRENT_DESKTOP` set to match.
extension HeadlessGNOME {
    static let portalFrontend = "/usr/libexec/xdg-desktop-portal"
    static let permissionStore = "/usr/libexec/xdg-permission-store"
    static let portalBackendName = "org.freedesktop.impl.portal.desktop.swiftrecordtests"

    /// What the backend does with `Start`.
    enum Chooser: String {
        /// Grants Mutter's primary monitor, with restore data and persist mode 2.
        case approve
        /// Answers response 1, as a user closing the chooser.
        case cancel
        /// Never answers, as a chooser left open.
        case hold
    }

    /// Where the backend writes one JSON line per call it received.
    var portalLog: URL { runtimeDirectory.appendingPathComponent("portal-backend.jsonl") }

    /// Starts the permission store, the backend and the frontend; returns once the frontend
    /// owns `org.freedesktop.portal.Desktop`.
    func startPortal(chooser: Chooser = .approve) throws {
        let python = "/usr/bin/python3"
        for program in [HeadlessGNOME.portalFrontend, HeadlessGNOME.permissionStore, python]
            where !FileManager.default.isExecutableFile(atPath: program) {
            throw XCTSkip("\(program) is not installed (packages xdg-desktop-portal, python3-dbus, python3-gi)")
        }
        let portals = runtimeDirectory.appendingPathComponent("portals")
        try FileManager.default.createDirectory(at: portals, withIntermediateDirectories: true)
        try """
        [portal]
        DBusName=\(HeadlessGNOME.portalBackendName)
        Interfaces=org.freedesktop.impl.portal.ScreenCast;
        UseIn=swift-record-tests

        """.write(to: portals.appendingPathComponent("swift-record-tests.portal"), atomically: true, encoding: .utf8)
        try start(HeadlessGNOME.permissionStore, [])
        try waitFor("the permission store") { self.nameHasOwner("org.freedesktop.impl.portal.PermissionStore") }
        let script = PackagePaths.root.appendingPathComponent("Tests/WaylandTests/Helpers/portal-backend.py").path
        try start(python, [script, HeadlessGNOME.portalBackendName, chooser.rawValue, portalLog.path])
        try waitFor("the portal backend", timeout: 30) { self.nameHasOwner(HeadlessGNOME.portalBackendName) }
        var env = environment
        env["XDG_DESKTOP_PORTAL_DIR"] = portals.path
        env["XDG_CURRENT_DESKTOP"] = "swift-record-tests"
        try start(HeadlessGNOME.portalFrontend, ["-r"], environment: env)
        try waitFor("the desktop portal", timeout: 30) { self.nameHasOwner("org.freedesktop.portal.Desktop") }
    }

    /// The calls the backend received: (method, options), in order.
    func portalCalls() throws -> [(method: String, options: [String: Any])] {
        guard let text = try? String(contentsOf: portalLog, encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { line in
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return (try XCTUnwrap(object["method"] as? String), object["options"] as? [String: Any] ?? [:])
        }
    }
}

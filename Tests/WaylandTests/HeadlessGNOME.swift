import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A private Wayland desktop for one test: a session bus of its own (`dbus-daemon` with a
/// configuration that activates nothing), a fresh 0700 `XDG_RUNTIME_DIR`, `pipewire` and
/// `wireplumber` in it, GNOME's compositor headless with one virtual monitor
/// (`mutter --headless --virtual-monitor WxH --wayland --no-x11`), and on request
/// `weston-simple-shm` as a moving window. Every process is a child of the test, started
/// with a clean signal mask (`Proc.spawn`) and stopped by its PID in reverse order (SIGTERM,
/// then SIGKILL after a grace), even when a step fails.
final class HeadlessGNOME {
    let runtimeDirectory: URL
    let busAddress: String
    /// The environment every child of this desktop gets (the user's session left out).
    let environment: [String: String]
    private var children: [(name: String, process: ChildProcess)] = []
    private var stopped = false

    static let packages = ["dbus-daemon", "pipewire", "wireplumber", "mutter"]

    /// What is missing to start one, if anything (a reason for XCTSkip).
    static var missing: String? {
        let absent = packages.filter { Proc.which($0) == nil }
        return absent.isEmpty ? nil : "not installed: \(absent.joined(separator: ", ")) (scripts/install-deps.sh installs them)"
    }

    /// Starts the bus, PipeWire and, unless `compositor` is false, Mutter with a monitor of `size`.
    init(size: String = "1280x720", compositor: Bool = true, movingWindow: Bool = false) throws {
        if let missing = HeadlessGNOME.missing { throw XCTSkip(missing) }
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("sr-wayland-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        runtimeDirectory = dir
        let socket = dir.appendingPathComponent("bus").path
        busAddress = "unix:path=\(socket)"
        var env = ProcessInfo.processInfo.environment
        for key in ["DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "XDG_CURRENT_DESKTOP", "DBUS_SESSION_BUS_ADDRESS"] {
            env.removeValue(forKey: key)
        }
        let home = dir.appendingPathComponent("home")
        for sub in ["", "/config", "/state", "/data", "/cache"] {
            try FileManager.default.createDirectory(atPath: home.path + sub, withIntermediateDirectories: true)
        }
        env["XDG_RUNTIME_DIR"] = dir.path
        env["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        env["HOME"] = home.path
        env["XDG_CONFIG_HOME"] = home.path + "/config"
        env["XDG_STATE_HOME"] = home.path + "/state"
        env["XDG_DATA_HOME"] = home.path + "/data"
        env["XDG_CACHE_HOME"] = home.path + "/cache"
        env["GSETTINGS_BACKEND"] = "memory"
        env["PULSE_SERVER"] = "unix:/nonexistent/swift-record-tests/pulse"
        environment = env
        do {
            let config = dir.appendingPathComponent("bus.conf")
            try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>\(busAddress)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.write(to: config, atomically: true, encoding: .utf8)
            try start("dbus-daemon", ["--config-file=\(config.path)", "--nofork", "--nopidfile"])
            try waitFor("the session bus socket") { FileManager.default.fileExists(atPath: socket) }
            try start("pipewire", [])
            try waitFor("PipeWire's socket") { FileManager.default.fileExists(atPath: dir.appendingPathComponent("pipewire-0").path) }
            try start("wireplumber", [])
            if compositor { try startCompositor(size: size) }
            if movingWindow { try startMovingWindow() }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Mutter, headless, one virtual monitor; ready once it owns its screen-cast bus name.
    func startCompositor(size: String = "1280x720") throws {
        try start("mutter", ["--headless", "--virtual-monitor", size, "--wayland", "--no-x11"])
        try waitFor("mutter's org.gnome.Mutter.ScreenCast", timeout: 30) { self.nameHasOwner("org.gnome.Mutter.ScreenCast") }
    }

    /// `weston-simple-shm`: a window whose pictures change every frame (shared memory).
    func startMovingWindow() throws {
        guard Proc.which("weston-simple-shm") != nil else { throw XCTSkip("weston-simple-shm is not installed (package weston)") }
        var env = environment
        env["WAYLAND_DISPLAY"] = "wayland-0"
        try start("weston-simple-shm", [], environment: env)
    }

    /// Puts the pointer at (`x`, `y`) and keeps it there (Helpers/mutter-pointer.py: a virtual
    /// pointer through Mutter's RemoteDesktop, which lives as long as that session); returns
    /// once it is in place. Debian's python3 (python3-dbus and python3-gi are its modules).
    func placePointer(x: Int, y: Int) throws {
        let python = "/usr/bin/python3"
        guard Proc.which(python) != nil else { throw XCTSkip("\(python) is not installed") }
        let script = PackagePaths.root.appendingPathComponent("Tests/WaylandTests/Helpers/mutter-pointer.py").path
        try start(python, [script, String(x), String(y)])
        let helper = children[children.count - 1].process
        try waitFor("the pointer", timeout: 30) { helper.currentStdout().contains("ready") }
    }

    /// The environment for swift-record: this desktop's, with WAYLAND_DISPLAY when `waylandDisplay`.
    func clientEnvironment(waylandDisplay: Bool = false) -> [String: String] {
        var env = environment
        if waylandDisplay { env["WAYLAND_DISPLAY"] = "wayland-0" }
        return env
    }

    /// The PID of the child started as `name` (the first one).
    func process(_ name: String) -> ChildProcess? { children.first { $0.name == name }?.process }

    /// Kills every living child started as `name` at once (SIGKILL) and waits for it: a
    /// component "going away".
    func kill9(_ name: String) {
        for child in children where child.name == name && !child.process.isReaped {
            child.process.signal(SIGKILL)
            child.process.wait(timeout: 5)
        }
    }

    /// Stops every child, newest first (SIGTERM, then SIGKILL after 3 s), and removes the
    /// runtime directory. Safe to call twice.
    func stop() {
        guard !stopped else { return }
        stopped = true
        for child in children.reversed() where !child.process.isReaped {
            child.process.signal(SIGTERM)
        }
        for child in children.reversed() { child.process.wait(timeout: 3) }
        children.removeAll()
        try? FileManager.default.removeItem(at: runtimeDirectory)
    }

    /// Stderr of a child so far (for failure messages).
    func stderr(of name: String) -> String { process(name)?.currentStderr() ?? "" }

    func nameHasOwner(_ name: String) -> Bool {
        guard let r = try? Proc.run("dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                  "org.freedesktop.DBus.NameHasOwner", "string:\(name)"],
                                    environment: environment, timeout: 10) else { return false }
        return r.stdout.contains("boolean true")
    }

    func start(_ name: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        let p = try Proc.spawn(name, arguments, environment: environment ?? self.environment)
        children.append((name, p))
    }

    func waitFor(_ what: String, timeout: Double = 20, _ ready: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if ready() { return }
            if let dead = children.first(where: { $0.process.exited() != nil }) {
                throw TestError.failed("\(dead.name) exited while waiting for \(what): \(dead.process.wait(timeout: 0).stderr.suffix(600))")
            }
            usleep(20_000)
        }
        throw TestError.failed("\(what) not ready within \(Int(timeout)) s")
    }
}

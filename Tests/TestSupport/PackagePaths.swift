import Foundation

/// Paths inside this package, for tests that run its built programs.
public enum PackagePaths {
    /// The package root (two levels above Tests/TestSupport).
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A built product of the debug configuration (built by `swift build --build-tests`).
    /// `SWIFT_RECORD_BUILD_DIR` points elsewhere, e.g. at a sanitizer build (`.build-asan/debug`).
    public static func product(_ name: String) -> String {
        let dir = ProcessInfo.processInfo.environment["SWIFT_RECORD_BUILD_DIR"] ?? ".build/debug"
        let base = dir.hasPrefix("/") ? URL(fileURLWithPath: dir) : root.appendingPathComponent(dir)
        return base.appendingPathComponent(name).path
    }
}

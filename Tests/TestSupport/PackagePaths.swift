import Foundation

/// Paths inside this package, for tests that run its built programs.
public enum PackagePaths {
    /// The package root (two levels above Tests/TestSupport).
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A built product of the debug configuration (built by `swift build --build-tests`).
    public static func product(_ name: String) -> String {
        root.appendingPathComponent(".build/debug/\(name)").path
    }
}

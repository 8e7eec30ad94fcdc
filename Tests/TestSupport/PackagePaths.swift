import Foundation

/// Paths inside this package, for tests that run its built programs.
public enum PackagePaths {
    /// The package root (two levels above Tests/TestSupport).
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// True when the products under test are a sanitizer build (make check-sanitizers),
    /// which runs several times slower: a wall-clock bound is then widened, not dropped.
    public static var productsAreSanitized: Bool { sanitizer != nil }

    /// The sanitizer the products under test were built with (`address`, `thread`), if any:
    /// a C program a test links against one of them must be built with the same one (by the
    /// toolchain's clang, whose runtime it is).
    public static var sanitizer: String? {
        let dir = ProcessInfo.processInfo.environment["SWIFT_RECORD_BUILD_DIR"] ?? ""
        return dir.contains("asan") ? "address" : dir.contains("tsan") ? "thread" : nil
    }

    /// A built product of the debug configuration (built by `swift build --build-tests`).
    /// `SWIFT_RECORD_BUILD_DIR` points elsewhere, e.g. at a sanitizer build (`.build-asan/debug`).
    public static func product(_ name: String) -> String {
        let dir = ProcessInfo.processInfo.environment["SWIFT_RECORD_BUILD_DIR"] ?? ".build/debug"
        let base = dir.hasPrefix("/") ? URL(fileURLWithPath: dir) : root.appendingPathComponent(dir)
        return base.appendingPathComponent(name).path
    }
}

import Foundation
import Logging
import SwiftRecord
import TestSupport
import XCTest

/// Messages a test handler received, from any logger of the process.
final class CapturedLogs: Sendable {
    private let entries = Locked<[(label: String, level: Logger.Level, message: String)]>([])

    func append(_ label: String, _ level: Logger.Level, _ message: String) {
        entries.withLock { $0.append((label, level, message)) }
    }

    func all() -> [(label: String, level: Logger.Level, message: String)] {
        entries.withLock { $0 }
    }

    /// The process's one backend for the tests: LoggingSystem.bootstrap may run only once.
    static let shared: CapturedLogs = {
        let logs = CapturedLogs()
        LoggingSystem.bootstrap { label in CapturingHandler(label: label, logs: logs) }
        return logs
    }()
}

struct CapturingHandler: LogHandler {
    let label: String
    let logs: CapturedLogs
    var logLevel: Logger.Level = .warning
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { logs.append(label, event.level, "\(event.message)") }
}

final class LoggingTests: XCTestCase {
    /// An application's swift-log backend sees FFmpeg's warnings, at warning level, under the
    /// `swift-record.ffmpeg` label: here libx264's own, for a VBV buffer without a maximum rate.
    func testAnFFmpegWarningArrivesThroughTheApplicationsLogHandler() async throws {
        try XCTSkipUnless(FF.available, "ffmpeg/ffprobe not installed")
        let logs = CapturedLogs.shared
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var settings = VideoSettings(width: 64, height: 64, expectedSourceFrameRate: Rational(30), preset: "ultrafast")
        settings.encoderOptions = ["x264-params": "vbv-bufsize=100"]
        try await writeClip(to: dir.appendingPathComponent("warn.mp4"), settings: settings, frames: 5)
        let warnings = logs.all().filter { $0.label == "swift-record.ffmpeg" && $0.level == .warning }
        XCTAssertTrue(warnings.contains { $0.message.contains("VBV bufsize set but maxrate unspecified") && $0.message.contains("libx264") },
                      "no libx264 warning through the handler; got \(logs.all())")
        // One message per line, without the newline FFmpeg ends it with.
        XCTAssertFalse(warnings.contains { $0.message.hasSuffix("\n") })
    }
}

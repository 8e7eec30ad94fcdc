import Foundation
import XCTest

extension XCTestCase {
    /// Sets this process's environment variables in `values` (nil: unset) until the test
    /// ends; the previous values come back at its teardown. For library calls made in this
    /// process against a private server (a PipeWire, a session bus), never the user's.
    public func setEnvironment(_ values: [String: String?]) {
        let saved = values.keys.map { ($0, ProcessInfo.processInfo.environment[$0]) }
        for (key, value) in values {
            if let value { setenv(key, value, 1) } else { unsetenv(key) }
        }
        addTeardownBlock {
            for (key, value) in saved {
                if let value { setenv(key, value, 1) } else { unsetenv(key) }
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Where capture times come from. Sources stamp frames with `now()`; tests inject a
/// fake clock so timing behaviour is checked without waiting.
///
/// The counterpart of `CMClock` / the host time clock on Apple platforms.
public protocol HostClock: Sendable {
    /// The current time, monotonic (never goes back).
    func now() -> MediaTime
}

/// The system's monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds.
public struct MonotonicClock: HostClock {
    public init() {}
    public func now() -> MediaTime {
        MediaTime(value: MonotonicClock.nanoseconds(), timescale: 1_000_000_000)
    }

    /// CLOCK_MONOTONIC in nanoseconds: the clock `Locked.wait(untilNanoseconds:)` deadlines are on.
    package static func nanoseconds() -> Int64 { monotonicNanoseconds() }
}

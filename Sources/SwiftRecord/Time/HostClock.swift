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

    /// `duration` from now on this clock, in nanoseconds (a `Locked.wait` deadline); a
    /// duration beyond `Int64`'s nanoseconds saturates instead of trapping.
    package static func deadline(after duration: Duration) -> Int64 {
        let (sum, overflow) = nanoseconds().addingReportingOverflow(duration.nanoseconds)
        return overflow ? (duration < .zero ? .min : .max) : sum
    }
}

extension Duration {
    /// Whole nanoseconds (clamped to `Int64`).
    package var nanoseconds: Int64 {
        let (s, attoseconds) = components
        return Int64(clamping: Int128(s) * 1_000_000_000 + Int128(attoseconds / 1_000_000_000))
    }
}

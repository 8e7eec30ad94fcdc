// Core Media's time functions and constants as Apple spells them, over SwiftRecord's
// `MediaTime`. A port keeps `import CoreMedia`; `import CoreMedia` brings Core Video too.
@_exported import CoreVideo

/// A time as a value over a timescale (`CMTime`): SwiftRecord's `MediaTime`.
public typealias CMTime = MediaTime
/// The value of a `CMTime` (`CMTimeValue`).
public typealias CMTimeValue = Int64
/// Units per second of a `CMTime` (`CMTimeScale`).
public typealias CMTimeScale = Int32
/// A start and a duration (`CMTimeRange`): SwiftRecord's `TimeRange`.
public typealias CMTimeRange = TimeRange
/// A count of items (`CMItemCount`).
public typealias CMItemCount = Int

/// Zero seconds (`kCMTimeZero`; `CMTime.zero` in Apple's Swift).
public let kCMTimeZero = CMTime.zero
/// No time (`kCMTimeInvalid`).
public let kCMTimeInvalid = CMTime.invalid
/// After every time (`kCMTimePositiveInfinity`).
public let kCMTimePositiveInfinity = CMTime.positiveInfinity
/// Before every time (`kCMTimeNegativeInfinity`).
public let kCMTimeNegativeInfinity = CMTime.negativeInfinity
/// An unknown, open-ended time (`kCMTimeIndefinite`), the same as positive infinity here.
public let kCMTimeIndefinite = CMTime.indefinite

/// `value`/`timescale` seconds (`CMTimeMake`).
public func CMTimeMake(value: Int64, timescale: Int32) -> CMTime { CMTime(value: value, timescale: timescale) }
/// `seconds` in `preferredTimescale` units, rounded (`CMTimeMakeWithSeconds`).
public func CMTimeMakeWithSeconds(_ seconds: Double, preferredTimescale: Int32) -> CMTime {
    CMTime(seconds: seconds, preferredTimescale: preferredTimescale)
}
/// The time in seconds, for display (`CMTimeGetSeconds`); NaN for an invalid time.
public func CMTimeGetSeconds(_ time: CMTime) -> Double { time.seconds }
/// The sum, exact (`CMTimeAdd`); an overflow is invalid.
public func CMTimeAdd(_ lhs: CMTime, _ rhs: CMTime) -> CMTime { lhs + rhs }
/// The difference, exact (`CMTimeSubtract`).
public func CMTimeSubtract(_ lhs: CMTime, _ rhs: CMTime) -> CMTime { lhs - rhs }
/// -1, 0 or 1 as `time1` is before, at or after `time2` (`CMTimeCompare`); invalid sorts first.
public func CMTimeCompare(_ time1: CMTime, _ time2: CMTime) -> Int32 { time1 < time2 ? -1 : (time1 == time2 ? 0 : 1) }
/// The time times an integer (`CMTimeMultiply`).
public func CMTimeMultiply(_ time: CMTime, multiplier: Int32) -> CMTime { time * Int64(multiplier) }
/// The time times `multiplier`/`divisor`, rounded in its own timescale (`CMTimeMultiplyByRatio`).
public func CMTimeMultiplyByRatio(_ time: CMTime, multiplier: Int32, divisor: Int32) -> CMTime {
    divisor == 0 ? .invalid : time.multiplied(by: Int64(multiplier), dividedBy: Int64(divisor))
}
/// The time times a `Double` (`CMTimeMultiplyByFloat64`), in its own timescale.
public func CMTimeMultiplyByFloat64(_ time: CMTime, multiplier: Double) -> CMTime {
    guard time.isNumeric else { return time }
    return CMTime(seconds: time.seconds * multiplier, preferredTimescale: time.timescale)
}
/// The time in `newTimescale` units (`CMTimeConvertScale`), rounded to the nearest.
public func CMTimeConvertScale(_ time: CMTime, timescale newTimescale: Int32) -> CMTime { time.convertScale(newTimescale) }
/// The later of two times (`CMTimeMaximum`).
public func CMTimeMaximum(_ time1: CMTime, _ time2: CMTime) -> CMTime { max(time1, time2) }
/// The earlier of two times (`CMTimeMinimum`).
public func CMTimeMinimum(_ time1: CMTime, _ time2: CMTime) -> CMTime { min(time1, time2) }
/// The time without its sign (`CMTimeAbsoluteValue`).
public func CMTimeAbsoluteValue(_ time: CMTime) -> CMTime { time < .zero ? -time : time }
/// Whether the time is valid (`CMTIME_IS_VALID`).
public func CMTIME_IS_VALID(_ time: CMTime) -> Bool { time.isValid }
/// Whether the time is invalid (`CMTIME_IS_INVALID`).
public func CMTIME_IS_INVALID(_ time: CMTime) -> Bool { !time.isValid }
/// Whether the time is a number of seconds (`CMTIME_IS_NUMERIC`).
public func CMTIME_IS_NUMERIC(_ time: CMTime) -> Bool { time.isNumeric }
/// A range from a start and a duration (`CMTimeRangeMake`).
public func CMTimeRangeMake(start: CMTime, duration: CMTime) -> CMTimeRange { CMTimeRange(start: start, duration: duration) }

/// The host's clock (`CMClock`): `CMClockGetHostTimeClock()` is SwiftRecord's
/// `MonotonicClock` (`CLOCK_MONOTONIC`), which capture times are stamped with.
public typealias CMClock = MonotonicClock
/// The host time clock (`CMClockGetHostTimeClock`).
public func CMClockGetHostTimeClock() -> CMClock { MonotonicClock() }
/// The clock's time now (`CMClockGetTime`).
public func CMClockGetTime(_ clock: CMClock) -> CMTime { clock.now() }

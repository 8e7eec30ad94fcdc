/// Where the live synthetic scene's frame 0 was captured (host time), shared with the
/// synthetic audio source so that its clicks fall on the scene's flashes in a real-time
/// recording. Offline, both count from 0 and need no clock.
public final class SyntheticFlashClock: Sendable {
    private let epoch = Locked<MediaTime?>(nil)
    public init() {}

    /// The host time of frame 0, once the scene has captured it.
    public var frameZeroTime: MediaTime? { epoch.withLock { $0 } }

    /// Records frame 0's time (the first call wins); returns the time in force.
    @discardableResult
    public func setFrameZero(_ time: MediaTime) -> MediaTime {
        epoch.withLockNotifying { e in
            if e == nil { e = time }
            return e ?? time
        }
    }
}

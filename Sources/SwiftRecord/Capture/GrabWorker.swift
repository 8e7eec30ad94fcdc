import Foundation

/// Runs a live source's grabs on a thread of its own, one at a time, as the capture
/// thread asks for them, so the capture thread keeps time while a grab is stuck (a
/// frozen X server never answers): it can stop at the limit's wall-clock time, or at
/// once on `stop()`, and count the ticks that got no picture. A grab that never returns
/// keeps this thread; it ends once that grab returns, if ever.
final class GrabWorker: Sendable {
    private struct State {
        /// A grab asked for and not yet started.
        var pool: PixelBufferPool?
        /// When the grab in progress (or asked for) was asked for: monotonic nanoseconds.
        var outstandingSince: Int64?
        /// The finished grab's outcome, until taken.
        var result: Result<CapturedFrame?, any Error>?
        /// Test hook: sleep this long before the grab (a source that stalls).
        var stall: Duration?
        var closed = false
    }
    private let state = Locked(State())

    /// Starts the thread, which calls `source.nextFrame` for each request and `done`
    /// after each grab (the capture thread's wake-up).
    init(source: any CaptureSource, done: @escaping @Sendable () -> Void) {
        let thread = Thread { [state] in
            while true {
                let next = state.wait { s -> (PixelBufferPool, Duration?)?? in
                    if s.closed { return .some(nil) }
                    guard let pool = s.pool else { return nil }
                    s.pool = nil
                    defer { s.stall = nil }
                    return (pool, s.stall)
                }
                guard let (pool, stall) = next ?? nil else { return }
                if let stall { Thread.sleep(forTimeInterval: stall.seconds) }
                let result = Result { try source.nextFrame(from: pool) }
                state.withLockNotifying { $0.result = result }
                done()
            }
        }
        thread.name = "swift-record.grab"
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    /// Asks for one grab into `pool`, after sleeping `stall` (tests) if given. Only when
    /// none is outstanding.
    func request(from pool: PixelBufferPool, stall: Duration? = nil) {
        state.withLockNotifying { s in
            guard s.outstandingSince == nil else { return }
            s.pool = pool
            s.stall = stall
            s.outstandingSince = MonotonicClock.nanoseconds()
        }
    }

    /// The finished grab's outcome, taken (nil while none is finished).
    func takeResult() -> Result<CapturedFrame?, any Error>? {
        state.withLock { s in
            guard let result = s.result else { return nil }
            s.result = nil
            s.outstandingSince = nil
            return result
        }
    }

    /// When the grab not yet returned was asked for; nil when none is outstanding.
    var outstandingSince: Int64? { state.withLock { $0.result == nil ? $0.outstandingSince : nil } }

    /// Waits until the outstanding grab returns or `deadline` (monotonic ns) passes;
    /// true if it returned (its outcome is left to `takeResult`).
    func waitForGrab(untilNanoseconds deadline: Int64) -> Bool {
        state.wait(untilNanoseconds: deadline) { s -> Bool? in
            s.outstandingSince == nil || s.result != nil ? true : nil
        } ?? false
    }

    /// Ends the thread once its grab (if any) returns.
    func close() {
        state.withLockNotifying { $0.closed = true }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Waits until a monotonic deadline, or until woken. The live capture loop sleeps here
/// between frame ticks: one timed wait per frame, no polling. `wake()` ends the current
/// (or next) wait early so the loop looks at a pause, a resume, or room in the encoder's
/// queue; `interrupt()` ends every wait for good (stop).
final class Pacer: @unchecked Sendable {
    enum Outcome: Equatable {
        /// The deadline passed.
        case deadline
        /// `wake()` was called.
        case woken
        /// `interrupt()` was called: stop.
        case interrupted
    }

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var interrupted = false
    private var woken = false

    init() {
        pthread_mutex_init(mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Sleeps until `deadline` (monotonic nanoseconds), or until woken or interrupted;
    /// nil sleeps until woken or interrupted.
    func wait(untilNanoseconds deadline: Int64?) -> Outcome {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if interrupted { return .interrupted }
            if woken {
                woken = false
                return .woken
            }
            if let deadline {
                var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                if pthread_cond_timedwait(cond, mutex, &ts) == ETIMEDOUT {
                    if interrupted { return .interrupted }
                    return .deadline
                }
            } else {
                pthread_cond_wait(cond, mutex)
            }
        }
    }

    /// Ends the current wait (or the next one) early with `.woken`.
    func wake() {
        pthread_mutex_lock(mutex)
        woken = true
        pthread_cond_broadcast(cond)
        pthread_mutex_unlock(mutex)
    }

    func interrupt() {
        pthread_mutex_lock(mutex)
        interrupted = true
        pthread_cond_broadcast(cond)
        pthread_mutex_unlock(mutex)
    }

    var isInterrupted: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return interrupted
    }

    /// The monotonic clock now, in nanoseconds (the clock deadlines are given in).
    static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

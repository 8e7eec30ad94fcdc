#if canImport(Glibc)
import Glibc
#endif

/// Waits until a monotonic deadline, or until woken by `interrupt()`. The live capture
/// loop sleeps here between frame ticks: one timed wait per frame, no polling.
final class Pacer: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var interrupted = false

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

    /// Sleeps until `deadline` (monotonic nanoseconds). Returns false if interrupted.
    func wait(untilNanoseconds deadline: Int64) -> Bool {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !interrupted {
            let r = pthread_cond_timedwait(cond, mutex, &ts)
            if r == ETIMEDOUT { return true }
        }
        return false
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
}

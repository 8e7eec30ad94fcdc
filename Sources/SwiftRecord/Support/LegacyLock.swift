#if canImport(Glibc)
import Glibc
#endif

/// A plain mutex. Used where state is shared between a capture thread, the writer's
/// queue and callers; never held across a call that may block for long.
/// Legacy: being replaced by `Locked`; removed once nothing uses it.
final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    @inline(__always)
    func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A mutex with a condition, for waiting until something changes (queue has room, …)
/// without polling.
final class Condition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        cond = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    @inline(__always)
    func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits (the lock must be held) until signalled.
    func wait() { pthread_cond_wait(cond, mutex) }

    /// Waits (the lock held) until signalled or `nanoseconds` passed; false on time-out.
    func wait(nanoseconds: Int64) -> Bool {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let total = Int64(ts.tv_nsec) + nanoseconds
        ts.tv_sec += Int(total / 1_000_000_000)
        ts.tv_nsec = Int(total % 1_000_000_000)
        return pthread_cond_timedwait(cond, mutex, &ts) == 0
    }

    func broadcast() { pthread_cond_broadcast(cond) }
}

#if canImport(Glibc)
import Glibc
#endif

/// swift-record's one lock type: a value that can only be reached with its mutex held,
/// and a condition to wait on until that value changes (SimpleScreenRecorder's
/// `SharedLock`, Swift's `Mutex` with a condition variable added).
///
/// The state lives inside the lock, so no field can be touched without it; a type whose
/// mutable state is all in a `Locked` is `Sendable` because of that, with no
/// `@unchecked` of its own. Do not hold it across a call that may block for long (an
/// encode, a write to a pipe or a network), and never hand it to another object. Some locks
/// are held across work on purpose, because the state they guard is that work's: the X11
/// source's grabber across its grab (`stop()` then uses `withLockIfAvailable` and never
/// waits); the pixel-buffer adaptor's converter and pool across a conversion; a pixel
/// buffer's own lock across every access to its planes (a conversion or copy holds the
/// source's and the destination's); an image generator's session across a seek and decode
/// (the asset reader's is not: a read borrows its session and reads and decodes with the
/// lock released); the Wayland source's and the PipeWire camera's `delivered` (their
/// copier, scaler and JPEG decoder) across a picture's copy, conversion or decode, which no
/// PipeWire callback takes (the stream's `StreamFrames.state`, which its callbacks take, is
/// held only to lend the newest buffer out and take it back: the copy runs with it
/// released); the overlay source's across a composition; a replay buffer's across copying a
/// packet's bytes in or out; and the timing log's file across one buffered `fputs` of a line.
///
/// Our own because no package has this: the standard library's `Synchronization.Mutex` and
/// swift-nio's `NIOLockedValueBox` are mutexes without a condition variable, and
/// Foundation's `NSCondition` keeps its state outside the lock and times out on the wall
/// clock.
///
/// Waits use the monotonic clock, so a change of the wall clock does not shorten or
/// lengthen them. A lock may have more than one condition (`init(_:conditions:)`), so
/// that waiters for different changes are woken apart: the writing pipeline's thread waits
/// for a job, the appenders blocked on a full track queue for room.
package final class Locked<State>: @unchecked Sendable {
    // @unchecked: `state` is read and written only between pthread_mutex_lock and
    // pthread_mutex_unlock below, and it goes in and out only as `sending` values.
    // Not private but @usableFromInline, so that the lock's short paths below are inlined
    // into the modules that use them (this module holds nothing else that could touch them).
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let conditions: UnsafeMutablePointer<pthread_cond_t>
    @usableFromInline let conditionCount: Int
    /// The type whose cases name the conditions.
    @usableFromInline let conditionType: ObjectIdentifier
    @usableFromInline var state: State

    /// A lock around `initialState` with one condition variable per case of `conditions`
    /// (one, `OneCondition`, unless named): the methods that take a condition take a case of
    /// that type, and no other.
    package init<C: LockCondition>(_ initialState: consuming sending State, conditions: C.Type = OneCondition.self) {
        // ThreadSanitizer reports the accesses to a zero-sized state (an empty tuple), which
        // share an address with whatever follows the object, as races: lock a value.
        assert(MemoryLayout<State>.size > 0, "a Locked around an empty value")
        state = initialState
        conditionType = ObjectIdentifier(C.self)
        conditionCount = max(1, C.allCases.count)
        mutex = .allocate(capacity: 1)
        self.conditions = .allocate(capacity: conditionCount)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        for c in 0..<conditionCount { pthread_cond_init(self.conditions + c, &attributes) }
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        for c in 0..<conditionCount { pthread_cond_destroy(conditions + c) }
        pthread_mutex_destroy(mutex)
        conditions.deallocate()
        mutex.deallocate()
    }

    /// The condition variable of `condition`, a case of the type the lock was made with.
    @inlinable @inline(__always)
    func variable<C: LockCondition>(_ condition: C) -> UnsafeMutablePointer<pthread_cond_t> {
        // A case of another type than the lock was made with is a programming error: caught
        // in debug builds; in release, condition 0 (no crash in a recording).
        guard ObjectIdentifier(C.self) == conditionType else {
            assertionFailure("a condition of another lock's type")
            return conditions
        }
        let index = C.allCases.firstIndex(of: condition).map { C.allCases.distance(from: C.allCases.startIndex, to: $0) } ?? 0
        return conditions + index
    }

    /// Runs `body` with the state, the lock held.
    @inlinable @inline(__always)
    package func withLock<R, E: Error>(_ body: (inout sending State) throws(E) -> sending R) throws(E) -> sending R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Runs `body` with the state if the lock is free now; nil (and `body` not run) when
    /// another thread holds it. For a stop that must not wait behind a call that may never
    /// return (a grab from a frozen X server).
    package func withLockIfAvailable<R>(_ body: (inout sending State) -> sending R) -> R? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return body(&state)
    }

    /// Runs `body` with the state, the lock held, then wakes every waiter (on every
    /// condition): for changes someone may be waiting for.
    @inlinable @inline(__always)
    package func withLockNotifying<R, E: Error>(_ body: (inout sending State) throws(E) -> sending R) throws(E) -> sending R {
        pthread_mutex_lock(mutex)
        defer {
            for c in 0..<conditionCount { pthread_cond_broadcast(conditions + c) }
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Runs `body` with the state, the lock held, then wakes the waiters on `condition`.
    @inlinable @inline(__always)
    package func withLockNotifying<C: LockCondition, R, E: Error>(_ condition: C,
                                                                  _ body: (inout sending State) throws(E) -> sending R) throws(E) -> sending R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(variable(condition))
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Calls `body` with the lock held until it returns a value, waiting on `condition` for
    /// a change (`withLockNotifying`) between calls; gives up with nil once the monotonic
    /// clock reaches `deadline` (nanoseconds, `monotonicNanoseconds()`), if one is
    /// given. `notifying`: a condition whose waiters are woken after the first call of
    /// `body` (it changed what they wait for), in the same hold of the lock; read after
    /// that call, so `body` may decide it (nil: no one is woken).
    package func wait<C: LockCondition, R, E: Error>(on condition: C, untilNanoseconds deadline: Int64? = nil,
                                                     notifying: @autoclosure () -> C? = nil,
                                                     _ body: (inout sending State) throws(E) -> sending R?) throws(E) -> sending R? {
        try wait(variable(condition), deadline, { notifying().map(variable) }, body)
    }

    /// `wait(on:)` for a lock of one condition; `notifying`: its waiters are woken after the
    /// first call of `body`.
    package func wait<R, E: Error>(untilNanoseconds deadline: Int64? = nil, notifying: Bool = false,
                                   _ body: (inout sending State) throws(E) -> sending R?) throws(E) -> sending R? {
        // Waiting on a lock of several conditions without naming one is a programming error:
        // caught in debug builds; in release, condition 0.
        assert(conditionCount == 1, "name the condition to wait on")
        return try wait(conditions, deadline, { notifying ? conditions : nil }, body)
    }

    private func wait<R, E: Error>(_ waitingOn: UnsafeMutablePointer<pthread_cond_t>, _ deadline: Int64?,
                                   _ notifying: () -> UnsafeMutablePointer<pthread_cond_t>?,
                                   _ body: (inout sending State) throws(E) -> sending R?) throws(E) -> sending R? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var first = true
        while true {
            let result = try body(&state)
            if first {
                first = false
                if let notifying = notifying() { pthread_cond_broadcast(notifying) }
            }
            if let result { return result }
            if let deadline {
                var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                if pthread_cond_timedwait(waitingOn, mutex, &ts) == ETIMEDOUT {
                    return try body(&state)
                }
            } else {
                pthread_cond_wait(waitingOn, mutex)
            }
        }
    }

    /// One field of the state, read with the lock held.
    package subscript<T: Sendable>(_ field: KeyPath<State, T> & Sendable) -> T {
        withLock { $0[keyPath: field] }
    }

    /// One field of the state, read or written with the lock held.
    package subscript<T: Sendable>(_ field: WritableKeyPath<State, T> & Sendable) -> T {
        get { withLock { $0[keyPath: field] } }
        set { withLock { $0[keyPath: field] = newValue } }
    }

    /// Wakes every waiter (on every condition) without changing the state.
    package func notifyAll() {
        pthread_mutex_lock(mutex)
        for c in 0..<conditionCount { pthread_cond_broadcast(conditions + c) }
        pthread_mutex_unlock(mutex)
    }
}

/// Names the conditions of a `Locked` (an enum of them): waiters for different changes are
/// woken apart (the writing pipeline's `QueueCondition`: a job, room, progress). A lock
/// takes only cases of the type it was made with.
package protocol LockCondition: CaseIterable, Equatable, Sendable {}

/// The condition of a lock that has one: its state changed.
package enum OneCondition: LockCondition {
    case changed
}

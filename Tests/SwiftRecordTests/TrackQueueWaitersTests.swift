@testable import SwiftRecord
import XCTest

/// `TrackQueue`'s waiters, the one way to wait for room, driven step by step (a value, no
/// thread, no clock): who waits, when they are woken, what they are told.
///  - testNoWaitWhileThereIsRoom: a callback asked for with room, or on a closed queue, is
///    run at once (told room, or closed) and not kept; a blocked waiter is not counted.
///  - testAFreedSlotWakesEveryWaiterOnce: on a full queue callbacks and blocked threads
///    wait; the freed slot wakes them all, each callback once; a thread that finds room
///    stops being counted, so the next freed slot signals no one.
///  - testAPassThroughQueueWakesItsWaitersInBatches: a pass-through track's waiters (callbacks
///    and threads alike) are woken only once the queue is half empty.
///  - testClosingWakesEveryWaiterWithTheReason: a close wakes the callbacks (told closed)
///    and the blocked threads, who find the reason; nothing waits on a closed queue.
final class TrackQueueWaitersTests: XCTestCase {
    /// A calls-recording callback: what each call was told (true: room; false: closed).
    final class Calls: Sendable {
        let told = Locked<[Bool]>([])
        var callback: @Sendable (SwiftRecordError?) -> Void { { [told] closed in told.withLock { $0.append(closed == nil) } } }
        var values: [Bool] { told[\.self] }
    }

    private var sequence: Int64 = 0

    private func sample() throws -> TrackSample {
        let format = AudioFormat(sampleType: .s16, sampleRate: 48_000, channelLayout: .mono)
        return .audio(try AudioSampleBuffer(format: format, presentationTimeStamp: .zero, interleaved: [Int16](repeating: 0, count: 2)), followsGap: false, lane: 0)
    }

    /// Whether a waiter was told to wait (nil), not to go on (room, or the reason).
    private func waits(_ found: SwiftRecordError??) -> Bool {
        if case .none = found { return true }
        return false
    }

    /// A queue of `capacity` filled: one sample taken for encoding, the rest queued.
    private func fullQueue(capacity: Int, passThrough: Bool = false) throws -> TrackQueue {
        var queue = TrackQueue(capacity: capacity, passThrough: passThrough)
        for _ in 0..<capacity {
            XCTAssertTrue(queue.push(TrackQueue.Item(sequence: sequence, sample: try sample(), ticks: sequence)))
            sequence += 1
        }
        XCTAssertNotNil(queue.take())
        XCTAssertFalse(queue.hasRoom)
        return queue
    }

    /// The next sample encoded: its slot freed, the next one taken.
    private func encodeOne(_ queue: inout TrackQueue) -> TrackQueue.Wakes {
        let wakes = queue.finishEncoding(encoded: nil)
        _ = queue.take()
        return wakes
    }

    func testNoWaitWhileThereIsRoom() throws {
        var queue = TrackQueue(capacity: 2)
        let calls = Calls()
        XCTAssertEqual(queue.whenRoom(calls.callback), .some(nil), "room now: run at once, told room")
        var waiting = false
        XCTAssertEqual(queue.blockedWait(&waiting), .some(nil), "room now: a blocked waiter goes on")
        XCTAssertFalse(waiting)
        XCTAssertEqual(queue.waiters.blocked, 0)
        XCTAssertTrue(queue.waiters.callbacks.isEmpty, "nothing kept")
        _ = queue.close(AssetWriterInput.markedFinished)
        XCTAssertEqual(queue.whenRoom(calls.callback), .some(AssetWriterInput.markedFinished), "closed: run at once, told why")
        XCTAssertTrue(queue.waiters.callbacks.isEmpty)
    }

    func testAFreedSlotWakesEveryWaiterOnce() throws {
        var queue = try fullQueue(capacity: 3)
        let first = Calls(), second = Calls()
        XCTAssertTrue(waits(queue.whenRoom(first.callback)), "full: the callback waits")
        XCTAssertTrue(waits(queue.whenRoom(second.callback)))
        var waiting = false
        XCTAssertTrue(waits(queue.blockedWait(&waiting)), "full: the thread waits")
        XCTAssertTrue(waits(queue.blockedWait(&waiting)), "a spurious wake-up on a full queue waits again")
        XCTAssertEqual(queue.waiters.blocked, 1, "counted once")

        let wakes = encodeOne(&queue)
        XCTAssertTrue(wakes.blocked, "the parked thread is signalled")
        XCTAssertNil(wakes.closed, "told room")
        XCTAssertEqual(wakes.callbacks?.count, 2)
        wakes.runCallbacks()
        XCTAssertEqual(first.values, [true])
        XCTAssertEqual(second.values, [true])
        XCTAssertTrue(queue.waiters.callbacks.isEmpty, "one-shot: taken with the wake")

        XCTAssertEqual(queue.blockedWait(&waiting), .some(nil), "the woken thread finds room")
        XCTAssertEqual(queue.waiters.blocked, 0, "and is no longer counted")
        XCTAssertTrue(queue.push(TrackQueue.Item(sequence: sequence, sample: try sample(), ticks: sequence)))
        let next = encodeOne(&queue)
        XCTAssertFalse(next.blocked, "no one waits: the condition is not signalled")
        XCTAssertNil(next.callbacks)
        XCTAssertEqual(first.values, [true], "a callback runs once")
    }

    func testAPassThroughQueueWakesItsWaitersInBatches() throws {
        var queue = try fullQueue(capacity: 8, passThrough: true)
        XCTAssertEqual(queue.wakeLevel, 4)
        let calls = Calls()
        XCTAssertTrue(waits(queue.whenRoom(calls.callback)))
        var waiting = false
        XCTAssertTrue(waits(queue.blockedWait(&waiting)))
        // 8 held: every freed slot down to 5 wakes no one.
        for held in [7, 6, 5] {
            let wakes = encodeOne(&queue)
            XCTAssertEqual(queue.count, held)
            XCTAssertFalse(wakes.blocked, "\(held) held: the thread sleeps on")
            XCTAssertNil(wakes.callbacks, "\(held) held: the callback waits on")
        }
        let wakes = encodeOne(&queue)
        XCTAssertEqual(queue.count, 4)
        XCTAssertTrue(wakes.blocked, "half empty: the thread wakes")
        wakes.runCallbacks()
        XCTAssertEqual(calls.values, [true], "half empty: the callback runs")
    }

    func testClosingWakesEveryWaiterWithTheReason() throws {
        var queue = try fullQueue(capacity: 2)
        let calls = Calls()
        XCTAssertTrue(waits(queue.whenRoom(calls.callback)))
        var waiting = false
        XCTAssertTrue(waits(queue.blockedWait(&waiting)))
        let wakes = queue.close(WritingPipeline.cancelledError)
        XCTAssertTrue(wakes.blocked)
        XCTAssertEqual(wakes.closed, WritingPipeline.cancelledError, "callbacks are told why the queue closed")
        wakes.runCallbacks()
        XCTAssertEqual(calls.values, [false])
        let found = queue.blockedWait(&waiting)
        XCTAssertEqual(found, .some(WritingPipeline.cancelledError), "the woken thread finds the reason")
        XCTAssertEqual(queue.waiters.blocked, 0)
        XCTAssertFalse(queue.hasRoom)
        let later = Calls()
        XCTAssertEqual(queue.whenRoom(later.callback), .some(WritingPipeline.cancelledError), "a closed queue keeps no waiter")
        XCTAssertTrue(queue.waiters.callbacks.isEmpty)
    }
}

import DequeModule

/// What an input queues for its track: an appended picture, pinned as it was appended
/// (not copied), PCM samples (whether samples were lost before them, and which source of a
/// mixed track they are: 0 for a track of one source), or a compressed sample for a
/// pass-through track (and its decode time in the track's ticks).
enum TrackSample: Sendable {
    case picture(PinnedPicture)
    case audio(AudioSampleBuffer, followsGap: Bool, lane: Int)
    case compressed(CompressedSampleBuffer, decodeTicks: Int64)

    /// Ends what the sample holds (a picture's pin) once it is encoded or dropped.
    func release() {
        if case .picture(let picture) = self { picture.unpin() }
    }
}

/// One track's bounded queue between its input and the pipeline's thread: the input
/// pushes what it admits, the pipeline pops it, and the sample keeps its slot while it is
/// encoded.
///
/// Every wait for room in the queue goes through its waiters (`RoomWaiters`): threads
/// blocked in `append` or `waitUntilReadyForMoreMediaData()` (counted here, parked on the
/// lock's `.room` condition) and one-shot callbacks (a suspended append, the capture loop's
/// `RoomWatch`, the next call of a `requestMediaDataWhenReady` block). A full queue takes
/// waiters; a freed slot at or below `wakeLevel`, or the queue's close, wakes all of them,
/// and only then: the pipeline signals the condition only when a thread is parked on it.
///
/// Lives in `WritingPipeline.State`, under the pipeline's one lock with every other
/// track's queue: a push takes that lock once, and so does the pipeline for each sample
/// it finishes and takes. Samples of different tracks are taken in the order they were
/// pushed (`Item.sequence`).
struct TrackQueue {
    struct Item {
        /// Push order across the pipeline's tracks.
        let sequence: Int64
        let sample: TrackSample
        /// The sample's time in the track's encoder ticks.
        let ticks: Int64
    }

    /// At most this many samples queued and being encoded (the input's `queueDepth`).
    let capacity: Int
    /// Waiters are woken once the queue holds at most this many (or closes): one free slot
    /// (`capacity - 1`) for an encoding track; half the queue for a pass-through track,
    /// whose samples cost next to nothing to mux, so that waking the reader for each one
    /// made the two threads take turns per packet (`convert --copy`: bench/copy.py).
    let wakeLevel: Int
    private(set) var items: Deque<Item>
    /// A sample taken by the pipeline and not yet encoded: it still holds its slot.
    private(set) var encoding = false
    /// Why the input takes no more samples, once it does not (finished, failed,
    /// cancelled): waiters for room wake and find it.
    private(set) var closed: SwiftRecordError?
    /// Samples the track's encoder has given out as packets.
    var encoded = 0
    /// Who waits for room now.
    private(set) var waiters = RoomWaiters()

    init(capacity: Int, passThrough: Bool = false) {
        self.capacity = max(1, capacity)
        wakeLevel = passThrough ? self.capacity / 2 : self.capacity - 1
        items = Deque(minimumCapacity: self.capacity)
    }

    var count: Int { items.count + (encoding ? 1 : 0) }
    var hasRoom: Bool { closed == nil && count < capacity }

    /// Queues `item` if there is room; false when the queue is full.
    mutating func push(_ item: Item) -> Bool {
        guard count < capacity else { return false }
        items.append(item)
        return true
    }

    /// Takes the oldest sample for encoding; it keeps its slot until `finishEncoding`.
    mutating func take() -> Item? {
        guard !encoding, let item = items.popFirst() else { return nil }
        encoding = true
        return item
    }

    /// The sample taken was encoded (or dropped): its slot is free. Returns who to wake.
    mutating func finishEncoding(encoded: Int?) -> Wakes {
        encoding = false
        if let encoded { self.encoded = max(self.encoded, encoded) }
        return count <= wakeLevel ? takeWakes() : .none
    }

    /// Closes the queue for `reason` (the first reason stays); returns who to wake (all).
    mutating func close(_ reason: SwiftRecordError) -> Wakes {
        if closed == nil { closed = reason }
        return takeWakes()
    }

    /// Takes the queued samples out, to be released (`TrackSample.release`) with no lock held.
    mutating func removeAll() -> [TrackSample] {
        defer { items.removeAll() }
        return items.map(\.sample)
    }

    // MARK: - Waiting

    /// A callback waiter: `body` runs at the next wake with nil (there is room) or why the
    /// queue closed. Nil when it waits; else what to call it with now, with no lock held
    /// (`.some(nil)`: there is room; else the queue is closed).
    mutating func whenRoom(_ body: @escaping @Sendable (SwiftRecordError?) -> Void) -> SwiftRecordError?? {
        if !isFull { return .some(closed) }
        waiters.callbacks.append(body)
        return nil
    }

    /// A blocked waiter's look at the queue, with the lock held: nil while it must wait (it
    /// is counted then, once: `waiting` remembers), else why it never will have room (nil
    /// inside: there is room now). Either way out, it is no longer counted.
    mutating func blockedWait(_ waiting: inout Bool) -> SwiftRecordError?? {
        if isFull {
            if !waiting { waiters.blocked += 1 }
            waiting = true
            return nil
        }
        if waiting { waiters.blocked -= 1 }
        waiting = false
        return .some(closed)
    }

    /// Full and open: a waiter must wait.
    private var isFull: Bool { closed == nil && count >= capacity }

    private mutating func takeWakes() -> Wakes {
        guard !waiters.callbacks.isEmpty else { return Wakes(callbacks: nil, closed: closed, blocked: waiters.blocked > 0) }
        defer { waiters.callbacks.removeAll(keepingCapacity: true) }
        return Wakes(callbacks: waiters.callbacks, closed: closed, blocked: waiters.blocked > 0)
    }

    /// Who waits for room in a queue.
    struct RoomWaiters {
        /// Threads parked on the pipeline lock's `.room` condition for this queue.
        var blocked = 0
        /// Run once at the next wake (with nil, or why the queue closed), then forgotten.
        var callbacks: [@Sendable (SwiftRecordError?) -> Void] = []
    }

    /// Who to wake, taken under the lock: the parked threads by signalling the condition in
    /// the same hold, the callbacks after it, with no lock held.
    struct Wakes {
        var callbacks: [@Sendable (SwiftRecordError?) -> Void]?
        /// What the callbacks are told: nil (room), or why the queue closed.
        var closed: SwiftRecordError?
        var blocked: Bool

        static let none = Wakes(callbacks: nil, closed: nil, blocked: false)

        func runCallbacks() {
            if let callbacks { for c in callbacks { c(closed) } }
        }
    }
}

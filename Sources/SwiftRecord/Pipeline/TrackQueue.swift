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
/// encoded. Freeing a slot wakes whoever waits for room there and then: a blocked
/// `append` or `waitUntilReadyForMoreMediaData()` (the lock's not-full condition), a
/// suspended one and the capture loop's pacer (one-shot callbacks), and
/// `requestMediaDataWhenReady` (the input's room handler). A pass-through track's blocked
/// appends are woken once the queue is half empty instead (`wakesInBatches`).
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
    private(set) var items: Deque<Item>
    /// A sample taken by the pipeline and not yet encoded: it still holds its slot.
    private(set) var encoding = false
    /// Why the input takes no more samples, once it does not (finished, failed,
    /// cancelled): waiters for room wake and find it.
    var closed: SwiftRecordError?
    /// Samples the track's encoder has given out as packets.
    var encoded = 0
    /// Called once at the next free slot (or when the queue closes), then forgotten.
    private var roomCallbacks: [@Sendable () -> Void] = []
    /// Called at every free slot while set: the input's `requestMediaDataWhenReady` scheduler.
    var roomHandler: (@Sendable () -> Void)?

    /// Whether a blocked producer is woken only once the queue is half empty rather than
    /// at every freed slot: a pass-through track's, whose samples cost next to nothing to
    /// mux, so that waking the reader for each one made the two threads take turns per
    /// packet (`convert --copy`: bench/copy.py). Room callbacks still run at every slot.
    let wakesInBatches: Bool

    init(capacity: Int, wakesInBatches: Bool = false) {
        self.capacity = max(1, capacity)
        self.wakesInBatches = wakesInBatches
        items = Deque(minimumCapacity: self.capacity)
    }

    /// Whether a producer waiting for room should be woken now (see `wakesInBatches`).
    var wakeForRoom: Bool { !wakesInBatches || count <= capacity / 2 }

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

    /// The sample taken was encoded (or dropped): its slot is free. Returns who to wake,
    /// to be called with no lock held.
    mutating func finishEncoding(encoded: Int?) -> Wakes {
        encoding = false
        if let encoded { self.encoded = max(self.encoded, encoded) }
        return takeWakes()
    }

    /// Closes the queue for `reason` (the first reason stays); returns who to wake.
    mutating func close(_ reason: SwiftRecordError) -> Wakes {
        if closed == nil { closed = reason }
        roomHandler = nil
        return takeWakes()
    }

    /// Takes the queued samples out, to be released (`TrackSample.release`) with no lock held.
    mutating func removeAll() -> [TrackSample] {
        defer { items.removeAll() }
        return items.map(\.sample)
    }

    /// Runs `body` at the next free slot, or now (returned, for the caller to run
    /// unlocked) when there is room or the queue is closed.
    mutating func whenRoom(_ body: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? {
        if closed != nil || count < capacity { return body }
        roomCallbacks.append(body)
        return nil
    }

    private mutating func takeWakes() -> Wakes {
        guard !roomCallbacks.isEmpty else { return Wakes(callbacks: nil, handler: roomHandler) }
        defer { roomCallbacks.removeAll(keepingCapacity: true) }
        return Wakes(callbacks: roomCallbacks, handler: roomHandler)
    }

    /// Who waits for room in a queue, taken under the lock and woken after it.
    struct Wakes {
        var callbacks: [@Sendable () -> Void]?
        var handler: (@Sendable () -> Void)?

        static let none = Wakes(callbacks: nil, handler: nil)
        var isEmpty: Bool { callbacks == nil && handler == nil }

        func run() {
            if let callbacks { for c in callbacks { c() } }
            handler?()
        }
    }
}

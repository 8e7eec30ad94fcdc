/// What a ``LiveScheduler`` does to the world, and the two figures of the encoder it reads.
/// While recording, `LiveCaptureLoop` carries these out on the capture thread (the adaptor,
/// the grab worker, the timing log); tests give a fake that records each call and answers
/// "room" or "full" as the test says.
protocol LiveEffects<Picture> {
    associatedtype Picture
    /// Appends `picture` shown at `time` unless the encoder's queue is full: false, and the
    /// picture is not taken. Throws when appending is not possible at all.
    mutating func appendIfRoom(_ picture: Picture, at time: MediaTime) throws -> Bool
    /// Appends, waiting for room: capture is over, nothing is lost by waiting now.
    mutating func appendWaiting(_ picture: Picture, at time: MediaTime) throws
    /// Every frame before `time` is appended and the recording pauses: the encoder writes
    /// out what it holds back (its look-ahead).
    mutating func endEncoderRun(at time: MediaTime) throws
    /// Starts a grab of the picture for frame `index` (or a later one, should its tick close
    /// first), whose outcome comes back as the `grab` of a later `turn`.
    mutating func requestGrab(forFrame index: Int64)
    /// Frames wait for room: the encoder's next free slot should end the loop's wait.
    mutating func watchForRoom()
    /// One decision, for the timing log.
    mutating func log(_ entry: TimingEntry)
    /// Samples the encoder has given out as packets.
    var encodedCount: Int { get }
    /// Samples accepted for encoding.
    var appendedCount: Int { get }
}

/// One line of the timing log (`TimingLog`): a frame's fate or another decision.
struct TimingEntry: Equatable {
    var frame: Int64?
    var presentationTime: MediaTime?
    /// Capture time and host time, seconds since the session started.
    var captureTime: Double?
    var hostTime: Double
    var reason: String
}

internal import CFFmpeg

/// What a reader owns while it reads: the file's `Demuxer` and one `TrackOutputEngine`
/// per output. Packets are read in file order and queued for every output of their
/// track, so outputs can be read in any order (as Apple's can: what one output is not
/// asked for waits in memory). Lent by the reader to one read at a time
/// (`AssetReader.next`), which reads and decodes with the reader's lock released; not
/// `Sendable`.
final class ReadingSession {
    private let demuxer: Demuxer
    let engines: [TrackOutputEngine]
    private let path: String
    private var endOfFile = false

    init(demuxer: Demuxer, engines: [TrackOutputEngine], range: TimeRange?, path: String) throws(SwiftRecordError) {
        self.demuxer = demuxer
        self.engines = engines
        self.path = path
        if let range, range.isValid, range.start > .zero {
            // The outputs drop what comes before the start.
            try seekDemuxer(to: range.start)
        }
    }

    /// To the key frame at or before `time`.
    private func seekDemuxer(to time: MediaTime) throws(SwiftRecordError) {
        let target = time.convertScale(1_000_000, rounding: .down).value
        try check(avformat_seek_file(demuxer.context, -1, Int64.min, target, target, 0),
                  "read \(path): seek to \(time)", kind: .invalidData)
    }

    /// Moves to the key frame at or before `time` and restarts every output there, each
    /// to hand out the one picture of `request` (an image generator's; the session's first
    /// output decodes the video track).
    func seek(to time: MediaTime, request: PictureRequest?) throws(SwiftRecordError) {
        try seekDemuxer(to: max(time, .zero))
        endOfFile = false
        for engine in engines { try engine.restart(for: request) }
    }

    var allFinished: Bool { engines.allSatisfy(\.finished) }

    /// Finds the picture of `request` (at `time`) for the first output: decoding on from
    /// where the last picture was found when that reaches it no later than a seek would
    /// (the key frame at or before the time, from the demuxer's index, is not past the last
    /// picture decoded), else through `seek(to:request:)`.
    func moveToPicture(at time: MediaTime, request: PictureRequest) throws(SwiftRecordError) {
        guard let engine = engines.first, engine.canProceed(to: request.ticks), let last = engine.lastPictureTicks,
              let stream = demuxer.stream(Int(engine.stream)) else {
            try seek(to: time, request: request)
            return
        }
        let index = av_index_search_timestamp(stream, request.ticks, AVSEEK_FLAG_BACKWARD)
        guard index >= 0, let entry = avformat_index_get_entry(stream, index), entry.pointee.timestamp <= last else {
            try seek(to: time, request: request)
            return
        }
        engine.proceed(to: request)
    }

    /// The next sample of output `index`, reading the file as far as needed; nil at its end.
    func next(_ index: Int) throws(SwiftRecordError) -> MediaSample? {
        let engine = engines[index]
        while true {
            if let sample = try engine.next() { return sample }
            if engine.finished { return nil }
            if engine.inputEnded && engine.queue.isEmpty { continue }
            try readPacket()
        }
    }

    /// The next sample of output `index` if the packets read so far hold it, reading no
    /// further: a sparse track's (subtitles), whose next packet may be far into the file,
    /// taken as the other tracks' reading reaches it rather than by reading (and holding)
    /// everything before it.
    func nextIfRead(_ index: Int) throws(SwiftRecordError) -> MediaSample? {
        try engines[index].next()
    }

    private func readPacket() throws(SwiftRecordError) {
        if endOfFile { return }
        let read = demuxer.read()
        if read == sr_error_eof() {
            endOfFile = true
            for e in engines { e.inputEnded = true }
            return
        }
        if read == sr_error_again() { return }
        guard read >= 0 else {
            throw ffmpegError(read, "read \(path)", kind: .invalidData, hint: "the file is damaged or cut short")
        }
        let packet = demuxer.packet
        for engine in engines where engine.stream == packet.pointee.stream_index && !engine.finished {
            engine.queue.append(try PacketStorage(referencing: packet))
        }
    }
}

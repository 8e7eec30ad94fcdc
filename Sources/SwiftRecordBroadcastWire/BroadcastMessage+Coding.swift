// Reading and writing one datagram. Every field is checked against the limits in
// BroadcastMessage before a value is made; a failure says which field and what was expected.

extension BroadcastMessage {
    /// Reads one datagram. Throws for anything but a whole, well-formed message.
    package static func parse(_ bytes: UnsafeRawBufferPointer) throws(BroadcastProtocolError) -> BroadcastMessage {
        var r = Reader(bytes: bytes)
        guard bytes.count >= headerSize else {
            throw BroadcastProtocolError("message of \(bytes.count) bytes; expected at least the \(headerSize)-byte header")
        }
        guard bytes.count <= maximumMessageSize else {
            throw BroadcastProtocolError("message of \(bytes.count) bytes; expected at most \(maximumMessageSize)")
        }
        let magic = try r.u32(), version = try r.u16(), type = try r.u16(), length = Int(try r.u32())
        guard magic == BroadcastMessage.magic else {
            throw BroadcastProtocolError("bad magic 0x\(String(magic, radix: 16)); expected SRB1")
        }
        guard version == BroadcastMessage.version else {
            throw BroadcastProtocolError("protocol version \(version); expected \(BroadcastMessage.version)")
        }
        guard length == bytes.count - headerSize else {
            throw BroadcastProtocolError("header says a \(length)-byte body; the message carries \(bytes.count - headerSize)")
        }
        guard let kind = Kind(rawValue: type) else { throw BroadcastProtocolError("unknown message type \(type)") }
        let message = try parseBody(kind, &r)
        guard r.remaining == 0 else {
            throw BroadcastProtocolError("\(r.remaining) bytes after the \(kind) message's body")
        }
        return message
    }

    /// `parse` over an array.
    package static func parse(_ bytes: [UInt8]) throws(BroadcastProtocolError) -> BroadcastMessage {
        let result = bytes.withUnsafeBytes { buffer in Result { () throws(BroadcastProtocolError) in try parse(buffer) } }
        return try result.get()
    }

    private static func parseBody(_ kind: Kind, _ r: inout Reader) throws(BroadcastProtocolError) -> BroadcastMessage {
        switch kind {
        case .hello:
            let pid = Int32(bitPattern: try r.u32())
            let width = Int(try r.u32()), height = Int(try r.u32())
            let num = Int(try r.u32()), den = Int(try r.u32())
            let rate = Int(try r.u32()), channels = Int(try r.u16()), nameLength = Int(try r.u16())
            guard width >= 16, height >= 16, width <= maximumSide, height <= maximumSide, width % 2 == 0, height % 2 == 0 else {
                throw BroadcastProtocolError("picture size \(width)x\(height); expected even sides from 16 to \(maximumSide)")
            }
            guard num >= 1, den >= 1, num <= 1000 * den else {
                throw BroadcastProtocolError("frame rate \(num)/\(den); expected a positive rate up to 1000")
            }
            guard (8_000...192_000).contains(rate), (1...maximumChannels).contains(channels) else {
                throw BroadcastProtocolError("sound \(rate) Hz, \(channels) channels; expected 8000–192000 Hz and 1–\(maximumChannels) channels")
            }
            guard pid > 0 else { throw BroadcastProtocolError("pid \(pid); expected a positive process id") }
            guard (1...maximumNameBytes).contains(nameLength) else {
                throw BroadcastProtocolError("name of \(nameLength) bytes; expected 1–\(maximumNameBytes)")
            }
            let nameBytes = try r.bytes(nameLength)
            guard nameBytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else {
                throw BroadcastProtocolError("name is not printable ASCII")
            }
            return .hello(Hello(pid: pid, width: width, height: height, frameRateNumerator: num, frameRateDenominator: den,
                                sampleRate: rate, channels: channels, name: String(decoding: nameBytes, as: UTF8.self)))
        case .frame:
            let index = Int(try r.u32())
            guard try r.u32() == 0 else { throw BroadcastProtocolError("frame message's reserved field is not 0") }
            let time = try r.i64()
            guard index < maximumBuffers else {
                throw BroadcastProtocolError("buffer index \(index); expected below \(maximumBuffers)")
            }
            guard time >= 0 else { throw BroadcastProtocolError("frame time \(time) ns; expected a CLOCK_MONOTONIC time ≥ 0") }
            return .frame(index: index, time: time)
        case .sound:
            let rawKind = try r.u8(), channels = Int(try r.u8())
            guard try r.u16() == 0 else { throw BroadcastProtocolError("sound message's reserved field is not 0") }
            let frames = Int(try r.u32()), time = try r.i64()
            guard let soundKind = SoundKind(rawValue: rawKind) else {
                throw BroadcastProtocolError("sound type \(rawKind); expected 1 (app) or 2 (microphone)")
            }
            guard (1...maximumChannels).contains(channels) else {
                throw BroadcastProtocolError("\(channels) channels; expected 1–\(maximumChannels)")
            }
            guard (1...maximumSoundFrames).contains(frames) else {
                throw BroadcastProtocolError("\(frames) sound frames; expected 1–\(maximumSoundFrames)")
            }
            guard time >= 0 else { throw BroadcastProtocolError("sound time \(time) ns; expected a CLOCK_MONOTONIC time ≥ 0") }
            guard r.remaining == frames * channels * 2 else {
                throw BroadcastProtocolError("sound carries \(r.remaining) bytes; \(frames) frames of \(channels) 16-bit channels are \(frames * channels * 2)")
            }
            return .sound(Sound(kind: soundKind, time: time, channels: channels, samples: try r.bytes(frames * channels * 2)))
        case .paused: return .paused
        case .resumed: return .resumed
        case .finished: return .finished
        case .welcome:
            // (64-bit fields clamped as read: a value past Int.max is out of range anyway.)
            let count = Int(try r.u32()), size = Int(clamping: try r.u64())
            var strides: [Int] = [], offsets: [Int] = []
            for _ in 0..<3 { strides.append(Int(try r.u32())) }
            for _ in 0..<3 { offsets.append(Int(clamping: try r.u64())) }
            guard (2...maximumBuffers).contains(count) else {
                throw BroadcastProtocolError("\(count) buffers; expected 2–\(maximumBuffers)")
            }
            guard size > 0, size <= 4 * maximumSide * maximumSide else {
                throw BroadcastProtocolError("buffer size \(size); expected 1…\(4 * maximumSide * maximumSide)")
            }
            guard strides.allSatisfy({ $0 > 0 && $0 <= 2 * maximumSide }), offsets.allSatisfy({ $0 < size }) else {
                throw BroadcastProtocolError("plane layout strides \(strides), offsets \(offsets) does not fit a \(size)-byte buffer")
            }
            return .welcome(Welcome(count: count, size: size, strides: strides, offsets: offsets))
        case .release:
            let index = Int(try r.u32())
            guard index < maximumBuffers else { throw BroadcastProtocolError("release of buffer \(index); expected below \(maximumBuffers)") }
            return .release(index: index)
        case .refused:
            let text = try r.bytes(min(r.remaining, maximumReasonBytes))
            return .refused(reason: String(decoding: text, as: UTF8.self))
        }
    }

    /// The datagram for this message.
    package var encoded: [UInt8] {
        var w = Writer()
        switch self {
        case .hello(let h):
            let name = Array(h.name.utf8.prefix(BroadcastMessage.maximumNameBytes))
            w.u32(UInt32(bitPattern: h.pid)); w.u32(UInt32(clamping: h.width)); w.u32(UInt32(clamping: h.height))
            w.u32(UInt32(clamping: h.frameRateNumerator)); w.u32(UInt32(clamping: h.frameRateDenominator))
            w.u32(UInt32(clamping: h.sampleRate)); w.u16(UInt16(clamping: h.channels)); w.u16(UInt16(name.count))
            w.bytes.append(contentsOf: name)
        case .frame(let index, let time):
            w.u32(UInt32(clamping: index)); w.u32(0); w.u64(UInt64(bitPattern: time))
        case .sound(let s):
            w.bytes.append(s.kind.rawValue); w.bytes.append(UInt8(clamping: s.channels)); w.u16(0)
            w.u32(UInt32(clamping: s.frames)); w.u64(UInt64(bitPattern: s.time))
            w.bytes.append(contentsOf: s.samples)
        case .paused, .resumed, .finished:
            break
        case .welcome(let c):
            w.u32(UInt32(clamping: c.count)); w.u64(UInt64(clamping: c.size))
            for s in c.strides.prefix(3) { w.u32(UInt32(clamping: s)) }
            for o in c.offsets.prefix(3) { w.u64(UInt64(clamping: o)) }
        case .release(let index):
            w.u32(UInt32(clamping: index))
        case .refused(let reason):
            w.bytes.append(contentsOf: reason.utf8.prefix(BroadcastMessage.maximumReasonBytes))
        }
        var header = Writer()
        header.u32(BroadcastMessage.magic); header.u16(BroadcastMessage.version); header.u16(kind.rawValue)
        header.u32(UInt32(w.bytes.count))
        return header.bytes + w.bytes
    }
}

/// Little-endian fields from a datagram, each read checked against what is left.
private struct Reader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0
    var remaining: Int { bytes.count - offset }

    mutating func take<T: FixedWidthInteger>(_: T.Type) throws(BroadcastProtocolError) -> T {
        let n = MemoryLayout<T>.size
        guard remaining >= n else {
            throw BroadcastProtocolError("message ends after \(offset) bytes; expected \(n) more")
        }
        var v: T = 0
        for i in 0..<n { v |= T(bytes[offset + i]) << (8 * i) }
        offset += n
        return v
    }
    mutating func u8() throws(BroadcastProtocolError) -> UInt8 { try take(UInt8.self) }
    mutating func u16() throws(BroadcastProtocolError) -> UInt16 { try take(UInt16.self) }
    mutating func u32() throws(BroadcastProtocolError) -> UInt32 { try take(UInt32.self) }
    mutating func u64() throws(BroadcastProtocolError) -> UInt64 { try take(UInt64.self) }
    mutating func i64() throws(BroadcastProtocolError) -> Int64 { Int64(bitPattern: try take(UInt64.self)) }
    mutating func bytes(_ n: Int) throws(BroadcastProtocolError) -> [UInt8] {
        guard n >= 0, remaining >= n else {
            throw BroadcastProtocolError("message ends after \(offset) bytes; expected \(n) more")
        }
        defer { offset += n }
        return Array(bytes[offset..<(offset + n)])
    }
}

private struct Writer {
    var bytes: [UInt8] = []
    mutating func put<T: FixedWidthInteger>(_ v: T) {
        for i in 0..<MemoryLayout<T>.size { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * i))) }
    }
    mutating func u16(_ v: UInt16) { put(v) }
    mutating func u32(_ v: UInt32) { put(v) }
    mutating func u64(_ v: UInt64) { put(v) }
}

/// The fuzzers' and tests' exercise of the parser on any bytes: a message that parses
/// must encode to the very bytes it came from (there is one spelling of each message).
/// Returns how that contract was broken, or nil; the fuzz target traps on it, the tests fail.
package func exerciseBroadcastMessageParser(_ bytes: [UInt8]) -> String? {
    guard let message = try? BroadcastMessage.parse(bytes) else { return nil }
    if case .refused = message { return nil }  // (a reason's invalid UTF-8 is replaced on reading)
    let again = message.encoded
    return again == bytes ? nil : "\(message) encodes to \(again.count) bytes other than the \(bytes.count) it was parsed from"
}

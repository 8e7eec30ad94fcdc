/// An H.264 sample description (`avcC`, ISO/IEC 14496-15): the parameter sets a copied
/// stream's decoder needs. A smart cut adds the re-encoded part's own SPS and PPS (another
/// id) beside the source's, so one description serves both parts.
struct AVCConfiguration: Equatable {
    /// Version, profile, profile compatibility, level.
    var head: [UInt8]
    /// Bytes per NAL unit length in the samples (1, 2 or 4).
    var lengthSize: Int
    var sequenceSets: [[UInt8]]
    var pictureSets: [[UInt8]]
    /// What follows the PPS list (High profiles' chroma and bit-depth fields), kept as it is.
    var trailing: [UInt8]

    /// Parses an `avcC` record; nil for anything else (Annex B extradata, damaged data).
    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 7, bytes[0] == 1 else { return nil }
        head = Array(bytes[0..<4])
        lengthSize = Int(bytes[4] & 3) + 1
        var i = 6
        func sets(count: Int) -> [[UInt8]]? {
            var out: [[UInt8]] = []
            for _ in 0..<count {
                guard i + 2 <= bytes.count else { return nil }
                let n = Int(bytes[i]) << 8 | Int(bytes[i + 1])
                i += 2
                guard i + n <= bytes.count else { return nil }
                out.append(Array(bytes[i..<(i + n)]))
                i += n
            }
            return out
        }
        guard let sps = sets(count: Int(bytes[5] & 0x1F)), i < bytes.count else { return nil }
        let ppsCount = Int(bytes[i])
        i += 1
        guard let pictures = sets(count: ppsCount) else { return nil }
        sequenceSets = sps
        pictureSets = pictures
        trailing = Array(bytes[i...])
    }

    var serialized: [UInt8] {
        var out = head + [0xFC | UInt8(lengthSize - 1), 0xE0 | UInt8(sequenceSets.count)]
        for s in sequenceSets { out += [UInt8(s.count >> 8), UInt8(s.count & 0xFF)] + s }
        out.append(UInt8(pictureSets.count))
        for p in pictureSets { out += [UInt8(p.count >> 8), UInt8(p.count & 0xFF)] + p }
        return out + trailing
    }

    /// The id of a sequence parameter set: the first Exp-Golomb number after its profile,
    /// constraint and level bytes (nil where it is not 0 to 30, which is all a cut needs).
    static func sequenceSetID(_ sps: [UInt8]) -> Int? { sps.count > 4 ? firstNumber(sps[4...]) : nil }

    /// The id of a picture parameter set: the first Exp-Golomb number after its NAL header.
    static func pictureSetID(_ pps: [UInt8]) -> Int? { pps.count > 1 ? firstNumber(pps[1...]) : nil }

    /// The unsigned Exp-Golomb number `bytes` start with (0 to 30; nil otherwise).
    private static func firstNumber(_ bytes: ArraySlice<UInt8>) -> Int? {
        var bits: [Bool] = []
        for byte in bytes.prefix(4) { for b in (0..<8).reversed() { bits.append(byte >> b & 1 == 1) } }
        guard let zeros = bits.firstIndex(of: true), zeros < 5, bits.count > 2 * zeros else { return nil }
        var value = 1
        for b in bits.dropFirst(zeros + 1).prefix(zeros) { value = value << 1 | (b ? 1 : 0) }
        return value - 1
    }

    /// The NAL units of Annex B bytes (start codes 00 00 01 or 00 00 00 01).
    static func annexBUnits(_ bytes: [UInt8]) -> [[UInt8]] {
        var starts: [(Int, Int)] = []
        var i = 0
        while i + 3 <= bytes.count {
            if bytes[i] == 0, bytes[i + 1] == 0, bytes[i + 2] == 1 {
                starts.append((i, i + 3))
                i += 3
            } else {
                i += 1
            }
        }
        return starts.enumerated().map { n, s in
            var end = n + 1 < starts.count ? starts[n + 1].0 : bytes.count
            while end > s.1, bytes[end - 1] == 0 { end -= 1 }
            return Array(bytes[s.1..<end])
        }
    }

    /// The NAL units of a sample whose units are prefixed by their length in `lengthSize` bytes.
    static func lengthPrefixedUnits(_ bytes: [UInt8], lengthSize: Int) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var i = 0
        while i + lengthSize <= bytes.count {
            let n = bytes[i..<(i + lengthSize)].reduce(0) { $0 << 8 | Int($1) }
            i += lengthSize
            guard n > 0, i + n <= bytes.count else { break }
            out.append(Array(bytes[i..<(i + n)]))
            i += n
        }
        return out
    }

    /// `units` as one sample, each prefixed by its length.
    func sample(_ units: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for u in units {
            for k in (0..<lengthSize).reversed() { out.append(UInt8(truncatingIfNeeded: u.count >> (8 * k))) }
            out += u
        }
        return out
    }
}

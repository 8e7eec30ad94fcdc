#if canImport(Glibc)
import Glibc
#endif

/// Paths are bytes on Linux, and a file name need not be UTF-8. A Swift `String` holds
/// only Unicode scalars, so a path that is not UTF-8 is carried in one losslessly: each
/// byte that is not part of valid UTF-8 becomes the private-use scalar U+10FF00 + byte
/// (U+10FF80–U+10FFFF), and a real scalar in that range is carried as its four UTF-8
/// bytes, each escaped the same way. Every system call and FFmpeg call on a path turns it
/// back into the original bytes (`withCString`), so `-o $'y\xff.mp4'` writes the file
/// named by those bytes, not `y\u{FFFD}.mp4`.
///
/// A path made of valid UTF-8 (every ordinary `String`) is unchanged by this.
package enum PathBytes {
    private static let base: UInt32 = 0x10FF00
    private static let escaped: ClosedRange<UInt32> = 0x10FF80...0x10FFFF

    /// The string carrying `bytes` (without a terminating NUL): each valid UTF-8 sequence
    /// decoded, every other byte escaped.
    package static func string<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let bytes = Array(bytes)
        var scalars = String.UnicodeScalarView()
        func escape<S: Sequence>(_ raw: S) where S.Element == UInt8 {
            for byte in raw { scalars.append(Unicode.Scalar(base + UInt32(byte))!) }
        }
        var i = 0
        while i < bytes.count {
            var parser = Unicode.UTF8.ForwardParser()
            var iterator = bytes[i...].makeIterator()
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                if escaped.contains(scalar.value) { escape(encoded) } else { scalars.append(scalar) }
                i += encoded.count
            case .error(let length):
                escape(bytes[i..<i + length])
                i += length
            case .emptyInput:
                i = bytes.count
            }
        }
        return String(scalars)
    }

    /// The string carrying the NUL-terminated C string `cString`.
    package static func string(cString: UnsafePointer<CChar>) -> String {
        string(UnsafeBufferPointer(start: UnsafeRawPointer(cString).assumingMemoryBound(to: UInt8.self), count: strlen(cString)))
    }

    /// The bytes `string` carries (without a terminating NUL).
    package static func bytes(_ string: String) -> [UInt8] {
        // Every escaped scalar (U+10FF80–U+10FFFF) starts with the byte 0xF4 in UTF-8: a
        // string without one (almost every string: messages, help, ordinary paths) is its
        // UTF-8 as it is, without a walk over its scalars.
        guard string.utf8.contains(0xF4) else { return Array(string.utf8) }
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count)
        for scalar in string.unicodeScalars {
            if escaped.contains(scalar.value) {
                out.append(UInt8(scalar.value - base))
            } else {
                out.append(contentsOf: scalar.utf8)
            }
        }
        return out
    }

    /// Calls `body` with the NUL-terminated bytes `string` carries: for every system or
    /// FFmpeg call that takes a path.
    package static func withCString<R, E: Error>(_ string: String, _ body: (UnsafePointer<CChar>) throws(E) -> R) throws(E) -> R {
        var buffer = bytes(string).map { CChar(bitPattern: $0) }
        buffer.append(0)
        // `withUnsafeBufferPointer` does not pass on a typed throw: carry it out by hand.
        var result: Result<R, E>!
        buffer.withUnsafeBufferPointer { p in
            do throws(E) { result = .success(try body(p.baseAddress!)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    /// Whether `string` carries bytes that are not UTF-8.
    package static func hasEscapes(_ string: String) -> Bool {
        string.unicodeScalars.contains { escaped.contains($0.value) }
    }
}

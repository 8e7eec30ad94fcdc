#if canImport(Glibc)
import Glibc
#endif
internal import SystemPackage

extension FileDescriptor {
    /// Scatter read (`readv`) into `vectors`, which swift-system does not wrap; an
    /// interrupted call is tried again, as `read(into:retryOnInterrupt:)` does.
    func read(vectors: UnsafeBufferPointer<iovec>) throws(Errno) -> Int {
        guard let base = vectors.baseAddress else { return 0 }
        while true {
            let n = readv(rawValue, base, Int32(vectors.count))
            if n >= 0 { return n }
            let e = Errno(rawValue: errno)
            if e != .interrupted { throw e }
        }
    }

    /// The message of a failed call: the error's text (strerror) for an `Errno`.
    static func reason(_ error: any Error) -> String {
        (error as? Errno)?.description ?? "\(error)"
    }
}

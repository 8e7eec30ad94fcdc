import CBroadcast
import Glibc

/// The ring of yuv420p picture buffers a host shares with its sender: one sealed memfd per
/// buffer, mapped here. The host allocates it (`allocate`); the sender maps what it was
/// given (`map`), after checking every descriptor. Owns the descriptors and the mappings.
package final class SharedPictureRing: @unchecked Sendable {
    // @unchecked: every field is set once in init and only read after; the mapped bytes
    // are shared memory whose writer is the other process by design.
    package let layout: BroadcastMessage.Welcome
    package let fds: [Int32]
    private let mappings: [UnsafeMutableRawPointer]

    /// The plane layout of `count` buffers of a `width`×`height` yuv420p picture: rows
    /// aligned to 64 bytes, and 256 bytes after the last plane (SIMD readers read past it).
    package static func layout(width: Int, height: Int, count: Int) -> BroadcastMessage.Welcome {
        func align(_ n: Int) -> Int { (n + 63) & ~63 }
        let strideY = align(width), strideC = align(width / 2)
        let sizeY = strideY * height, sizeC = strideC * (height / 2)
        return BroadcastMessage.Welcome(count: count, size: sizeY + 2 * sizeC + 256, strides: [strideY, strideC, strideC],
                                        offsets: [0, sizeY, sizeY + sizeC])
    }

    private init(layout: BroadcastMessage.Welcome, fds: [Int32], mappings: [UnsafeMutableRawPointer]) {
        (self.layout, self.fds, self.mappings) = (layout, fds, mappings)
    }

    deinit {
        for m in mappings { munmap(m, layout.size) }
        for fd in fds { close(fd) }
    }

    /// Buffer `index`'s bytes (`layout.size` of them).
    package func base(_ index: Int) -> UnsafeMutableRawPointer? {
        mappings.indices.contains(index) ? mappings[index] : nil
    }

    /// The host's ring: `layout.count` memfds of `layout.size` bytes, sealed against growing
    /// and shrinking (a sender shrinking one under the host's mapping would make the host's
    /// reads fault), mapped read-only.
    package static func allocate(_ layout: BroadcastMessage.Welcome) throws(BroadcastProtocolError) -> SharedPictureRing {
        var fds: [Int32] = [], maps: [UnsafeMutableRawPointer] = []
        func undo() {
            for m in maps { munmap(m, layout.size) }
            for fd in fds { close(fd) }
        }
        for i in 0..<layout.count {
            let fd = srb_memfd_create("swift-record-broadcast-\(i)")
            guard fd >= 0 else { undo(); throw BroadcastProtocolError("memfd_create: \(String(cString: strerror(errno)))") }
            fds.append(fd)
            guard ftruncate(fd, off_t(layout.size)) == 0, srb_seal(fd) == 0 else {
                let e = errno
                undo()
                throw BroadcastProtocolError("sizing and sealing a \(layout.size)-byte picture buffer: \(String(cString: strerror(e)))")
            }
            guard let m = mmap(nil, layout.size, PROT_READ, MAP_SHARED, fd, 0), m != MAP_FAILED else {
                let e = errno
                undo()
                throw BroadcastProtocolError("mapping a picture buffer: \(String(cString: strerror(e)))")
            }
            maps.append(m)
        }
        return SharedPictureRing(layout: layout, fds: fds, mappings: maps)
    }

    /// The sender's side: the host's descriptors checked (each a memfd of exactly
    /// `layout.size` bytes, sealed against growing, shrinking and new seals) and mapped for
    /// writing. Takes the descriptors: they are closed on every path that throws.
    package static func map(_ layout: BroadcastMessage.Welcome, fds received: [Int32]) throws(BroadcastProtocolError) -> SharedPictureRing {
        var maps: [UnsafeMutableRawPointer] = []
        func undo() {
            for m in maps { munmap(m, layout.size) }
            for fd in received { close(fd) }
        }
        guard received.count == layout.count else {
            undo()
            throw BroadcastProtocolError("the host sent \(received.count) descriptors for a ring of \(layout.count) buffers")
        }
        for fd in received {
            let check = srb_check_sealed(fd, UInt64(layout.size))
            guard check == 0 else {
                undo()
                let what = [-1: "not a regular file", -2: "not a memfd (no seals)", -3: "not sealed against growing, shrinking and new seals",
                            -4: "not \(layout.size) bytes"][Int(check)] ?? "unusable"
                throw BroadcastProtocolError("a picture buffer from the host is \(what); refusing to map it")
            }
            guard let m = mmap(nil, layout.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), m != MAP_FAILED else {
                let e = errno
                undo()
                throw BroadcastProtocolError("mapping a picture buffer: \(String(cString: strerror(e)))")
            }
            maps.append(m)
        }
        return SharedPictureRing(layout: layout, fds: received, mappings: maps)
    }
}

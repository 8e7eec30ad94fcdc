import DequeModule
#if canImport(Glibc)
import Glibc
#endif

/// Bytes kept first in, first out, in memory-mapped chunks of their own: appended at the
/// end, given back to the system a whole chunk at a time from the front. A replay buffer's
/// packets live here rather than in the allocator's heap, where buffers kept for half a
/// minute among short-lived pictures would pin freed memory (fragmentation), so that what
/// the buffer holds is what the process's memory grows by. Not `Sendable`: one owner.
final class PacketBytes {
    private struct Chunk {
        let serial: Int
        let base: UnsafeMutableRawPointer
        let size: Int
    }

    private var chunks: Deque<Chunk> = []
    private var used = 0
    private var nextSerial = 0
    private let chunkSize: Int
    /// Bytes mapped now: what the store costs in memory, at most.
    private(set) var mapped = 0

    /// `chunkSize` is rounded up to whole pages.
    init(chunkSize: Int) {
        let page = max(4096, Int(sysconf(Int32(_SC_PAGESIZE))))
        self.chunkSize = max(page, (chunkSize + page - 1) / page * page)
    }

    deinit {
        for c in chunks { munmap(c.base, c.size) }
    }

    /// Copies `bytes` in; returns where they are and the chunk's serial (for
    /// `release(before:)`), or nil when the system gives no memory.
    func store(_ bytes: UnsafeRawBufferPointer) -> (pointer: UnsafeMutableRawPointer, serial: Int)? {
        let count = bytes.count
        if let last = chunks.last, last.size - used >= count {
            let p = last.base + used
            if let source = bytes.baseAddress, count > 0 { p.copyMemory(from: source, byteCount: count) }
            used += count
            return (p, last.serial)
        }
        let size = max(chunkSize, (count + chunkSize - 1) / chunkSize * chunkSize)
        let base = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let base, base != MAP_FAILED else { return nil }
        chunks.append(Chunk(serial: nextSerial, base: base, size: size))
        nextSerial += 1
        mapped += size
        if let source = bytes.baseAddress, count > 0 { base.copyMemory(from: source, byteCount: count) }
        used = count
        return (base, nextSerial - 1)
    }

    /// Gives back every chunk older than `serial`: nothing stored in them is needed any more.
    func release(before serial: Int) {
        var n = 0
        while n < chunks.count, chunks[n].serial < serial {
            munmap(chunks[n].base, chunks[n].size)
            mapped -= chunks[n].size
            n += 1
        }
        chunks.removeFirst(n)
        if chunks.isEmpty { used = 0 }
    }

    /// Gives back everything.
    func releaseAll() { release(before: Int.max) }
}

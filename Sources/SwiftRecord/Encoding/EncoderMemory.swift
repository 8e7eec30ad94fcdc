internal import CFFmpeg

/// How encoders' memory is backed, for the whole process.
///
/// libx264 asks the kernel for transparent huge pages (2 MiB) for its picture buffers
/// (`madvise(MADV_HUGEPAGE)`, about 250 MiB at 1080p). The first touch of each such page
/// zeroes all of it. On a virtual machine that first touch also has the hypervisor back
/// fresh memory, and it costs more: on the 2-core VM the benchmarks run on, about 0.8 s of
/// CPU in the first second of every 1080p recording (about 14 % of a 10-s recording of a
/// still screen), and full-screen motion measured no faster with them (bench/results/README.md).
/// With regular pages only the pages used are touched, and the peak RSS is about 17 MiB lower.
///
/// The setting belongs to the process, not to a writer, so the library never changes it
/// by itself; the `swift-record` command calls ``preferRegularPages()`` as it starts.
package enum EncoderMemory {
    /// Backs this process's memory, and that of the processes it starts, with regular
    /// pages only (`prctl(PR_SET_THP_DISABLE)`). Call it before the first writer starts:
    /// memory already mapped keeps the pages it has.
    ///
    /// - Returns: `false` where the kernel does not offer the setting (Linux before 3.15,
    ///   or a sandbox that forbids it); nothing else changes then.
    @discardableResult
    package static func preferRegularPages() -> Bool {
        sr_disable_transparent_huge_pages() == 0
    }

    /// Whether this process's memory is backed by regular pages only.
    package static var usesRegularPagesOnly: Bool {
        sr_transparent_huge_pages_disabled() == 1
    }
}

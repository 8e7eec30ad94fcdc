internal import CX11
import SwiftRecord
#if canImport(Glibc)
import Glibc
#endif

/// A System V shared-memory segment mapped into this process: the only owner of the
/// mapping, detached (`shmdt`) exactly once, in `deinit`.
///
/// The segment is marked for removal (`IPC_RMID`) right after it is attached, so the
/// kernel frees it once the last process detaches, however this process ends (a crash,
/// SIGKILL): nothing is ever left behind in `ipcs`. Linux still lets the X server attach
/// a segment marked that way.
///
/// `@unchecked Sendable` because the compiler cannot see it through the raw pointer: every
/// field is a constant set in `init`, and the mapping is only undone in `deinit`, so any
/// thread may hold it (a pixel buffer's release, on whichever thread lets go last, keeps
/// it mapped). What is written into the memory is the pixel buffers' business.
final class SharedMemorySegment: @unchecked Sendable {
    let id: Int32
    let address: UnsafeMutableRawPointer
    let size: Int

    init(size: Int) throws(SwiftRecordError) {
        let id = shmget(sr_ipc_private(), size, IPC_CREAT | 0o600)
        guard id >= 0 else {
            throw SwiftRecordError(.io, operation: "shmget", message: "cannot create a \(size)-byte shared-memory segment: \(String(cString: strerror(errno)))")
        }
        let p = shmat(id, nil, 0)
        guard let p, p != UnsafeMutableRawPointer(bitPattern: -1) else {
            let reason = String(cString: strerror(errno))
            shmctl(id, IPC_RMID, nil)
            throw SwiftRecordError(.io, operation: "shmat", message: "cannot attach a shared-memory segment: \(reason)")
        }
        shmctl(id, IPC_RMID, nil)
        self.id = id
        self.address = p
        self.size = size
    }

    deinit {
        shmdt(address)
    }
}

/// An `XImage` over a shared-memory segment the X server writes into (MIT-SHM):
/// `XShmGetImage` costs the server one copy and the client none.
///
/// Owns the `XImage` and the server's attachment; both are released exactly once in
/// `destroy()` (or `deinit`). The segment itself may live longer: pixel buffers
/// wrapping it keep it mapped until the encoder has let go of them.
///
/// Not `Sendable`: it belongs to one source's grabber, like the connection it uses.
final class SharedMemoryImage {
    let connection: X11Connection
    let segment: SharedMemorySegment
    let width: Int
    let height: Int
    let bytesPerRow: Int
    private var image: UnsafeMutablePointer<XImage>?
    private let info: UnsafeMutablePointer<XShmSegmentInfo>
    private var attached = false

    /// Creates the image and attaches the segment on the server. Throws when the server
    /// cannot attach it (a remote display, another IPC namespace): use `XGetImage` then.
    init(connection: X11Connection, visual: UnsafeMutablePointer<Visual>, depth: Int32, width: Int, height: Int) throws(SwiftRecordError) {
        guard let display = connection.display else { throw connection.lostError }
        info = .allocate(capacity: 1)
        info.initialize(to: XShmSegmentInfo())
        guard let image = XShmCreateImage(display, visual, UInt32(depth), ZPixmap, nil, info, UInt32(width), UInt32(height)) else {
            info.deallocate()
            throw SwiftRecordError(.unsupported, operation: "XShmCreateImage", message: "cannot create a \(width)x\(height) shared-memory image")
        }
        let bytesPerRow = Int(image.pointee.bytes_per_line)
        let segment: SharedMemorySegment
        do {
            segment = try SharedMemorySegment(size: bytesPerRow * height)
        } catch {
            image.pointee.obdata = nil
            sr_x_destroy_image(image)
            info.deallocate()
            throw error
        }
        self.connection = connection
        self.segment = segment
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.image = image
        info.pointee.shmid = segment.id
        info.pointee.shmaddr = segment.address.assumingMemoryBound(to: CChar.self)
        info.pointee.readOnly = 0
        image.pointee.data = info.pointee.shmaddr
        _ = connection.takeError()
        let ok = XShmAttach(display, info)
        attached = ok != 0
        // The attach is asynchronous: sync so a refusal (BadAccess on a remote server) shows now.
        connection.sync()
        if let e = connection.takeError() {
            attached = false
            destroy()
            throw SwiftRecordError(.unsupported, operation: "XShmAttach", message: "the X server cannot use our shared memory: \(connection.describe(e))")
        }
        if !attached || connection.isLost {
            destroy()
            throw connection.isLost ? connection.lostError
                : SwiftRecordError(.unsupported, operation: "XShmAttach", message: "the X server refused the shared-memory segment")
        }
    }

    deinit { destroy() }

    /// Fills the image with the root window's pixels at (x, y): the whole image, or only a
    /// `width`×`height` rectangle, which the server then packs from the segment's start in
    /// rows of `bytesPerRow(forWidth:)` bytes. False on failure; the caller asks the
    /// connection why (a protocol error, or the server gone).
    func grab(root: UInt, x: Int, y: Int, width w: Int? = nil, height h: Int? = nil) -> Bool {
        guard let image, attached, let display = connection.display, !connection.isLost else { return false }
        let (gw, gh) = (w ?? width, h ?? height)
        guard gw > 0, gh > 0, gw <= width, gh <= height else { return false }
        let saved = (image.pointee.width, image.pointee.height, image.pointee.bytes_per_line)
        image.pointee.width = Int32(gw)
        image.pointee.height = Int32(gh)
        image.pointee.bytes_per_line = Int32(bytesPerRow(forWidth: gw))
        defer { (image.pointee.width, image.pointee.height, image.pointee.bytes_per_line) = saved }
        return XShmGetImage(display, root, image, Int32(x), Int32(y), sr_all_planes()) != 0
    }

    /// The row length the server uses for an image `width` pixels wide (rows padded to the
    /// image's scanline pad).
    func bytesPerRow(forWidth width: Int) -> Int {
        guard let image else { return 0 }
        let bits = width * Int(image.pointee.bits_per_pixel), pad = max(8, Int(image.pointee.bitmap_pad))
        return (bits + pad - 1) / pad * (pad / 8)
    }

    /// Detaches from the server and frees the image. Safe to call more than once; the
    /// segment stays mapped while pixel buffers still use it.
    func destroy() {
        if attached, let display = connection.display, !connection.isLost {
            XShmDetach(display, info)
            XSync(display, 0)
        }
        attached = false
        if let image {
            image.pointee.data = nil
            image.pointee.obdata = nil
            sr_x_destroy_image(image)
            self.image = nil
            info.deallocate()
        }
    }
}

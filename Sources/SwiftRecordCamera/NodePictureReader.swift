internal import CPipeWire
import Foundation
import Logging
import SwiftRecord

/// The pictures of one PipeWire video node, read through `PipeWireStream` and delivered as
/// yuv420p pictures of one size: what `CameraSource` and `PipeWireNodeSource` share.
///
/// Each new picture is converted once (YUY2, NV12, I420 and 4-byte RGB by libswscale; MJPG
/// decoded by libavcodec first) into a buffer from the pool; until another comes the same
/// picture is returned marked unchanged, so a slow producer never holds up the session. The
/// stream's lock is held only to borrow the newest buffer: the conversion or decode runs with
/// it released, so PipeWire's process callback never waits behind one.
final class NodePictureReader: @unchecked Sendable {
    // `@unchecked`: `stream` and `delivered` are `Locked`; the rest is immutable.

    /// How a loss of the node (unplugged, its producer gone) is taken.
    enum OnLoss {
        /// The last picture stays (said once on the log): a camera beside or over a screen.
        case keepLastPicture
        /// The next picture throws: the recording ends, its file finished, and says why.
        case end
    }

    private struct Delivered {
        var picture: PixelBuffer?
        var index = 0
        var scaler: (key: ScalerKey, context: ScaleContext)?
        /// An MJPG producer's decoder, made with its first picture.
        var jpeg: JPEGPictureDecoder?
        /// Pictures the producer sent that could not be read (a damaged JPEG), skipped.
        var unreadable = 0
        var statistics = GrabStatistics()
        var lossAnnounced = false
    }
    private struct ScalerKey: Equatable { var size: VideoSize, format: StreamPixelFormat }

    /// What the messages call the node ("the camera", "PipeWire node gst-src").
    let what: String
    let onLoss: OnLoss
    /// The errors' operation (`camera`, `pipewire`).
    let operation: String
    /// The pictures' size.
    let size: VideoSize
    let frames: StreamFrames
    private let stream: Locked<PipeWireStream?>
    private let delivered = Locked(Delivered())
    private let clock: any HostClock

    init(stream: sending PipeWireStream, size: VideoSize, what: String, operation: String, onLoss: OnLoss, clock: any HostClock) {
        (self.size, self.what, self.operation, self.onLoss, self.clock) = (size, what, operation, onLoss, clock)
        frames = stream.frames
        self.stream = Locked(stream)
    }

    /// Connects to `node` with `offer` and waits until the producer agreed on a format (a
    /// failure, a stop or the deadline give up, the stream stopped): the stream and the format.
    static func connect(node: UInt32, offer: StreamOffer, timeout: Duration,
                        stop: WakeUp?) throws(SwiftRecordError) -> sending (PipeWireStream, Result<StreamFormat, SwiftRecordError>?) {
        let stream = try PipeWireStream(node: node, offer: offer)
        let deadline = MonotonicClock.deadline(after: timeout)
        let agreed = stream.frames.waitForFormat(untilNanoseconds: deadline, stop: stop)
        if case .success = agreed {} else { stream.stop() }
        return (stream, agreed)
    }

    var statistics: GrabStatistics { delivered[\.statistics] }
    var unreadablePictures: Int { delivered[\.unreadable] }
    var picturesReceived: Int { frames.state[\.received] }

    /// Why the node stopped sending (unplugged, removed, its stream paused), once it has.
    var lost: String? {
        frames.state.withLock { s in s.failure ?? (s.pausedAfterStreaming ? "its stream paused" : nil) }
    }

    /// Before the first picture, waits for one as long as it takes (a stop, the stream's
    /// failure or end wakes it): the caller bounds the wait (the session's start-up bound, a
    /// track's or overlay's own thread, which never hold up the screen; a
    /// `MediaCaptureSession` without a movie file stops the source on `stop()`).
    func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        while true {
            if delivered[\.picture] == nil {
                _ = frames.state.wait { s in s.heldIsNew || s.failure != nil || s.stopping ? true : nil }
            }
            if let delivered = try deliver(from: pool) { return delivered }
        }
    }

    /// Ends the stream. Safe to call more than once.
    func stop() {
        frames.state.withLockNotifying { $0.stopping = true }
        stream.withLock { $0?.stop(); $0 = nil }
    }

    /// What `deliver` takes from the stream under its lock: news, and the newest buffer lent.
    private struct Look {
        var stopping = false
        var held: HeldBuffer?
        var format: StreamFormat?
        var failure: String?
        var lost: String?
        var whileBorrowed: (@Sendable () -> Void)?
    }

    /// The newest picture, or the last again (nil inside: stopping); nil while there is
    /// none yet (the first could not be read). The stream's lock is held only to look and to
    /// borrow the newest buffer: the conversion or JPEG decode runs with it released, so
    /// PipeWire's process callback never waits behind one.
    private func deliver(from pool: PixelBufferPool) throws(SwiftRecordError) -> CapturedFrame?? {
        let now = clock.now()
        let (frame, announcement) = try delivered.withLock { (d: inout sending Delivered) throws(SwiftRecordError) -> (CapturedFrame??, String?) in
            let look = frames.state.withLock { s -> Look in
                if s.stopping { return Look(stopping: true) }
                var look = Look(failure: s.failure, lost: s.failure ?? (s.pausedAfterStreaming ? "its stream paused: \(what) went away or stopped sending" : nil))
                if s.heldIsNew, let format = s.format, let held = s.borrowHeld() {
                    (look.held, look.format, look.whileBorrowed) = (held, format, s.whileBorrowed)
                }
                return look
            }
            if look.stopping { return (.some(nil), nil) }
            if onLoss == .end, let failure = look.failure {
                throw SwiftRecordError(.io, operation: operation, message: "\(what) stopped sending: \(failure)")
            }
            d.statistics.pictures += 1
            d.statistics.picturePixels = size.width * size.height
            var announcement: String?
            if !d.lossAnnounced, let why = look.lost {
                d.lossAnnounced = true
                announcement = "\(what) stopped (\(why)): its last picture stays"
            }
            if let held = look.held, let format = look.format {
                defer { frames.endBorrow() }
                look.whileBorrowed?()
                let picture = try pool.makePixelBuffer()
                if try convert(held.pointer, format: format, into: picture, delivered: &d) {
                    d.picture = picture
                    d.index += 1
                    d.statistics.fullGrabs += 1
                    d.statistics.grabbedPixels += d.statistics.picturePixels
                    return (CapturedFrame(pixelBuffer: picture, captureTime: now, index: d.index), announcement)
                }
            }
            guard let picture = d.picture else {
                if let failure = look.failure { throw SwiftRecordError(.io, operation: operation, message: "\(what) sent no picture: \(failure)") }
                return (nil, nil)
            }
            d.index += 1
            d.statistics.unchanged += 1
            return (CapturedFrame(pixelBuffer: picture, captureTime: now, index: d.index, isUnchanged: true), announcement)
        }
        if let announcement { Log.capture.warning("\(announcement)") }
        return frame
    }

    /// Converts the held buffer's picture (YUY2, NV12, I420 or 4-byte RGB, any size; or an
    /// MJPG picture, decoded) into `picture` (yuv420p, `size`). False when the buffer holds too
    /// little for the format, or a JPEG that does not decode (counted, skipped).
    private func convert(_ held: UnsafeMutablePointer<pw_buffer>, format: StreamFormat, into picture: PixelBuffer,
                         delivered d: inout Delivered) throws(SwiftRecordError) -> Bool {
        guard let buffer = held.pointee.buffer, let data = buffer.pointee.datas, let base = data.pointee.data,
              let chunk = data.pointee.chunk, format.width > 0, format.height > 0 else { return false }
        let maxSize = Int(data.pointee.maxsize)
        let offset = Int(chunk.pointee.offset) % max(maxSize, 1)
        if format.pixelFormat == .mjpg {
            // One JPEG per buffer, `chunk.size` bytes of it.
            let size = min(Int(chunk.pointee.size), maxSize - offset)
            if d.jpeg == nil { d.jpeg = try JPEGPictureDecoder() }
            guard let jpeg = d.jpeg, size > 0,
                  try jpeg.decode(UnsafeRawBufferPointer(start: base + offset, count: size), into: picture) else {
                d.unreadable += 1
                return false
            }
            return true
        }
        let (w, h) = (format.width, format.height)
        let stride = chunk.pointee.stride > 0 ? Int(chunk.pointee.stride) : (format.pixelFormat.isRGB ? w * 4 : format.pixelFormat == .yuy2 ? w * 2 : w)
        let source = base.assumingMemoryBound(to: UInt8.self) + offset
        var planes: [UnsafePointer<UInt8>?] = [UnsafePointer(source), nil, nil, nil]
        var strides: [Int32] = [Int32(stride), 0, 0, 0]
        let needed: Int
        switch format.pixelFormat {
        case .yuy2:
            guard stride >= w * 2 else { return false }
            needed = stride * h
        case .nv12:
            guard stride >= w else { return false }
            planes[1] = UnsafePointer(source + stride * h)
            strides[1] = Int32(stride)
            needed = stride * h + stride * ((h + 1) / 2)
        case .i420:
            guard stride >= w else { return false }
            let chroma = (stride + 1) / 2, chromaRows = (h + 1) / 2
            planes[1] = UnsafePointer(source + stride * h)
            planes[2] = UnsafePointer(source + stride * h + chroma * chromaRows)
            (strides[1], strides[2]) = (Int32(chroma), Int32(chroma))
            needed = stride * h + 2 * chroma * chromaRows
        case .bgrx, .bgra, .rgbx, .rgba:
            guard stride >= w * 4 else { return false }
            needed = stride * h
        case .mjpg:
            return false
        }
        guard maxSize - offset >= needed else { return false }
        let key = ScalerKey(size: VideoSize(width: w, height: h), format: format.pixelFormat)
        if d.scaler?.key != key {
            d.scaler = nil
            d.scaler = (key, try ScaleContext(from: key.size, format.pixelFormat.pixelFormat, to: size, .yuv420p))
        }
        guard let context = d.scaler?.context else { return false }
        return try picture.withWriteAccess { out throws(SwiftRecordError) -> Bool in
            var destination: [UnsafeMutablePointer<UInt8>?] = out.map { $0.baseAddress.assumingMemoryBound(to: UInt8.self) } + [nil]
            var destinationStrides: [Int32] = out.map { Int32($0.bytesPerRow) } + [0]
            try context.scale(&planes, &strides, height: h, into: &destination, &destinationStrides)
            return true
        }
    }
}

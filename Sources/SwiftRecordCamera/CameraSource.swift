internal import CPipeWire
@_exported import SwiftRecordPipeWire  // `PipeWireNode` is part of this module's API (`CameraSource.node`, `cameras()`)
import Foundation
import Logging
import SwiftRecord

/// A camera as a live capture source: a PipeWire `Video/Source` node (what desktops reach
/// cameras through, and what the Camera portal hands over), read as a PipeWire video stream
/// in YUY2, NV12 or I420 (converted by libswscale) or MJPG (each picture decoded by
/// libavcodec's MJPEG decoder), and delivered as yuv420p pictures of the camera's size.
///
/// The camera sends pictures at its own rate; each `nextFrame(from:)` converts the newest
/// one (libswscale) into a buffer from the pool, once, and returns the same picture marked
/// unchanged until another comes: a 15 fps camera in a 30 fps recording repeats each picture,
/// never holding up the session. A camera that renegotiates its size mid-stream keeps the
/// recording's size: its pictures are scaled to it. A camera unplugged (its node removed)
/// ends nothing: the last picture stays, `lost` says why, and the loss is announced once.
///
/// In a module of its own, which needs libpipewire and not sd-bus; its stream is
/// SwiftRecordPipeWire's `PipeWireStream`, which reads screen casts too. The V4L2 camera and
/// the JPEG decoder are in SwiftRecord's Cameras/ folder (FFmpeg and the kernel's headers only).
///
/// The stream's lock is held only to borrow the newest buffer: the conversion or decode of a
/// picture runs with it released, so PipeWire's process callback never waits behind one.
public final class CameraSource: CaptureSource {
    public static let name = "camera"
    /// The `media.class` of camera nodes.
    public static let mediaClass = "Video/Source"

    /// Which camera, and the mode asked of it.
    public struct Configuration: CaptureSourceConfiguration {
        public static let sourceName = CameraSource.name
        /// The node's id, `object.serial`, `node.name` or description; nil: the first camera.
        public var camera: String?
        /// The size asked for; the camera's nearest mode is taken (and announced). Nil: 1280x720.
        public var size: VideoSize?
        /// The frame rate asked for; nil: 30.
        public var frameRate: Int?
        /// The size the pictures are delivered at, scaled in the one conversion each picture
        /// gets (an overlay's rectangle, so it is not scaled a second time); nil: the mode's.
        public var deliveredSize: VideoSize?
        /// How long finding the camera and agreeing on a format may take.
        public var startTimeout: Duration
        /// Interrupted, it gives up the start at once (the command line's Ctrl-C).
        package var startStop: WakeUp?

        public init(camera: String? = nil, size: VideoSize? = nil, frameRate: Int? = nil, startTimeout: Duration = .seconds(10)) {
            self.camera = camera
            self.size = size
            self.frameRate = frameRate
            self.startTimeout = startTimeout
        }
    }

    public let identifier = CameraSource.name
    /// The pictures' size: `deliveredSize`, or the camera's mode.
    public let nativeSize: VideoSize
    /// The mode the camera agreed on.
    public let modeSize: VideoSize
    public let pixelFormat = PixelFormat.yuv420p
    public let nativeFrameRate: Rational?
    public let isLive = true
    public let configuration: Configuration
    /// The camera read.
    public let node: PipeWireNode
    /// The pixel layout the camera sends (`YUY2`, `NV12`, `I420`, `MJPG`).
    public let cameraFormat: String

    private struct Delivered {
        var picture: PixelBuffer?
        var index = 0
        var scaler: (key: ScalerKey, context: ScaleContext)?
        /// An MJPG camera's decoder, made with its first picture.
        var jpeg: JPEGPictureDecoder?
        /// Pictures the camera sent that could not be read (a damaged JPEG), skipped.
        var unreadable = 0
        var statistics = GrabStatistics()
        var lossAnnounced = false
    }
    private struct ScalerKey: Equatable { var size: VideoSize, format: StreamPixelFormat }

    private let stream: Locked<PipeWireStream?>
    /// The stream's pictures (internal: tests reach the borrow's hook through it).
    let frames: StreamFrames
    private let delivered = Locked(Delivered())
    private let clock: any HostClock

    /// The cameras PipeWire knows now.
    public static func cameras(timeout: Duration = .seconds(5)) throws(SwiftRecordError) -> [PipeWireNode] {
        try PipeWireRegistry.nodes(mediaClass: mediaClass, timeout: timeout)
    }

    /// Finds the camera, connects to it and waits until it agreed on a format, so every
    /// mistake (no PipeWire, no such camera) shows before recording starts.
    public init(configuration: Configuration = Configuration(), clock: any HostClock = MonotonicClock()) throws(SwiftRecordError) {
        self.configuration = configuration
        self.clock = clock
        let cameras = try CameraSource.cameras(timeout: configuration.startTimeout)
        let chosen = configuration.camera.map { name in cameras.first { $0.matches(name) } } ?? cameras.first
        guard let node = chosen else {
            let list = (cameras.isEmpty ? "PipeWire has no camera (no Video/Source node)"
                : "the cameras are: " + cameras.map { "\($0.name ?? String($0.id)) (\($0.description ?? "no description"), serial \($0.serial ?? "?"))" }.joined(separator: "; "))
                + "; " + V4L2Device.available()
            throw SwiftRecordError(.invalidArgument, operation: "camera",
                                   message: configuration.camera.map { "no camera '\($0)': \(list)" } ?? "no camera to record: \(list)")
        }
        self.node = node
        let asked = configuration.size ?? VideoSize(width: 1280, height: 720)
        let stream = try PipeWireStream(node: node.id, offer: .camera(width: asked.width, height: asked.height, fps: configuration.frameRate ?? 30))
        let (seconds, attoseconds) = configuration.startTimeout.components
        let deadline = MonotonicClock.nanoseconds() + seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        let agreed = stream.frames.waitForFormat(untilNanoseconds: deadline, stop: configuration.startStop)
        guard let agreed, case .success(let format) = agreed, !format.pixelFormat.isRGB else {
            stream.stop()
            if case .failure(let error) = agreed {
                throw error.kind == .cancelled ? error : SwiftRecordError(.io, operation: "camera",
                    message: "camera '\(node.name ?? String(node.id))': \(error.message); swift-record reads YUY2, NV12, I420 and MJPG cameras; nothing was recorded")
            }
            throw SwiftRecordError(.io, operation: "camera",
                                   message: "camera '\(node.name ?? String(node.id))' agreed on no picture format within \(seconds) s (swift-record reads YUY2, NV12, I420 and MJPG); nothing was recorded")
        }
        modeSize = VideoSize(width: format.width & ~1, height: format.height & ~1)
        nativeSize = configuration.deliveredSize.map { VideoSize(width: max(2, $0.width & ~1), height: max(2, $0.height & ~1)) } ?? modeSize
        nativeFrameRate = format.frameRate
        cameraFormat = "\(format.pixelFormat)".uppercased()
        frames = stream.frames
        self.stream = Locked(stream)
    }

    /// Adds `camera` to `registry` (the command line does this at start-up).
    public static func register(in registry: CaptureSourceRegistry = .shared) {
        registry.register(name: CameraSource.name, summary: "a camera: a PipeWire Video/Source node (YUY2, NV12, I420, MJPG) or a V4L2 device (/dev/videoN)") {
            try CameraSource.open(configuration: $0.configuration(Configuration.self) ?? Configuration(), clock: $0.clock)
        }
    }

    /// The camera `configuration` names: a V4L2 device when it is a path (`/dev/video0`),
    /// else a PipeWire camera; with no name, PipeWire's first camera, or when PipeWire has
    /// none (or is not running) the first V4L2 device.
    public static func open(configuration: Configuration, clock: any HostClock = MonotonicClock()) throws(SwiftRecordError) -> any CaptureSource {
        if let name = configuration.camera, name.hasPrefix("/") {
            return try V4L2CameraSource(path: name, size: configuration.size, frameRate: configuration.frameRate,
                                        deliveredSize: configuration.deliveredSize, clock: clock)
        }
        do {
            return try CameraSource(configuration: configuration, clock: clock)
        } catch {
            guard configuration.camera == nil, error.kind != .cancelled else { throw error }
            guard let first = V4L2Device.all().first else {
                if error.message.contains("V4L2") { throw error }
                throw SwiftRecordError(error.kind, operation: error.operation, message: error.message + "; " + V4L2Device.available())
            }
            Log.capture.info("no PipeWire camera (\(error.message)); recording the V4L2 camera \(first.path)")
            return try V4L2CameraSource(path: first.path, size: configuration.size, frameRate: configuration.frameRate,
                                        deliveredSize: configuration.deliveredSize, clock: clock)
        }
    }

    public var captureDescription: String? {
        "camera \(node.name ?? String(node.id))\(node.description.map { " (\($0))" } ?? "") at \(modeSize)"
            + (nativeFrameRate.map { " \($0) fps" } ?? "") + ", \(cameraFormat)"
    }

    public var notices: [String] {
        guard let asked = configuration.size, asked != modeSize else { return [] }
        return ["the camera's nearest mode to \(asked) is \(modeSize)"]
    }

    /// Pictures converted (`fullGrabs`) and repeated (`unchanged`).
    public var grabStatistics: GrabStatistics? { delivered[\.statistics] }

    /// MJPG pictures that did not decode (damaged), skipped: the picture before stays.
    public var unreadablePictures: Int { delivered[\.unreadable] }

    /// Pictures the camera has sent so far.
    public var picturesReceived: Int { frames.state[\.received] }

    /// Why the camera stopped sending (unplugged, its node removed), once it has.
    public var lost: String? {
        frames.state.withLock { s in s.failure ?? (s.pausedAfterStreaming ? "its stream paused" : nil) }
    }

    public func start() throws {}

    /// Before the first picture, waits for one as long as it takes (a stop, the stream's
    /// failure or end wakes it): the caller bounds the wait (the session's start-up bound, a
    /// track's or overlay's own thread, which never hold up the screen; a
    /// `MediaCaptureSession` without a movie file stops the source on `stop()`).
    public func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        while true {
            if delivered[\.picture] == nil {
                _ = frames.state.wait { s in s.heldIsNew || s.failure != nil || s.stopping ? true : nil }
            }
            if let delivered = try deliver(from: pool) { return delivered }
        }
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
                var look = Look(failure: s.failure, lost: s.failure ?? (s.pausedAfterStreaming ? "its stream paused: the camera went away or stopped sending" : nil))
                if s.heldIsNew, let format = s.format, let held = s.borrowHeld() {
                    (look.held, look.format, look.whileBorrowed) = (held, format, s.whileBorrowed)
                }
                return look
            }
            if look.stopping { return (.some(nil), nil) }
            d.statistics.pictures += 1
            d.statistics.picturePixels = nativeSize.width * nativeSize.height
            var announcement: String?
            if !d.lossAnnounced, let why = look.lost {
                d.lossAnnounced = true
                announcement = "the camera stopped (\(why)): its last picture stays"
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
                if let failure = look.failure { throw SwiftRecordError(.io, operation: "camera", message: "the camera sent no picture: \(failure)") }
                return (nil, nil)
            }
            d.index += 1
            d.statistics.unchanged += 1
            return (CapturedFrame(pixelBuffer: picture, captureTime: now, index: d.index, isUnchanged: true), announcement)
        }
        if let announcement { Log.capture.warning("\(announcement)") }
        return frame
    }

    /// Converts the held buffer's picture (YUY2, NV12 or I420, any size; or an MJPG picture,
    /// decoded) into `picture` (yuv420p, this source's size). False when the buffer holds too
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
        let stride = chunk.pointee.stride > 0 ? Int(chunk.pointee.stride) : (format.pixelFormat == .yuy2 ? w * 2 : w)
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
        default:
            return false
        }
        guard maxSize - offset >= needed else { return false }
        let key = ScalerKey(size: VideoSize(width: w, height: h), format: format.pixelFormat)
        if d.scaler?.key != key {
            d.scaler = nil
            d.scaler = (key, try ScaleContext(from: key.size, format.pixelFormat.pixelFormat, to: nativeSize, .yuv420p))
        }
        guard let context = d.scaler?.context else { return false }
        return try picture.withWriteAccess { out throws(SwiftRecordError) -> Bool in
            var destination: [UnsafeMutablePointer<UInt8>?] = out.map { $0.baseAddress.assumingMemoryBound(to: UInt8.self) } + [nil]
            var destinationStrides: [Int32] = out.map { Int32($0.bytesPerRow) } + [0]
            try context.scale(&planes, &strides, height: h, into: &destination, &destinationStrides)
            return true
        }
    }

    /// Ends the stream. Safe to call more than once.
    public func stop() {
        frames.state.withLockNotifying { $0.stopping = true }
        stream.withLock { $0?.stop(); $0 = nil }
    }
}

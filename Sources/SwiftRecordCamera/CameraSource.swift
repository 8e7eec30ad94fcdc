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
/// SwiftRecordPipeWire's `PipeWireStream`, which reads screen casts too, and its pictures are
/// read by `NodePictureReader`, which `PipeWireNodeSource` (any picture producer) shares. The
/// V4L2 camera and the JPEG decoder are in SwiftRecord's Cameras/ folder (FFmpeg and the
/// kernel's headers only).
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

    /// The camera's pictures, converted (shared with `PipeWireNodeSource`).
    private let reader: NodePictureReader
    /// The stream's pictures (internal: tests reach the borrow's hook through it).
    var frames: StreamFrames { reader.frames }

    /// The cameras PipeWire knows now.
    public static func cameras(timeout: Duration = .seconds(5)) throws(SwiftRecordError) -> [PipeWireNode] {
        try PipeWireRegistry.nodes(mediaClass: mediaClass, timeout: timeout)
    }

    /// Finds the camera, connects to it and waits until it agreed on a format, so every
    /// mistake (no PipeWire, no such camera) shows before recording starts.
    public init(configuration: Configuration = Configuration(), clock: any HostClock = MonotonicClock()) throws(SwiftRecordError) {
        self.configuration = configuration
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
        let offer = StreamOffer.camera(width: asked.width, height: asked.height, fps: configuration.frameRate ?? 30)
        let (stream, agreed) = try NodePictureReader.connect(node: node.id, offer: offer, timeout: configuration.startTimeout, stop: configuration.startStop)
        guard let agreed, case .success(let format) = agreed else {
            if case .failure(let error) = agreed {
                throw error.kind == .cancelled ? error : SwiftRecordError(.io, operation: "camera",
                    message: "camera '\(node.name ?? String(node.id))': \(error.message); swift-record reads YUY2, NV12, I420 and MJPG cameras; nothing was recorded")
            }
            throw SwiftRecordError(.io, operation: "camera",
                                   message: "camera '\(node.name ?? String(node.id))' agreed on no picture format within \(configuration.startTimeout.components.seconds) s (swift-record reads YUY2, NV12, I420 and MJPG); nothing was recorded")
        }
        modeSize = VideoSize(width: format.width & ~1, height: format.height & ~1)
        nativeSize = configuration.deliveredSize.map { VideoSize(width: max(2, $0.width & ~1), height: max(2, $0.height & ~1)) } ?? modeSize
        nativeFrameRate = format.frameRate
        cameraFormat = "\(format.pixelFormat)".uppercased()
        reader = NodePictureReader(stream: stream, size: nativeSize, what: "the camera", operation: "camera", onLoss: .keepLastPicture, clock: clock)
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
    public var grabStatistics: GrabStatistics? { reader.statistics }

    /// MJPG pictures that did not decode (damaged), skipped: the picture before stays.
    public var unreadablePictures: Int { reader.unreadablePictures }

    /// Pictures the camera has sent so far.
    public var picturesReceived: Int { reader.picturesReceived }

    /// Why the camera stopped sending (unplugged, its node removed), once it has.
    public var lost: String? { reader.lost }

    public func start() throws {}

    /// Before the first picture, waits for one as long as it takes (a stop, the stream's
    /// failure or end wakes it): the caller bounds the wait (the session's start-up bound, a
    /// track's or overlay's own thread, which never hold up the screen; a
    /// `MediaCaptureSession` without a movie file stops the source on `stop()`).
    public func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? { try reader.nextFrame(from: pool) }

    /// Ends the stream. Safe to call more than once.
    public func stop() { reader.stop() }
}

import Foundation
import SwiftRecord

/// Any PipeWire picture producer as a live capture source: a `Video/Source` node that is not
/// a camera (a renderer's capture layer such as pw-capture, GStreamer's `pipewiresink`, a
/// virtual camera) or a producer's output stream (`Stream/Output/Video`), named by its
/// `node.name`, description, `object.serial` or id: `--source pipewire:NODE`.
///
/// Read through the camera's reader (`NodePictureReader` over `PipeWireStream`): the same
/// formats plus the 4-byte RGB a renderer sends (BGRx, BGRA, RGBx, RGBA), each new picture
/// converted once to yuv420p at the size first agreed, the last one repeated while none
/// comes. Unlike a camera beside a screen, the node is the recording: when it goes away (its
/// producer quit or was killed) the next picture throws, so the recording ends with its file
/// finished and says why.
public final class PipeWireNodeSource: CaptureSource {
    public static let name = "pipewire"
    /// The `media.class`es of the nodes it reads: producers' nodes and output streams.
    public static let mediaClasses = ["Video/Source", "Stream/Output/Video"]

    /// Which node, and how long it may take to agree on a format.
    public struct Configuration: CaptureSourceConfiguration {
        public static let sourceName = PipeWireNodeSource.name
        /// The node's `node.name`, description, `object.serial` or id.
        public var node: String
        /// The size and rate preferred when the producer offers a choice (nil: 1280x720, 30).
        public var size: VideoSize?
        public var frameRate: Int?
        /// How long finding the node and agreeing on a format may take.
        public var startTimeout: Duration
        /// Interrupted, it gives up the start at once (the command line's Ctrl-C).
        package var startStop: WakeUp?

        public init(node: String, size: VideoSize? = nil, frameRate: Int? = nil, startTimeout: Duration = .seconds(10)) {
            (self.node, self.size, self.frameRate, self.startTimeout) = (node, size, frameRate, startTimeout)
        }
    }

    public let identifier = PipeWireNodeSource.name
    public let nativeSize: VideoSize
    public let pixelFormat = PixelFormat.yuv420p
    public let nativeFrameRate: Rational?
    public let isLive = true
    public let configuration: Configuration
    /// The node read.
    public let node: PipeWireNode
    /// The pixel layout the producer sends (`BGRX`, `I420`, `MJPG`, …).
    public let producerFormat: String
    private let reader: NodePictureReader

    /// The picture producers PipeWire knows now (cameras among them).
    public static func nodes(timeout: Duration = .seconds(5)) throws(SwiftRecordError) -> [PipeWireNode] {
        try PipeWireRegistry.nodes(mediaClass: nil, timeout: timeout).filter { mediaClasses.contains($0.mediaClass ?? "") }
    }

    /// Finds the node, connects to it and waits until it agreed on a format, so every
    /// mistake (no PipeWire, no such node, a format it cannot send) shows before recording.
    public init(configuration: Configuration, clock: any HostClock = MonotonicClock()) throws(SwiftRecordError) {
        self.configuration = configuration
        let name = configuration.node
        let nodes = try PipeWireNodeSource.nodes(timeout: configuration.startTimeout)
        guard !name.isEmpty, let node = nodes.first(where: { $0.matches(name) }) else {
            throw SwiftRecordError(.invalidArgument, operation: "pipewire",
                                   message: "no PipeWire picture node '\(name)': " + PipeWireNodeSource.listing(nodes))
        }
        self.node = node
        let asked = configuration.size ?? VideoSize(width: 1280, height: 720)
        let offer = StreamOffer.producer(width: asked.width, height: asked.height, fps: configuration.frameRate ?? 30)
        let (stream, agreed) = try NodePictureReader.connect(node: node.id, offer: offer, timeout: configuration.startTimeout, stop: configuration.startStop)
        let label = "PipeWire node '\(node.name ?? String(node.id))'"
        guard let agreed, case .success(let format) = agreed else {
            if case .failure(let error) = agreed {
                throw error.kind == .cancelled ? error : SwiftRecordError(.io, operation: "pipewire",
                    message: "\(label): \(error.message); nothing was recorded")
            }
            throw SwiftRecordError(.io, operation: "pipewire",
                                   message: "\(label) agreed on no picture format within \(configuration.startTimeout.components.seconds) s "
                                       + "(swift-record reads YUY2, NV12, I420, BGRx, BGRA, RGBx, RGBA and MJPG); nothing was recorded")
        }
        nativeSize = VideoSize(width: max(2, format.width & ~1), height: max(2, format.height & ~1))
        nativeFrameRate = format.frameRate.flatMap { $0.numerator > 0 && $0.denominator > 0 ? $0 : nil }
        producerFormat = "\(format.pixelFormat)".uppercased()
        reader = NodePictureReader(stream: stream, size: nativeSize, what: label, operation: "pipewire", onLoss: .end, clock: clock)
    }

    /// The nodes there are, for an error: name, description and class of each.
    static func listing(_ nodes: [PipeWireNode]) -> String {
        guard !nodes.isEmpty else { return "PipeWire has no picture producer (no \(mediaClasses.joined(separator: " or ")) node)" }
        return "the picture nodes are: " + nodes.map {
            "\($0.name ?? String($0.id)) (\($0.description ?? "no description"), \($0.mediaClass ?? "?"), serial \($0.serial ?? "?"))"
        }.joined(separator: "; ")
    }

    /// Adds `pipewire` to `registry` (the command line does this at start-up).
    public static func register(in registry: CaptureSourceRegistry = .shared) {
        registry.register(name: PipeWireNodeSource.name, summary: "any PipeWire picture producer: a Video/Source or Stream/Output/Video node by name") {
            guard let configuration = $0.configuration(Configuration.self) else {
                throw SwiftRecordError(.invalidArgument, operation: "pipewire", message: "the pipewire source needs a node: pipewire:NODE")
            }
            return try PipeWireNodeSource(configuration: configuration, clock: $0.clock)
        }
    }

    public var captureDescription: String? {
        "PipeWire node \(node.name ?? String(node.id))\(node.description.map { " (\($0))" } ?? "") at \(nativeSize)"
            + (nativeFrameRate.map { " \($0) fps" } ?? "") + ", \(producerFormat)"
    }

    /// Pictures converted (`fullGrabs`) and repeated (`unchanged`).
    public var grabStatistics: GrabStatistics? { reader.statistics }

    /// Pictures the producer has sent so far.
    public var picturesReceived: Int { reader.picturesReceived }

    public func start() throws {}

    /// The newest picture, or the last again; throws once the node went away.
    public func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? { try reader.nextFrame(from: pool) }

    /// Ends the stream. Safe to call more than once.
    public func stop() { reader.stop() }
}

import Foundation

/// A picture from a capture source with the moment it was captured.
public struct CapturedFrame: Sendable {
    public let pixelBuffer: PixelBuffer
    /// When the picture was taken, on the source's clock (monotonic for live sources;
    /// index / frame rate for file and offline sources).
    public let captureTime: MediaTime
    /// The source's own frame counter.
    public let index: Int
    /// True when the source knows the picture is the one it gave last, unchanged (a
    /// damage-driven screen grab with no damage). A session recording at a content-driven
    /// frame rate writes no frame for it.
    public let isUnchanged: Bool
    /// The parts that changed since the source's last picture, in this picture's pixels (a
    /// damage-driven screen grab knows them); nil when the source does not know.
    public let dirtyRects: [PixelRegion]?

    public init(pixelBuffer: PixelBuffer, captureTime: MediaTime, index: Int, isUnchanged: Bool = false, dirtyRects: [PixelRegion]? = nil) {
        self.pixelBuffer = pixelBuffer
        self.captureTime = captureTime
        self.index = index
        self.isUnchanged = isUnchanged
        self.dirtyRects = isUnchanged ? [] : dirtyRects
    }
}

/// Something that produces pictures: the X11 screen, the synthetic scene, a raw video file.
///
/// Sources are pulled: `nextFrame(from:)` fills a buffer from the pool it is given and
/// stamps it. A live source (`isLive`) shows the moment of the call, so a capture session
/// calls it once per frame tick; an offline source (a file, the unpaced synthetic scene)
/// gives its next frame as fast as it is asked.
///
/// The counterpart of a capture device (`AVCaptureDevice`) or a broadcast extension's
/// sample handler on Apple platforms.
public protocol CaptureSource: AnyObject, Sendable {
    /// The registry name: `synthetic`, `x11`, `yuv`, ….
    var identifier: String { get }
    /// Size of the pictures the source delivers.
    var nativeSize: VideoSize { get }
    /// Pixel format of the pictures the source delivers.
    var pixelFormat: PixelFormat { get }
    /// The source's own frame rate (a Y4M header's), if it has one.
    var nativeFrameRate: Rational? { get }
    /// True when frames show the moment they are taken and must be paced by a clock.
    var isLive: Bool { get }
    /// Acquires what the source needs (a display connection, a file). Errors name the cause.
    func start() throws
    /// The next picture in a buffer from `pool`, or nil at the end of the source.
    func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame?
    /// Releases what `start()` acquired. Safe to call more than once.
    func stop()
    /// What the source records, for a recorder to announce ("region 100,50,640,360 of
    /// display :1 at 640x360"); nil when the source's name says it all.
    var captureDescription: String? { get }
    /// What the user should know about how the pictures differ from what was asked
    /// ("capturing 11,11,322,242 instead of 11,11,321,241: 4:2:0 video needs even sides").
    var notices: [String] { get }
    /// How the source's grabs went (a source that follows the screen's changes); nil for others.
    var grabStatistics: GrabStatistics? { get }
    /// How long after its capture time a picture may still be taken: more than zero for a
    /// source that stamps its pictures with their own times and keeps them queued, in order,
    /// until taken (another process's sender). A live session then closes each tick this
    /// much later, so a capture thread that wakes late takes the waiting pictures onto their
    /// own ticks rather than repeating the one before. Such a source throws `.notReady` from
    /// a grab that found no picture due (asked again, nothing counted). Zero (the default)
    /// for a source whose picture shows the moment of the grab.
    var arrivalAllowance: Duration { get }
}

extension CaptureSource {
    public var captureDescription: String? { nil }
    public var notices: [String] { [] }
    public var grabStatistics: GrabStatistics? { nil }
    public var arrivalAllowance: Duration { .zero }
}

/// Settings that belong to one kind of capture source, declared once by that source as a
/// typed value (`X11Source.Configuration`, `RawVideoFileSource.Configuration`).
public protocol CaptureSourceConfiguration: Sendable {
    /// The registry name of the source these settings are for.
    static var sourceName: String { get }
}

/// What a source is made from: the options every source understands, and the typed
/// settings of particular sources (the command line's `--source` and its options).
public struct CaptureSourceOptions: Sendable {
    /// Requested size, when the source can produce any size (synthetic) or needs to be told (raw files).
    public var size: VideoSize?
    /// Frame rate the session runs at.
    public var frameRate: Rational
    /// Pace an offline source by the clock, as if it were live.
    public var realtime: Bool
    public var clock: any HostClock
    /// Settings by source name; a source made by name takes its own and ignores the rest.
    private var configurations: [String: any CaptureSourceConfiguration] = [:]

    public init(size: VideoSize? = nil, frameRate: Rational = Rational(30)!, realtime: Bool = false,
                clock: any HostClock = MonotonicClock(), configurations: [any CaptureSourceConfiguration] = []) {
        self.size = size
        self.frameRate = frameRate
        self.realtime = realtime
        self.clock = clock
        for c in configurations { configure(c) }
    }

    /// Adds the settings for the source they belong to, replacing earlier ones for it.
    public mutating func configure(_ configuration: some CaptureSourceConfiguration) {
        configurations[type(of: configuration).sourceName] = configuration
    }

    /// The settings given for the source whose configuration type is `C`, if any.
    public func configuration<C: CaptureSourceConfiguration>(_ type: C.Type) -> C? {
        configurations[C.sourceName] as? C
    }
}

/// Chooses capture sources by name. The core registers `synthetic` and `yuv`; other
/// modules (`SwiftRecordX11`) register theirs, and the command line's `--source` looks
/// names up here.
public final class CaptureSourceRegistry: Sendable {
    public typealias Factory = @Sendable (CaptureSourceOptions) throws -> any CaptureSource

    public struct Entry: Sendable {
        public let name: String
        public let summary: String
        let factory: Factory
    }

    /// The process-wide registry.
    public static let shared: CaptureSourceRegistry = {
        let r = CaptureSourceRegistry()
        r.register(name: SyntheticSource.name, summary: "animated test scene with a frame-number band (no display needed)") {
            try SyntheticSource(options: $0)
        }
        r.register(name: RawVideoFileSource.name,
                   summary: "raw video or YUV4MPEG2 file or standard input (RawVideoFileSource.Configuration: path, pixel format)") {
            try RawVideoFileSource(captureOptions: $0)
        }
        return r
    }()

    private let entries = Locked<[String: Entry]>([:])

    public init() {}

    /// Adds or replaces the source called `name`.
    public func register(name: String, summary: String, factory: @escaping Factory) {
        entries.withLock { $0[name] = Entry(name: name, summary: summary, factory: factory) }
    }

    /// Registered names, sorted.
    public var names: [String] { entries.withLock { $0.keys.sorted() } }
    public var all: [Entry] { entries.withLock { entries in entries.values.sorted { $0.name < $1.name } } }

    /// Makes the source called `name`; throws naming the known sources when there is none.
    public func makeSource(named name: String, options: CaptureSourceOptions) throws -> any CaptureSource {
        guard let entry = entries.withLock({ $0[name] }) else {
            throw SwiftRecordError(.invalidArgument, operation: "source",
                                   message: "unknown source '\(name)'; expected one of: \(names.joined(separator: ", "))")
        }
        return try entry.factory(options)
    }
}

/// The synthetic scene as a capture source. Offline by default (frames as fast as they
/// are taken, stamped index / frame rate); with `realtime` it is live, stamped by the clock.
public final class SyntheticSource: CaptureSource {
    public static let name = "synthetic"
    /// Size when none is asked for: 720p, what most screen-sharing pipelines send.
    public static let defaultSize = VideoSize(width: 1280, height: 720)

    public let identifier = SyntheticSource.name
    public let nativeSize: VideoSize
    public let pixelFormat = PixelFormat.yuv420p
    public let nativeFrameRate: Rational? = nil
    public let isLive: Bool
    public let scene: SyntheticScene
    private let frameRate: Rational
    private let clock: any HostClock
    private let flashClock: SyntheticFlashClock
    /// The index of the next frame.
    private let next = Locked(0)

    /// Settings of the synthetic scene as a source.
    public struct Configuration: CaptureSourceConfiguration {
        public static let sourceName = SyntheticSource.name
        /// Shared with a synthetic audio source, whose clicks then fall on the live scene's flashes.
        public var flashClock: SyntheticFlashClock
        public init(flashClock: SyntheticFlashClock) { self.flashClock = flashClock }
    }

    public init(options: CaptureSourceOptions) throws {
        let size = options.size ?? SyntheticSource.defaultSize
        scene = try SyntheticScene(width: size.width, height: size.height)
        nativeSize = size
        isLive = options.realtime
        frameRate = options.frameRate
        clock = options.clock
        flashClock = options.configuration(Configuration.self)?.flashClock ?? SyntheticFlashClock()
    }

    public func start() throws {}
    public func stop() {}

    public func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        let index = next.withLock { n in defer { n += 1 }; return n }
        let buffer = try pool.makePixelBuffer()
        guard isLive else {
            try scene.render(frame: index, into: buffer)
            return CapturedFrame(pixelBuffer: buffer, captureTime: MediaTime(value: Int64(index) * Int64(frameRate.denominator), timescale: frameRate.numerator),
                                 index: index)
        }
        // Live, the flash follows the clock: the frame whose tick (counted from frame 0's
        // capture, as the session's grid is) is a multiple of the flash interval flashes.
        let time = clock.now()
        let zero = flashClock.setFrameZero(time)
        let tick = Int(((time - zero).seconds * Double(frameRate.numerator) / Double(frameRate.denominator)).rounded())
        try scene.render(frame: index, into: buffer, flash: SyntheticScene.flashes(frame: tick))
        return CapturedFrame(pixelBuffer: buffer, captureTime: time, index: index)
    }
}

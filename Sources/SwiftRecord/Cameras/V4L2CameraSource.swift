internal import CV4L2
import Foundation

/// A V4L2 video capture device (`/dev/videoN`) as the kernel describes it: what
/// `--list-cameras` shows for systems without PipeWire.
public struct V4L2Device: Sendable, Hashable {
    /// One pixel format it sends, and the frame sizes it offers in it.
    public struct Format: Sendable, Hashable {
        /// The four-character code (`YUYV`, `MJPG`, `NV12`, …).
        public let fourCC: String
        public let description: String
        /// Discrete sizes, or the largest of a continuous range (`isRange`).
        public let sizes: [VideoSize]
        public let isRange: Bool
    }

    public let path: String
    /// The driver's name for the device (`card`), the driver and where it is attached.
    public let name: String
    public let driver: String
    public let bus: String
    public let formats: [Format]

    /// The V4L2 video capture devices there are now (`/dev/video*` in number order; nodes
    /// that capture no video, such as a camera's metadata node, left out).
    public static func all(directory: String = "/dev") -> [V4L2Device] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let numbered = names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix("video"), let n = Int(name.dropFirst(5)) else { return nil }
            return (n, directory + "/" + name)
        }
        return numbered.sorted { $0.0 < $1.0 }.compactMap { try? V4L2Device(probing: $0.1) }
    }

    /// The device at `path`; throws, saying what is wrong and listing the devices there
    /// are, when there is none, it cannot be opened, or it is no video capture device.
    public init(path: String) throws(SwiftRecordError) {
        do {
            self = try V4L2Device(probing: path)
        } catch {
            throw SwiftRecordError(error.kind, operation: error.operation, message: error.message + "; " + V4L2Device.available())
        }
    }

    /// The device at `path`, or why it is none, without the list of the others: `all()`
    /// probes each node with it (a list that listed the devices for every node that is not
    /// one would call itself again for each).
    private init(probing path: String) throws(SwiftRecordError) {
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            let why = code == ENOENT ? "no such device" : code == EACCES || code == EPERM
                ? "permission denied (cameras usually belong to the video group)" : String(cString: strerror(code))
            throw SwiftRecordError(code == ENOENT ? .invalidArgument : .io, operation: "camera",
                                   message: "no V4L2 camera at \(path) (\(why))")
        }
        defer { close(fd) }
        var device = sr_v4l2_device()
        let r = sr_v4l2_query(fd, &device)
        guard r == 0 else {
            throw SwiftRecordError(.invalidArgument, operation: "camera",
                                   message: "\(path) is not a V4L2 device (\(String(cString: strerror(-r))))")
        }
        guard sr_v4l2_captures_video(device.capabilities) != 0 else {
            throw SwiftRecordError(.invalidArgument, operation: "camera",
                                   message: "\(path) is a V4L2 device that captures no video (a camera's metadata node?)")
        }
        self.path = path
        name = withUnsafeBytes(of: device.card) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        driver = withUnsafeBytes(of: device.driver) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        bus = withUnsafeBytes(of: device.bus) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        var formats: [Format] = []
        var fourCC: UInt32 = 0
        var description = [CChar](repeating: 0, count: 33)
        for index in 0..<64 where sr_v4l2_format(fd, UInt32(index), &fourCC, &description) == 0 {
            var sizes: [VideoSize] = []
            var (width, height, stepwise): (UInt32, UInt32, Int32) = (0, 0, 0)
            var range = false
            for s in 0..<64 where sr_v4l2_frame_size(fd, fourCC, UInt32(s), &width, &height, &stepwise) == 0 {
                sizes.append(VideoSize(width: Int(width), height: Int(height)))
                if stepwise != 0 { range = true; break }
            }
            let code = String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: fourCC >> (8 * $0)) }, as: UTF8.self)
            formats.append(Format(fourCC: code.trimmingCharacters(in: .whitespaces),
                                  description: String(decoding: description.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                                  sizes: sizes, isRange: range))
        }
        self.formats = formats
    }

    /// "the V4L2 cameras are: …" or "there is no V4L2 camera", for error messages.
    package static func available() -> String {
        let devices = all()
        return devices.isEmpty ? "there is no V4L2 camera (no /dev/video* device that captures video)"
            : "the V4L2 cameras are: " + devices.map { "\($0.path) (\($0.name))" }.joined(separator: ", ")
    }

    /// One line for `--list-cameras`: path, name, and each format with its sizes.
    public var listing: String {
        let modes = formats.map { f in
            "\(f.fourCC) " + (f.isRange ? "up to \(f.sizes.last.map { "\($0)" } ?? "?")" : f.sizes.map { "\($0)" }.joined(separator: ","))
        }
        return "camera:\(path)\t\(name)\t\(driver) \(bus)\t" + (modes.isEmpty ? "no formats" : modes.joined(separator: "; "))
    }
}

/// A V4L2 camera (`/dev/videoN`) as a live capture source, for systems without PipeWire:
/// opened through libavdevice's v4l2 input (an ``AssetReader`` on the device; libavdevice is
/// loaded when the first one opens, and a missing one is an error naming it), each picture
/// decoded (raw or MJPG) into yuv420p on a reading thread of its own, the newest one held.
/// Like the PipeWire camera, each `nextFrame(from:)` returns the newest picture, marked
/// unchanged when no newer came (a slower camera repeats, never holding up the session),
/// and a camera that stops (unplugged) leaves its last picture, announced once.
public final class V4L2CameraSource: CaptureSource {
    public let identifier = "camera"
    public let nativeSize: VideoSize
    public let pixelFormat = PixelFormat.yuv420p
    public let nativeFrameRate: Rational?
    public let isLive = true
    public let device: V4L2Device

    private struct State {
        var newest: PixelBuffer?
        var newestIsNew = false
        var lost: String?
        var lossAnnounced = false
        var index = 0
        var stopping = false
        var statistics = GrabStatistics()
    }
    private let state = Locked(State())
    private let reader: AssetReader
    private let output: AssetReaderTrackOutput
    private let clock: any HostClock
    private let readerDone = Locked(false)

    /// Opens the camera at `path`, asking for `size` and `frameRate` (the driver takes its
    /// nearest), its pictures delivered at `deliveredSize` (nil: the mode's), scaled as they
    /// are decoded.
    public init(path: String, size: VideoSize? = nil, frameRate: Int? = nil, deliveredSize: VideoSize? = nil,
                clock: any HostClock = MonotonicClock()) throws(SwiftRecordError) {
        device = try V4L2Device(path: path)
        var options: [String: String] = [:]
        if let size { options["video_size"] = "\(size.width)x\(size.height)" }
        if let frameRate { options["framerate"] = String(frameRate) }
        do {
            reader = try AssetReader(device: path, format: "video4linux2", options: options)
        } catch {
            throw SwiftRecordError(.io, operation: "camera", message: "cannot open the V4L2 camera \(path) (\(device.name)): \(error.message)")
        }
        guard let track = reader.tracks.first(where: { $0.mediaType == .video }) else {
            throw SwiftRecordError(.io, operation: "camera", message: "the V4L2 camera \(path) gave no video track")
        }
        let format = track.formatDescription
        let mode = VideoSize(width: format.dimensions.width & ~1, height: format.dimensions.height & ~1)
        nativeSize = deliveredSize.map { VideoSize(width: max(2, $0.width & ~1), height: max(2, $0.height & ~1)) } ?? mode
        nativeFrameRate = track.nominalFrameRate
        output = AssetReaderTrackOutput(track: track, outputSettings: .video(pixelFormat: .yuv420p, size: nativeSize))
        try reader.add(output)
        self.clock = clock
    }

    public var captureDescription: String? {
        "V4L2 camera \(device.path) (\(device.name)) at \(nativeSize)" + (nativeFrameRate.map { " \($0) fps" } ?? "")
    }

    /// Why the camera stopped sending, once it has.
    public var lost: String? { state[\.lost] }

    public var grabStatistics: GrabStatistics? { state[\.statistics] }

    public func start() throws {
        try reader.startReading()
        let thread = Thread { [state, output, readerDone] in
            while !state[\.stopping] {
                do throws(SwiftRecordError) {
                    guard let sample = try output.copyNextSampleBuffer(), let picture = sample.pixelBuffer else {
                        state.withLockNotifying { $0.lost = $0.lost ?? "the camera's stream ended" }
                        break
                    }
                    state.withLockNotifying { s in
                        s.newest = picture
                        s.newestIsNew = true
                    }
                } catch {
                    state.withLockNotifying { $0.lost = $0.lost ?? error.message }
                    break
                }
            }
            readerDone.withLockNotifying { $0 = true }
        }
        thread.name = "swift-record.v4l2"
        thread.start()
    }

    public func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        _ = state.wait(untilNanoseconds: deadline) { s in s.newest != nil || s.lost != nil || s.stopping ? true : nil }
        let now = clock.now()
        let (frame, announcement) = try state.withLock { (s: inout State) throws(SwiftRecordError) -> (CapturedFrame?, String?) in
            if s.stopping { return (nil, nil) }
            guard let picture = s.newest else {
                throw SwiftRecordError(.io, operation: "camera", message: "the V4L2 camera \(device.path) " + (s.lost.map { "stopped: \($0)" } ?? "sent no picture within 10 s"))
            }
            var announcement: String?
            if let lost = s.lost, !s.lossAnnounced {
                s.lossAnnounced = true
                announcement = "the camera stopped (\(lost)): its last picture stays"
            }
            s.index += 1
            s.statistics.pictures += 1
            let unchanged = !s.newestIsNew
            if unchanged { s.statistics.unchanged += 1 } else { s.statistics.fullGrabs += 1 }
            s.newestIsNew = false
            return (CapturedFrame(pixelBuffer: picture, captureTime: now, index: s.index, isUnchanged: unchanged), announcement)
        }
        if let announcement { Log.capture.warning("\(announcement)") }
        return frame
    }

    public func stop() {
        state.withLockNotifying { $0.stopping = true }
        // The reading thread may be waiting in the driver for a picture that never comes (a
        // v4l2loopback camera whose producer went away: VIDIOC_DQBUF blocks, and libavdevice's
        // v4l2 input checks no interrupt). The cancel does not wait for that read (it holds
        // no lock of the reader's), and stop waits at most 2 s for the thread (which, like a
        // frozen X server's grab, is reclaimed when the driver answers or the process ends).
        reader.cancelReading()
        _ = readerDone.wait(untilNanoseconds: MonotonicClock.nanoseconds() + 2_000_000_000) { $0 ? true : nil }
    }
}

// Capture devices as Apple spells them: a camera is PipeWire's (SwiftRecordWayland's
// `CameraSource`) or a V4L2 device, a microphone a PulseAudio source (SwiftRecordPulse's
// `PulseAudioSource`). Opening one gives SwiftRecord's source; the session records it.
import Foundation
import SwiftRecordPulse
import SwiftRecordCamera

/// A camera or a microphone (`AVCaptureDevice`). Cameras are PipeWire's (`Video/Source`
/// nodes) first, then the V4L2 devices (`/dev/videoN`); microphones are PulseAudio's sources.
public final class AVCaptureDevice: Sendable {
    /// What kind of device (`AVCaptureDevice.DeviceType`). Linux does not say whether a
    /// camera is built in: every camera is `.builtInWideAngleCamera`, and asking for
    /// `.external` finds the same cameras; no device is a dual, triple or TrueDepth camera.
    public struct DeviceType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let builtInWideAngleCamera = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInWideAngleCamera")
        public static let external = DeviceType(rawValue: "AVCaptureDeviceTypeExternal")
        public static let builtInDualCamera = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInDualCamera")
        public static let builtInDualWideCamera = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInDualWideCamera")
        public static let builtInTripleCamera = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInTripleCamera")
        public static let builtInTrueDepthCamera = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInTrueDepthCamera")
        public static let microphone = DeviceType(rawValue: "AVCaptureDeviceTypeMicrophone")
        public static let builtInMicrophone = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInMicrophone")

        /// The media type of the devices this type finds; nil for types no device here has
        /// (a dual camera, a LiDAR camera).
        var mediaType: AVMediaType? {
            switch self {
            case .builtInWideAngleCamera, .external: .video
            case .microphone, .builtInMicrophone: .audio
            default: nil
            }
        }
    }

    /// Where a camera faces (`AVCaptureDevice.Position`). Linux does not know: every device
    /// is `.unspecified`, and a search for any position finds every camera.
    public enum Position: Int, Sendable {
        case unspecified = 0, back = 1, front = 2
    }

    /// Finds the devices of some types (`AVCaptureDevice.DiscoverySession`).
    public typealias DiscoverySession = AVCaptureDeviceDiscoverySession

    enum Kind: Sendable {
        case pipeWireCamera(PipeWireNode)
        case v4l2(V4L2Device)
        case pulse(device: String)
    }

    let kind: Kind
    /// The device's name on the system (`uniqueID`): `pipewire:NAME`, a V4L2 path, or a
    /// PulseAudio source (`@DEFAULT_SOURCE@` for the default microphone).
    public let uniqueID: String
    /// A name to show (`localizedName`).
    public let localizedName: String
    /// The device's type (`deviceType`).
    public let deviceType: DeviceType
    /// Always `.unspecified` (`position`).
    public let position: Position

    init(_ kind: Kind, uniqueID: String, localizedName: String) {
        self.kind = kind
        self.uniqueID = uniqueID
        self.localizedName = localizedName
        if case .pulse = kind { deviceType = .microphone } else { deviceType = .builtInWideAngleCamera }
        position = .unspecified
    }

    /// Whether the device captures `mediaType` (`hasMediaType(_:)`).
    public func hasMediaType(_ mediaType: AVMediaType) -> Bool {
        if case .pulse = kind { return mediaType == .audio }
        return mediaType == .video
    }

    /// The default device for `mediaType` (`default(for:)`): the first camera for `.video`,
    /// PulseAudio's default source for `.audio`; nil when there is none (no camera, no
    /// PulseAudio server; the log says why) or for another media type.
    public class func `default`(for mediaType: AVMediaType) -> AVCaptureDevice? {
        switch mediaType {
        case .video:
            if let camera = cameras().first { return camera }
            log.warning("AVCaptureDevice.default(for: .video): no camera: PipeWire has no Video/Source node (or is not running) and there is no /dev/videoN")
            return nil
        case .audio: return defaultMicrophone()
        default: return nil
        }
    }

    /// The first device of `deviceType` for `mediaType` at `position` (`default(_:for:position:)`).
    public class func `default`(_ deviceType: DeviceType, for mediaType: AVMediaType?, position: Position) -> AVCaptureDevice? {
        guard let kind = deviceType.mediaType, mediaType == nil || mediaType == kind else { return nil }
        return `default`(for: kind)
    }

    /// Always `.authorized` (`authorizationStatus(for:)`): Linux asks no permission; a
    /// device the user may not open says so when it is opened (`AVCaptureDeviceInput(device:)` throws).
    public class func authorizationStatus(for mediaType: AVMediaType) -> AVAuthorizationStatus { .authorized }

    /// Calls `handler` with true at once, on another queue (`requestAccess(for:completionHandler:)`).
    public class func requestAccess(for mediaType: AVMediaType, completionHandler handler: @escaping @Sendable (Bool) -> Void) {
        DispatchQueue.global().async { handler(true) }
    }

    /// PipeWire's cameras, then the V4L2 devices.
    static func cameras() -> [AVCaptureDevice] {
        let pipeWire = ((try? CameraSource.cameras(timeout: .seconds(2))) ?? []).map { node in
            let name = node.name ?? String(node.id)
            return AVCaptureDevice(.pipeWireCamera(node), uniqueID: "pipewire:\(name)", localizedName: node.description ?? name)
        }
        return pipeWire + V4L2Device.all().map { AVCaptureDevice(.v4l2($0), uniqueID: $0.path, localizedName: $0.name) }
    }

    /// PulseAudio's default source, when a server answers.
    static func defaultMicrophone() -> AVCaptureDevice? {
        let sources: [AudioDeviceInfo]
        do { sources = try PulseAudioSource.listDevices() } catch {
            log.warning("AVCaptureDevice.default(for: .audio): no PulseAudio server answers: \(error)")
            return nil
        }
        let name = sources.first { $0.isDefault && !$0.isMonitor }?.description ?? "Default source"
        return AVCaptureDevice(.pulse(device: "@DEFAULT_SOURCE@"), uniqueID: "@DEFAULT_SOURCE@", localizedName: name)
    }

    /// PulseAudio's sources that are not a sink's monitor.
    static func microphones() -> [AVCaptureDevice] {
        ((try? PulseAudioSource.listDevices()) ?? []).filter { !$0.isMonitor }.map {
            AVCaptureDevice(.pulse(device: $0.name), uniqueID: $0.name, localizedName: $0.description)
        }
    }

    /// Opens the camera asking for `size` (nil: its usual mode): SwiftRecord's source.
    func openCamera(size: VideoSize?) throws(SwiftRecordError) -> any CaptureSource {
        switch kind {
        case .pipeWireCamera(let node):
            return try CameraSource(configuration: CameraSource.Configuration(camera: node.name ?? String(node.id), size: size))
        case .v4l2(let device):
            return try V4L2CameraSource(path: device.path, size: size)
        case .pulse:
            throw SwiftRecordError(.invalidArgument, operation: "AVCaptureDevice", message: "'\(localizedName)' is a microphone, not a camera")
        }
    }

    /// Opens the microphone, its device checked on the server: SwiftRecord's source.
    func openMicrophone() throws(SwiftRecordError) -> any AudioCaptureSource {
        guard case .pulse(let device) = kind else {
            throw SwiftRecordError(.invalidArgument, operation: "AVCaptureDevice", message: "'\(localizedName)' is a camera, not a microphone")
        }
        let source = try PulseAudioSource(options: AudioSourceOptions(device: device))
        try source.checkDevice()
        return source
    }
}

/// Finds the devices of some types (`AVCaptureDevice.DiscoverySession`).
public final class AVCaptureDeviceDiscoverySession: Sendable {
    /// The devices found when the session was made (`devices`).
    public let devices: [AVCaptureDevice]

    /// The devices of `deviceTypes` for `mediaType` (nil: any); `position` is not known on
    /// Linux, so every position finds every device (`init(deviceTypes:mediaType:position:)`).
    public init(deviceTypes: [AVCaptureDevice.DeviceType], mediaType: AVMediaType?, position: AVCaptureDevice.Position) {
        let kinds = Set(deviceTypes.compactMap(\.mediaType).filter { mediaType == nil || $0 == mediaType })
        devices = (kinds.contains(.video) ? AVCaptureDevice.cameras() : []) + (kinds.contains(.audio) ? AVCaptureDevice.microphones() : [])
    }
}

/// Whether the app may capture (`AVAuthorizationStatus`): always `.authorized` here.
public enum AVAuthorizationStatus: Int, Sendable {
    case notDetermined = 0, restricted = 1, denied = 2, authorized = 3
}

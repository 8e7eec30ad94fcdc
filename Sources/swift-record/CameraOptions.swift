import ArgumentParser
import Foundation
import SwiftRecord
import SwiftRecordCamera

/// A camera: recorded alone (`--source camera`, `camera:NAME`), beside the screen on a
/// second video track (`--camera NAME`), or put over the screen (`--camera NAME --overlay
/// CORNER[,WxH][,MARGIN]`).
struct CameraOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A camera: its PipeWire node name, description, serial or id, or a V4L2 device path /dev/videoN (--list-cameras shows them). With --source camera the camera recorded (default: the first); beside a screen, a second video track (\"Camera\"), or put over the screen with --overlay.", valueName: "name"),
            completion: .custom { _, _, _ in CameraOptions.names() })
    var camera: String?

    @Option(help: ArgumentHelp("The camera mode to ask for, WxH (default 1280x720); the nearest the camera has is taken, and said.", valueName: "WxH"),
            transform: parsed(ValueParsing.size))
    var cameraSize: VideoSize?

    @Option(help: ArgumentHelp("The camera frame rate to ask for (default 30); a slower camera's pictures are repeated.", valueName: "n"))
    var cameraFps: Int?

    @Option(help: ArgumentHelp("Put the --camera over the screen: CORNER[,WxH][,MARGIN] with CORNER top-left, top-right, bottom-left or bottom-right (default size 320x180, margin 16 pixels).", valueName: "spec"),
            transform: parsed { text throws(SwiftRecordError) in try ValueParsing.overlay(text, corners: PictureOverlay.Corner.self) })
    var overlay: (corner: PictureOverlay.Corner, size: VideoSize, margin: Int)?

    @Option(help: ArgumentHelp("With --camera as a second video track: its average bit rate (default 1M); its codec, key-frame interval and preset are the screen's.", valueName: "rate"),
            transform: parsed(ValueParsing.bitRate))
    var cameraBitrate: Int?

    @Flag(help: "List the cameras (PipeWire Video/Source nodes), then exit.")
    var listCameras = false

    /// The camera options given, by name, if any (they need a camera).
    var givenOptionName: String? {
        [(cameraSize != nil, "--camera-size"), (cameraFps != nil, "--camera-fps")].first { $0.0 }?.1
    }

    /// What cannot go together; `recordsCamera`: the source is a camera (`--source camera`).
    func validate(recordsCamera: Bool) throws {
        if let fps = cameraFps, fps < 1 || fps > 1000 {
            throw ValidationError("--camera-fps \(fps): expected a frame rate from 1 to 1000")
        }
        if recordsCamera, overlay != nil {
            throw ValidationError("--overlay puts a camera over a screen; with --source camera the camera is the picture")
        }
        if overlay != nil, camera == nil {
            throw ValidationError("--overlay needs --camera NAME (the camera to put over the screen; --list-cameras shows them)")
        }
        if cameraBitrate != nil, camera == nil || overlay != nil || recordsCamera {
            throw ValidationError("--camera-bitrate applies to a camera on a second video track (--camera NAME beside a screen, without --overlay)")
        }
        if !recordsCamera, camera == nil, let name = givenOptionName {
            throw ValidationError("\(name) applies to a camera (--source camera or --camera NAME)")
        }
    }

    /// The camera's settings; `name` from `--source camera:NAME` wins over `--camera`.
    func configuration(name: String? = nil) -> CameraSource.Configuration {
        CameraSource.Configuration(camera: name ?? camera, size: cameraSize, frameRate: cameraFps)
    }

    /// `--list-cameras`: one line per camera (PipeWire's, then V4L2 devices with their
    /// formats and sizes), then exit; PipeWire not running is said, not a failure.
    /// Tab completion of `--camera`: the PipeWire cameras' node names and the V4L2 devices
    /// (none where neither answers; PipeWire's absence is seen at once).
    static func names() -> [String] {
        ((try? CameraSource.cameras()) ?? []).map { $0.name ?? String($0.id) } + V4L2Device.all().map(\.path)
    }

    static func list() throws -> Never {
        var pipeWire: [PipeWireNode] = []
        do {
            pipeWire = try CameraSource.cameras()
        } catch {
            note("swift-record: --list-cameras: no PipeWire cameras listed: \(error.message)")
        }
        for c in pipeWire {
            say("camera:\(c.name ?? String(c.id))\t\(c.description ?? "")\tserial \(c.serial ?? "?")\tnode \(c.id)")
        }
        let devices = V4L2Device.all()
        for device in devices { say(device.listing) }
        if pipeWire.isEmpty && devices.isEmpty {
            note("swift-record: --list-cameras: no camera: PipeWire has no Video/Source node and there is no V4L2 video capture device (/dev/video*)")
        }
        throw ExitStatus.success
    }
}

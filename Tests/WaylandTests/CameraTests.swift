// Issue 29: a camera as a source, against a PipeWire camera of the tests' own
// (swift-record-test-camera, Tests/TestCamera: a Video/Source node sending a red picture with
// a moving white bar and its frame number in 8 blocks along the top) on a private PipeWire
// (HeadlessGNOME without a compositor: its bus, pipewire and wireplumber).
//
// Catalogue:
// - testListsTheCameraAndRecordsItAlone: --list-cameras names it (camera:NAME, its description,
//   serial and node); --source camera:NAME for 2 s → 320x240 at 30/1, 60 frames (ffprobe), the
//   frame numbers read from the decoded pictures (ffmpeg, gray) increasing, the picture red
//   where the camera sends red; the same in NV12, I420 and MJPG (a JPEG per picture, decoded).
// - testDamagedJPEGsAreSkipped: an MJPG camera sending every 10th picture cut in half → exit 0,
//   60 frames that decode without an error, the frame numbers in order (a damaged picture's
//   tick repeats the one before), the picture advancing.
// - testCameraOverTheScreen: --source synthetic --realtime --size 640x360 --camera NAME
//   --overlay bottom-right,160x120,16 → 640x360; the camera's picture (luma 81, its frame
//   blocks advancing) in the rectangle 464,224 160x120, the synthetic scene around it.
// - testCameraThatRenegotiatesItsSizeKeepsRecording: the camera switches from 320x240 to
//   640x360 after 20 pictures → exit 0, 90 frames at the first size (320x240), the frame
//   numbers read (at the new size's scale) still advancing in order in the last second (at
//   least 10 different pictures of it).
// - testCameraAsASecondVideoTrack: --source synthetic --realtime --size 640x360 --camera NAME
//   (no --overlay) → two video streams (ffprobe): 640x360 and the camera's 320x240 titled
//   "Camera", 60 frames each, starting together and ending within a frame of each other; the
//   synthetic tone's clicks within a frame of the scene's flashes (A/V); the second stream's
//   decoded pictures are the camera's (red, its frame blocks advancing); --stats-json has the
//   track's figures.
// - testSlowCameraRepeatsNeverStalls: a 15 fps camera over a 30 fps recording: 90 frames in 3 s,
//   none dropped, the camera's frame numbers each repeated about twice.
// - testCameraErrorsAreClear: an unknown camera → exit 2 naming it and listing the one there is,
//   nothing written; --camera-bitrate with --overlay, --overlay without --camera,
//   a bad --overlay → exit 64 (usage) before anything opens.
// - testV4L2DevicesListedAndErrorsClear (no V4L2 device can exist here: no kernel modules):
//   --list-cameras lists the PipeWire camera and says when there is no camera at all (no
//   PipeWire, no /dev/video*: exit 0); --source camera:/dev/video99 → exit 2 "no V4L2 camera
//   at /dev/video99 (no such device)" listing what there is; /dev/null → "is not a V4L2
//   device"; nothing written; the library's device list skips nodes that are not V4L2
//   (a directory of video0 → /dev/null, video1 a plain file) and names why each is refused.
// - testNodesThatAreNoCamerasNeverRecurse: in a mount namespace whose /dev holds video0 (a link
//   to /dev/null) and video1 (a plain file): --list-cameras exits 0 saying there is no camera,
//   camera:/dev/video1 exits 2 naming it and "there is no V4L2 camera" (the list had recursed).
// - testCameraUnpluggedMidRecordingKeepsRecording: the camera killed 1 s into a 3-s overlay
//   recording → exit 0, 90 frames, "the camera stopped" said, its last picture still in place.
import Foundation
import SwiftRecord
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class CameraTests: CameraTestCase {
    func testListsTheCameraAndRecordsItAlone() throws {
        for format in ["yuy2", "nv12", "i420", "mjpg"] {
            let desktop = try pipeWireWithCamera(format: format)
            defer { desktop.stop() }
            let list = try record(desktop, ["--list-cameras"])
            XCTAssertEqual(list.status, 0, list.stderr)
            XCTAssertTrue(list.stdout.contains("camera:sr-test-cam\tTest_camera\tserial "), list.stdout)
            let out = path("camera-\(format).mp4")
            let r = try record(desktop, ["--source", "camera:sr-test-cam", "--duration", "2", "-o", out])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stderr.contains("recording camera sr-test-cam (Test_camera) at 320x240 30 fps, \(format.uppercased())"), r.stderr)
            let (stream, _) = try FF.probe(out)
            XCTAssertEqual(int(stream["width"]), 320)
            XCTAssertEqual(int(stream["height"]), 240)
            XCTAssertEqual(int(stream["nb_read_frames"]), 60)
            let frames = try lumaFrames(out, width: 320, height: 240)
            XCTAssertEqual(frames.count, 60)
            let numbers = frames.map { frameNumber($0, width: 320) }
            XCTAssertGreaterThanOrEqual(Set(numbers).count, 40, "\(format): the picture advances: \(numbers)")
            let steps = zip(numbers, numbers.dropFirst()).map { ($1 - $0 + 256) % 256 }
            XCTAssertTrue(steps.allSatisfy { $0 < 8 }, "\(format): frame numbers in order: \(numbers)")
            // Below the blocks, away from the bar at the picture's bottom-left corner: red.
            let rgb = try FF.rgb(out, x: 300, y: 230, at: 1.0)
            XCTAssertGreaterThan(rgb.0, 200, "\(format): \(rgb)")
            XCTAssertLessThan(rgb.1, 80, "\(format): \(rgb)")
            XCTAssertLessThan(rgb.2, 80, "\(format): \(rgb)")
        }
    }

    func testDamagedJPEGsAreSkipped() throws {
        let desktop = try pipeWireWithCamera(format: "mjpg-damaged")
        defer { desktop.stop() }
        let out = path("damaged.mp4")
        let r = try record(desktop, ["--source", "camera:sr-test-cam", "--duration", "2", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let decode = try Proc.run("ffmpeg", ["-v", "error", "-i", out, "-f", "null", "-"])
        XCTAssertEqual(decode.stderr, "")
        let numbers = try lumaFrames(out, width: 320, height: 240).map { frameNumber($0, width: 320) }
        XCTAssertEqual(numbers.count, 60)
        XCTAssertGreaterThanOrEqual(Set(numbers).count, 35, "the picture advances: \(numbers)")
        XCTAssertTrue(zip(numbers, numbers.dropFirst()).allSatisfy { ($1 - $0 + 256) % 256 < 8 }, "in order: \(numbers)")
        XCTAssertFalse(numbers.contains { $0 % 10 == 5 && $0 > 0 }, "no damaged picture shows: \(numbers)")
    }

    func testCameraOverTheScreen() throws {
        let desktop = try pipeWireWithCamera()
        defer { desktop.stop() }
        let out = path("overlay.mp4")
        let r = try record(desktop, ["--source", "synthetic", "--realtime", "--size", "640x360", "--camera", "sr-test-cam",
                                     "--overlay", "bottom-right,160x120,16", "--duration", "2", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("with camera sr-test-cam"), r.stderr)
        let frames = try lumaFrames(out, width: 640, height: 360)
        XCTAssertEqual(frames.count, 60)
        // The camera's picture at half size in 464,224 160x120: its frame blocks advance.
        let numbers = frames.map { frameNumber($0, width: 640, x: 464, y: 224, scale: 0.5) }
        XCTAssertGreaterThanOrEqual(Set(numbers).count, 40, "the camera in the corner moves: \(numbers)")
        let last = frames[45]
        // Its red background (luma 81) along the bottom rows, wherever the bar is not.
        let inside = [470, 500, 540, 580, 615].map { Int(last[330 * 640 + $0]) }
        XCTAssertGreaterThanOrEqual(inside.filter { abs($0 - 81) <= 8 }.count, 4, "the camera's picture inside the rectangle: \(inside)")
        // Around it the scene: not the camera's luma, on every side.
        for (x, y) in [(460, 300), (628, 300), (540, 220), (540, 348)] {
            XCTAssertGreaterThan(abs(Int(last[y * 640 + x]) - 81), 8, "(\(x),\(y)) is the scene, not the camera")
        }
    }

    func testCameraThatRenegotiatesItsSizeKeepsRecording() throws {
        let desktop = try pipeWireWithCamera(renegotiate: "640x360@20")
        defer { desktop.stop() }
        let out = path("reneg.mp4")
        let r = try record(desktop, ["--source", "camera:sr-test-cam", "--duration", "3", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let (stream, _) = try FF.probe(out)
        XCTAssertEqual(int(stream["width"]), 320)
        XCTAssertEqual(int(stream["height"]), 240)
        let frames = try lumaFrames(out, width: 320, height: 240)
        XCTAssertEqual(frames.count, 90)
        // The last second: the 640x360 pictures scaled to 320x240 (blocks at half width).
        let late = frames[60...].map { frameNumber($0, width: 320, scale: 0.5) }
        // (At least a third of the camera's 30 a second: under ThreadSanitizer the tests' own
        // camera, instrumented too, sends about 13 a second at the new size.)
        XCTAssertGreaterThanOrEqual(Set(late).count, 10, "the picture still advances after the switch: \(late)")
        XCTAssertTrue(late.allSatisfy { $0 > 20 }, "pictures after the switch: \(late)")
        XCTAssertTrue(zip(late, late.dropFirst()).allSatisfy { ($1 - $0 + 256) % 256 < 8 }, "read at the new size's scale, in order: \(late)")
    }

    func testCameraAsASecondVideoTrack() throws {
        let desktop = try pipeWireWithCamera()
        defer { desktop.stop() }
        let out = path("two-tracks.mp4"), stats = path("two-tracks.json")
        // With the synthetic tone, whose clicks fall on the scene's flashes: A/V in time too.
        let r = try Proc.run(binary, ["--source", "synthetic", "--realtime", "--size", "640x360", "--camera", "sr-test-cam",
                                      "--audio", "synthetic", "--duration", "2", "--stats-json", stats, "-o", out],
                             environment: desktop.clientEnvironment(), timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("and on a second video track camera sr-test-cam"), r.stderr)
        let (pcm, soundStart) = try AudioCheck.decodeTimed(out)
        let soundEnd = soundStart + Double(pcm.count) / 48_000
        let flashes = try AudioCheck.flashTimes(out, width: 640, height: 360).filter { $0 < soundEnd - 0.05 }
        let offsets = AudioCheck.offsets(flashes: flashes, clicks: AudioCheck.clickOnsets(pcm, rate: 48_000).map { $0 + soundStart })
        XCTAssertFalse(offsets.isEmpty, "a flash and its click: flashes at \(flashes)")
        XCTAssertTrue(offsets.allSatisfy { abs($0) <= 1.0 / 30 }, "A/V within a frame: \(offsets.map { ($0 * 1000).rounded() }) ms")
        let probe = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries",
                                             "stream=index,width,height,nb_read_frames,start_time,duration:stream_tags=title,handler_name",
                                             "-of", "json", out])
        XCTAssertEqual(probe.status, 0, probe.stderr)
        let streams = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])?["streams"] as? [[String: Any]])
        XCTAssertEqual(streams.count, 2, probe.stdout)
        guard streams.count == 2 else { return }
        XCTAssertEqual(streams.map { int($0["width"]) }, [640, 320])
        XCTAssertEqual(streams.map { int($0["height"]) }, [360, 240])
        XCTAssertEqual(streams.map { int($0["nb_read_frames"]) }, [60, 60], probe.stdout)
        let tags = streams[1]["tags"] as? [String: Any]
        XCTAssertTrue(["title", "handler_name"].contains { (tags?[$0] as? String) == "Camera" }, probe.stdout)
        let starts = streams.compactMap { ($0["start_time"] as? String).flatMap(Double.init) }
        let ends = streams.compactMap { s in (s["start_time"] as? String).flatMap(Double.init).flatMap { t in (s["duration"] as? String).flatMap(Double.init).map { t + $0 } } }
        XCTAssertEqual(starts.count, 2)
        XCTAssertEqual(ends.count, 2)
        if starts.count == 2, ends.count == 2 {
            XCTAssertLessThanOrEqual(abs(starts[0] - starts[1]), 1.0 / 30 + 0.001, "the tracks start together: \(probe.stdout)")
            XCTAssertLessThanOrEqual(abs(ends[0] - ends[1]), 1.0 / 30 + 0.001, "and end together: \(probe.stdout)")
        }
        // The second track is the camera: its frame blocks advance in order, its picture red.
        let camera = try lumaFrames(out, width: 320, height: 240, stream: 1)
        XCTAssertEqual(camera.count, 60)
        let numbers = camera.map { frameNumber($0, width: 320) }
        XCTAssertGreaterThanOrEqual(Set(numbers).count, 40, "the camera's picture advances: \(numbers)")
        XCTAssertTrue(zip(numbers, numbers.dropFirst()).allSatisfy { ($1 - $0 + 256) % 256 < 8 }, "in order: \(numbers)")
        XCTAssertLessThanOrEqual(abs(Int(camera[30][200 * 320 + 300]) - 81), 8, "the camera's red")
        XCTAssertEqual(try lumaFrames(out, width: 640, height: 360).count, 60, "the screen's track decodes whole")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        let tracks = json?["videoTracks"] as? [[String: Any]]
        XCTAssertEqual(tracks?.count, 1, "\(json ?? [:])")
        XCTAssertEqual(int(tracks?.first?["framesWritten"]), 60)
    }

    func testSlowCameraRepeatsNeverStalls() throws {
        let desktop = try pipeWireWithCamera(fps: 15)
        defer { desktop.stop() }
        let out = path("slow.mp4"), stats = path("slow.json")
        let r = try record(desktop, ["--source", "synthetic", "--realtime", "--size", "640x360", "--camera", "sr-test-cam",
                                     "--overlay", "top-left,160x120,0", "--duration", "3", "--stats-json", stats, "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        XCTAssertEqual(int(json?["framesWritten"]), 90)
        XCTAssertEqual(int(json?["framesDropped"]), 0)
        let numbers = try lumaFrames(out, width: 640, height: 360).map { frameNumber($0, width: 640, scale: 0.5) }
        XCTAssertEqual(numbers.count, 90)
        let distinct = Set(numbers).count
        XCTAssertTrue((30...50).contains(distinct), "about 45 camera pictures over 90 frames, each repeated: \(numbers)")
        let repeated = zip(numbers, numbers.dropFirst()).filter { $0 == $1 }.count
        XCTAssertGreaterThanOrEqual(repeated, 35, "a 15 fps camera's pictures repeated in a 30 fps recording: \(numbers)")
    }

    func testCameraErrorsAreClear() throws {
        let desktop = try pipeWireWithCamera()
        defer { desktop.stop() }
        let out = path("none.mp4")
        let unknown = try record(desktop, ["--source", "camera:nope", "--duration", "1", "-o", out])
        XCTAssertEqual(unknown.status, 2, unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("no camera 'nope'") && unknown.stderr.contains("sr-test-cam (Test_camera"), unknown.stderr)
        for (arguments, says) in [(["--source", "synthetic", "--camera", "sr-test-cam", "--overlay", "top-left", "--camera-bitrate", "1M"],
                                   "--camera-bitrate applies to a camera on a second video track"),
                                  (["--source", "synthetic", "--overlay", "top-left"], "--overlay needs --camera"),
                                  (["--source", "synthetic", "--camera", "sr-test-cam", "--overlay", "middle"], "--overlay 'middle'"),
                                  (["--source", "synthetic", "--camera", "sr-test-cam", "--overlay", "top-left,31x20"], "even sides"),
                                  (["--source", "camera", "--overlay", "top-left"], "with --source camera the camera is the picture")] {
            let r = try record(desktop, arguments + ["--duration", "1", "-o", out])
            XCTAssertEqual(r.status, 64, "a usage error: \(arguments): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(says), "\(arguments): \(r.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testV4L2DevicesListedAndErrorsClear() throws {
        let desktop = try pipeWireWithCamera()
        defer { desktop.stop() }
        let list = try record(desktop, ["--list-cameras"])
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertTrue(list.stdout.contains("camera:sr-test-cam\t"), list.stdout)
        for device in V4L2Device.all() { XCTAssertTrue(list.stdout.contains("camera:\(device.path)\t"), list.stdout) }
        let out = path("v4l2.mp4")
        let missing = try record(desktop, ["--source", "camera:/dev/video99", "--duration", "1", "-o", out])
        XCTAssertEqual(missing.status, 2, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("no V4L2 camera at /dev/video99 (no such device); ")
                      && (missing.stderr.contains("the V4L2 cameras are: ") || missing.stderr.contains("there is no V4L2 camera")), missing.stderr)
        let notCamera = try record(desktop, ["--camera", "/dev/null", "--overlay", "top-left", "--duration", "1", "-o", out])
        XCTAssertEqual(notCamera.status, 2, notCamera.stderr)
        XCTAssertTrue(notCamera.stderr.contains("/dev/null is not a V4L2 device"), notCamera.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))

        // Without PipeWire (a runtime directory of its own) and without V4L2 devices: said, exit 0.
        let environment = try withoutPipeWire(desktop.clientEnvironment())
        let none = try Proc.run(binary, ["--list-cameras"], environment: environment)
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertTrue(none.stderr.contains("no PipeWire cameras listed"), none.stderr)
        if V4L2Device.all().isEmpty {
            XCTAssertTrue(none.stderr.contains("no camera: PipeWire has no Video/Source node and there is no V4L2 video capture device"), none.stderr)
        }

        // The library's list: only nodes that are V4L2 video capture devices.
        let dev = path("dev")
        try FileManager.default.createDirectory(atPath: dev, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dev + "/video0", withDestinationPath: "/dev/null")
        try Data("not a device".utf8).write(to: URL(fileURLWithPath: dev + "/video1"))
        XCTAssertEqual(V4L2Device.all(directory: dev), [])
        XCTAssertThrowsError(try V4L2Device(path: dev + "/video1")) { error in
            XCTAssertTrue("\(error)".contains("video1 is not a V4L2 device"), "\(error)")
        }
    }

    /// Nodes named /dev/video* that are no cameras (a metadata node, one the user may not
    /// open): listed as none, each error naming what there is, once. Run in a mount namespace
    /// of its own whose /dev is a tmpfs holding null, zero, urandom, video0 (a link to
    /// /dev/null) and video1 (a plain file); the device list had called itself again for
    /// every node it could not take (the error's own list of cameras) until the stack ran out.
    func testNodesThatAreNoCamerasNeverRecurse() throws {
        guard Proc.which("unshare") != nil, getuid() == 0,
              (try? Proc.run("unshare", ["-m", "true"]))?.status == 0 else {
            throw XCTSkip("needs root and unshare -m for a /dev of its own")
        }
        let setUp = "mount -t tmpfs none /dev && mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/zero c 1 5 "
            + "&& mknod -m 666 /dev/urandom c 1 9 && ln -s /dev/null /dev/video0 && : > /dev/video1 && exec \"$0\" \"$@\""
        let environment = try withoutPipeWire(ProcessInfo.processInfo.environment)
        let list = try Proc.run("unshare", ["-m", "sh", "-c", setUp, binary, "--list-cameras"], environment: environment, timeout: 60)
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertTrue(list.stderr.contains("there is no V4L2 video capture device"), list.stderr)
        let out = path("v4l2.mp4")
        let open = try Proc.run("unshare", ["-m", "sh", "-c", setUp, binary, "--source", "camera:/dev/video1", "--audio", "none",
                                            "--duration", "1", "-o", out], environment: environment, timeout: 60)
        XCTAssertEqual(open.status, 2, open.stderr)
        XCTAssertTrue(open.stderr.contains("/dev/video1 is not a V4L2 device") && open.stderr.contains("there is no V4L2 camera"), open.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testCameraUnpluggedMidRecordingKeepsRecording() throws {
        let desktop = try pipeWireWithCamera()
        defer { desktop.stop() }
        let out = path("unplugged.mp4"), log = path("unplugged.csv")
        let child = try Proc.spawn(binary, ["--source", "synthetic", "--realtime", "--size", "640x360", "--camera", "sr-test-cam",
                                            "--overlay", "top-left,160x120,0", "--duration", "3", "--timing-log", log, "-o", out] + commonArguments,
                                   environment: desktop.clientEnvironment())
        defer { child.terminate() }
        XCTAssertNotNil(TimingLogFile.waitForFrame(30, in: log, timeout: 30), child.currentStderr())
        desktop.kill9(CameraTestCase.camera)
        let r = child.wait(timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("the camera stopped"), r.stderr)
        let frames = try lumaFrames(out, width: 640, height: 360)
        XCTAssertEqual(frames.count, 90)
        // The camera's last picture stays in its corner to the end.
        let end = frames[89]
        XCTAssertEqual(frameNumber(end, width: 640, scale: 0.5), frameNumber(frames[80], width: 640, scale: 0.5), "no new camera picture after it went")
        XCTAssertLessThanOrEqual(abs(Int(end[100 * 640 + 150]) - 81), 8, "its picture is still there")
    }
}

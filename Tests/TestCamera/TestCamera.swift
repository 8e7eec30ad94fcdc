// Tests only: a camera for the camera tests. Publishes a PipeWire `Video/Source` node (as a
// camera does through PipeWire) sending a known pattern in YUY2, NV12 or I420: a red picture
// (Y 81, U 90, V 240) with a white bar 16 pixels wide moving 8 pixels a frame, and along the
// top the frame number in 8 blocks of 16x16 (white for a 1 bit, black for 0, the lowest bit
// on the left), so a test can read which frame it got and where the picture lies.
//
// In MJPG the same picture is encoded as a JPEG per frame (libavcodec's mjpeg encoder);
// a FORMAT of mjpg-damaged sends every 10th picture cut in half (a damaged JPEG).
//
// With RENEGOTIATE (WxH@N, raw formats only), after N pictures it offers only that size
// (pw_stream_update_params), and the stream renegotiates mid-stream, as a camera whose
// mode is changed by another program does.
//
// With silent-first in place of RENEGOTIATE, it sends nothing while its first reader streams,
// and pictures to every later one: a producer whose one picture for a new reader was lost
// (headless Mutter on a busy machine, a new cast of a still screen).
//
// Usage: swift-record-test-camera NAME WxH FPS FORMAT [RENEGOTIATE | silent-first]
//        (FORMAT: yuy2, nv12, i420, mjpg, mjpg-damaged)
// Prints "ready" once its node is published; runs until SIGTERM or SIGINT.
import CFFmpeg
import CPipeWire
import Foundation

/// What the callbacks share, reached through their user data; used on PipeWire's loop thread
/// only (and before it starts).
final class Camera {
    var width: Int, height: Int, rowBytes: Int, frameSize: Int
    let format: spa_video_format, fps: Int
    var stream: OpaquePointer?
    /// The size offered after `after` pictures, once.
    var renegotiate: (size: (Int, Int), after: Int)?
    var frame = 0
    var announced = false
    /// silent-first: no pictures until the stream streams a second time.
    var silentFirst = false
    var streamings = 0
    /// MJPG: the encoder, the I420 picture it encodes, and whether every 10th is cut short.
    var jpeg: JPEGEncoder?
    var damaged = false

    init(width: Int, height: Int, format: spa_video_format, fps: Int) {
        (self.width, self.height, self.format, self.fps) = (width, height, format, fps)
        (rowBytes, frameSize) = Camera.layout(width: width, height: height, format: format)
    }

    static func layout(width: Int, height: Int, format: spa_video_format) -> (rowBytes: Int, frameSize: Int) {
        format == SPA_VIDEO_FORMAT_YUY2 ? (width * 2, width * 2 * height) : (width, width * height * 3 / 2)
    }

    /// Offers only `size` from now on: the stream renegotiates (raw formats).
    func offer(_ size: (Int, Int)) {
        guard let stream else { return }
        (width, height) = size
        (rowBytes, frameSize) = Camera.layout(width: width, height: height, format: format)
        var storage = [UInt8](repeating: 0, count: 1024)
        storage.withUnsafeMutableBufferPointer { bytes in
            var params: [UnsafePointer<spa_pod>?] = [sr_pw_fixed_video_format(bytes.baseAddress, UInt32(bytes.count), 0, format.rawValue,
                                                                             UInt32(width), UInt32(height), UInt32(fps))]
            _ = pw_stream_update_params(stream, &params, 1)
        }
    }

    /// Fills `base` (room for `frameSize` bytes) with this frame's picture; its length.
    func picture(into base: UnsafeMutablePointer<UInt8>) -> Int {
        guard let jpeg else {
            fill(base)
            return frameSize
        }
        fill(jpeg.picture)
        let n = jpeg.encode(into: base, capacity: frameSize)
        return damaged && frame % 10 == 5 ? n / 2 : n
    }

    static func from(_ data: UnsafeMutableRawPointer?) -> Camera? {
        data.map { Unmanaged<Camera>.fromOpaque($0).takeUnretainedValue() }
    }

    func fill(_ base: UnsafeMutablePointer<UInt8>) {
        let barX = (frame * 8) % width
        let frame = self.frame
        func luma(_ x: Int, _ y: Int) -> UInt8 {
            if y < 16 && x < 128 { return (frame >> (x / 16)) & 1 == 1 ? 235 : 16 }
            return x >= barX && x < barX + 16 ? 235 : 81
        }
        if format == SPA_VIDEO_FORMAT_YUY2 {
            for y in 0..<height {
                let row = base + y * rowBytes
                for x in stride(from: 0, to: width, by: 2) {
                    row[2 * x] = luma(x, y)
                    row[2 * x + 1] = 90
                    row[2 * x + 2] = luma(x + 1, y)
                    row[2 * x + 3] = 240
                }
            }
            return
        }
        for y in 0..<height { for x in 0..<width { base[y * width + x] = luma(x, y) } }
        let chroma = base + width * height
        if format == SPA_VIDEO_FORMAT_NV12 {
            for i in 0..<(width * height / 4) { chroma[2 * i] = 90; chroma[2 * i + 1] = 240 }
        } else {
            for i in 0..<(width * height / 4) { chroma[i] = 90; chroma[width * height / 4 + i] = 240 }
        }
    }
}

/// The program: nonisolated (PipeWire calls the callbacks on its own thread).
enum TestCamera {
    static func run() -> Never {

        let arguments = CommandLine.arguments
        func size(_ text: Substring) -> (Int, Int)? {
            let parts = text.split(separator: "x")
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0, w % 2 == 0, h % 2 == 0 else { return nil }
            return (w, h)
        }
        var renegotiate: (size: (Int, Int), after: Int)?
        let silentFirst = arguments.count == 6 && arguments[5] == "silent-first"
        if arguments.count == 6 && !silentFirst {
            let parts = arguments[5].split(separator: "@")
            guard parts.count == 2, let s = size(parts[0]), let n = Int(parts[1]), n > 0, !arguments[4].hasPrefix("mjpg") else {
                FileHandle.standardError.write(Data("swift-record-test-camera: RENEGOTIATE is WxH@N (raw formats only)\n".utf8))
                exit(2)
            }
            renegotiate = (s, n)
        }
        guard arguments.count == 5 || renegotiate != nil || silentFirst, let x = arguments[2].firstIndex(of: "x"),
              let width = Int(arguments[2][..<x]), let height = Int(arguments[2][arguments[2].index(after: x)...]),
              let fps = Int(arguments[3]), width > 0, height > 0, width % 2 == 0, height % 2 == 0, fps > 0,
              let format = ["yuy2": SPA_VIDEO_FORMAT_YUY2, "nv12": SPA_VIDEO_FORMAT_NV12, "i420": SPA_VIDEO_FORMAT_I420,
                            "mjpg": SPA_VIDEO_FORMAT_I420, "mjpg-damaged": SPA_VIDEO_FORMAT_I420][arguments[4]] else {
            FileHandle.standardError.write(Data("usage: swift-record-test-camera NAME WxH FPS yuy2|nv12|i420|mjpg|mjpg-damaged\n".utf8))
            exit(2)
        }
        let name = arguments[1]

        // SIGTERM and SIGINT are waited for on the main thread: blocked before any thread starts.
        var waited = sigset_t()
        sigemptyset(&waited)
        sigaddset(&waited, SIGTERM)
        sigaddset(&waited, SIGINT)
        pthread_sigmask(SIG_BLOCK, &waited, nil)

        let camera = Camera(width: width, height: height, format: format, fps: fps)
        camera.renegotiate = renegotiate
        camera.silentFirst = silentFirst
        let mjpeg = arguments[4].hasPrefix("mjpg")
        if mjpeg {
            guard let encoder = JPEGEncoder(width: width, height: height) else {
                FileHandle.standardError.write(Data("swift-record-test-camera: no MJPEG encoder\n".utf8))
                exit(1)
            }
            camera.jpeg = encoder
            camera.damaged = arguments[4] == "mjpg-damaged"
        }
        let data = Unmanaged.passUnretained(camera).toOpaque()

        if let reason = sr_pipewire_load() {
            FileHandle.standardError.write(Data("swift-record-test-camera: cannot load libpipewire-0.3.so.0: \(String(cString: reason))\n".utf8))
            exit(1)
        }
        pw_init(nil, nil)
        guard let loop = pw_thread_loop_new("test-camera", nil),
              let context = pw_context_new(pw_thread_loop_get_loop(loop), nil, 0),
              let core = pw_context_connect(context, nil, 0) else {
            FileHandle.standardError.write(Data("swift-record-test-camera: cannot connect to PipeWire\n".utf8))
            exit(1)
        }
        let properties = pw_properties_new_string("media.class=Video/Source media.role=Camera node.description=Test_camera")
        pw_properties_set(properties, "node.name", name)
        guard let stream = pw_stream_new(core, name, properties) else { exit(1) }
        camera.stream = stream
        var events = pw_stream_events()
        events.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.state_changed = { data, _, state, _ in
            guard let camera = Camera.from(data) else { return }
            if state == PW_STREAM_STATE_STREAMING { camera.streamings += 1 }
            if (state == PW_STREAM_STATE_PAUSED || state == PW_STREAM_STATE_STREAMING) && !camera.announced {
                camera.announced = true
                FileHandle.standardOutput.write(Data("ready \(pw_stream_get_node_id(camera.stream))\n".utf8))
            }
        }
        events.param_changed = { data, id, param in
            guard id == SPA_PARAM_Format.rawValue, param != nil, let camera = Camera.from(data), let stream = camera.stream else { return }
            var storage = [UInt8](repeating: 0, count: 1024)
            storage.withUnsafeMutableBufferPointer { bytes in
                var params = [UnsafePointer<spa_pod>?](repeating: nil, count: 2)
                let n = sr_pw_producer_buffers(bytes.baseAddress, UInt32(bytes.count), &params, UInt32(camera.frameSize), UInt32(camera.rowBytes))
                _ = pw_stream_update_params(stream, &params, n)
            }
        }
        events.process = { data in
            guard let camera = Camera.from(data), let stream = camera.stream, let b = pw_stream_dequeue_buffer(stream) else { return }
            if let buffer = b.pointee.buffer, let planes = buffer.pointee.datas, let base = planes.pointee.data,
               Int(planes.pointee.maxsize) >= camera.frameSize, let chunk = planes.pointee.chunk {
                let size = camera.picture(into: base.assumingMemoryBound(to: UInt8.self))
                chunk.pointee.offset = 0
                chunk.pointee.size = UInt32(size)
                chunk.pointee.stride = Int32(camera.rowBytes)
                if let header = spa_buffer_find_meta_data(buffer, SPA_META_Header.rawValue, MemoryLayout<spa_meta_header>.size)?
                    .assumingMemoryBound(to: spa_meta_header.self) {
                    var now = timespec()
                    clock_gettime(CLOCK_MONOTONIC, &now)
                    header.pointee.pts = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
                    header.pointee.seq = UInt64(camera.frame)
                    header.pointee.flags = 0
                }
                camera.frame += 1
            }
            pw_stream_queue_buffer(stream, b)
            if let change = camera.renegotiate, camera.frame >= change.after {
                camera.renegotiate = nil
                camera.offer(change.size)
            }
        }
        var hook = spa_hook()
        pw_stream_add_listener(stream, &hook, &events, data)
        var storage = [UInt8](repeating: 0, count: 1024)
        let connected: Int32 = storage.withUnsafeMutableBufferPointer { bytes in
            var params: [UnsafePointer<spa_pod>?] = [sr_pw_fixed_video_format(bytes.baseAddress, UInt32(bytes.count), mjpeg ? 1 : 0, format.rawValue,
                                                                             UInt32(width), UInt32(height), UInt32(fps))]
            let flags = pw_stream_flags(PW_STREAM_FLAG_DRIVER.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue)
            return pw_stream_connect(stream, SPA_DIRECTION_OUTPUT, UInt32.max, flags, &params, 1)  // PW_ID_ANY
        }
        guard connected >= 0 else {
            FileHandle.standardError.write(Data("swift-record-test-camera: cannot publish the stream (\(connected))\n".utf8))
            exit(1)
        }
        // The frame clock: each tick asks the stream for a picture (it drives its graph).
        let timer = sr_pw_loop_add_timer(pw_thread_loop_get_loop(loop), { data, _ in
            if let camera = Camera.from(data), let stream = camera.stream, pw_stream_get_state(stream, nil) == PW_STREAM_STATE_STREAMING,
               !camera.silentFirst || camera.streamings > 1 {
                _ = pw_stream_trigger_process(stream)
            }
        }, data)
        _ = sr_pw_loop_start_timer(pw_thread_loop_get_loop(loop), timer, UInt64(1_000_000_000 / fps))
        pw_thread_loop_start(loop)

        var signalNumber: Int32 = 0
        sigwait(&waited, &signalNumber)
        pw_thread_loop_stop(loop)
        pw_stream_destroy(stream)
        pw_core_disconnect(core)
        pw_context_destroy(context)
        pw_thread_loop_destroy(loop)
        exit(0)
    }
}

/// The tests' MJPG: libavcodec's mjpeg encoder over an I420 picture of the pattern (full
/// range, as JPEG is), one JPEG per frame.
final class JPEGEncoder {
    let picture: UnsafeMutablePointer<UInt8>
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let width: Int, height: Int

    init?(width: Int, height: Int) {
        (self.width, self.height) = (width, height)
        picture = .allocate(capacity: width * height * 3 / 2)
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG), let context = avcodec_alloc_context3(codec) else { return nil }
        self.context = context
        context.pointee.width = Int32(width)
        context.pointee.height = Int32(height)
        context.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
        context.pointee.time_base = AVRational(num: 1, den: 30)
        context.pointee.flags |= AV_CODEC_FLAG_QSCALE
        context.pointee.global_quality = 2 * FF_QP2LAMBDA
        guard avcodec_open2(context, codec, nil) >= 0, let frame = av_frame_alloc(), let packet = av_packet_alloc() else { return nil }
        (self.frame, self.packet) = (frame, packet)
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        frame.pointee.format = AV_PIX_FMT_YUVJ420P.rawValue
        frame.pointee.quality = 2 * FF_QP2LAMBDA
    }

    deinit {
        av_packet_free(&packet)
        av_frame_free(&frame)
        avcodec_free_context(&context)
        picture.deallocate()
    }

    /// Encodes `picture` into `out`; the JPEG's length (0 when it failed or did not fit).
    func encode(into out: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int {
        guard let context, let frame, let packet else { return 0 }
        let luma = width * height
        withUnsafeMutablePointer(to: &frame.pointee.data) { data in
            data.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 3) { planes in
                planes[0] = picture
                planes[1] = picture + luma
                planes[2] = picture + luma + luma / 4
            }
        }
        withUnsafeMutablePointer(to: &frame.pointee.linesize) { sizes in
            sizes.withMemoryRebound(to: Int32.self, capacity: 3) { s in
                s[0] = Int32(width)
                s[1] = Int32(width / 2)
                s[2] = Int32(width / 2)
            }
        }
        guard avcodec_send_frame(context, frame) >= 0, avcodec_receive_packet(context, packet) >= 0 else { return 0 }
        defer { av_packet_unref(packet) }
        let n = Int(packet.pointee.size)
        guard n <= capacity, let data = packet.pointee.data else { return 0 }
        out.update(from: data, count: n)
        return n
    }
}

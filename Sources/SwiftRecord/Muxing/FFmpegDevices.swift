internal import CFFmpeg

/// libavdevice's inputs (`v4l2`), which only the V4L2 camera source reads through.
/// libavdevice is not linked into the program: with libavfilter and their dependencies it
/// is some 70 shared libraries (SDL2, JACK, OpenAL, libcdio, libdc1394, …) that every run,
/// `--help` included, would otherwise load and relocate before `main`. It is opened here,
/// the first time a device input is asked for, and its inputs registered with libavformat.
enum FFmpegDevices {
    /// Registers libavdevice's inputs, once per process; the same error on every call when
    /// the library cannot be loaded (a clear one naming it, never a crash).
    static func register() throws(SwiftRecordError) {
        try registered.get()
    }

    private static let registered: Result<Void, SwiftRecordError> = Result { () throws(SwiftRecordError) in
        let major = sr_avdevice_major()
        let library = try SharedLibrary("libavdevice.so.\(major)",
                                        purpose: "FFmpeg's device library, which V4L2 cameras are read through (Debian's package libavdevice\(major))",
                                        operation: "camera")
        let registerAll = try library.function("avdevice_register_all", operation: "camera")
        unsafeBitCast(registerAll, to: (@convention(c) () -> Void).self)()
    }
}

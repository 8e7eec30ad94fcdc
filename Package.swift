// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "swift-record",
    products: [
        .library(name: "SwiftRecord", targets: ["SwiftRecord"]),
        .library(name: "SwiftRecordX11", targets: ["SwiftRecordX11"]),
        .library(name: "SwiftRecordPulse", targets: ["SwiftRecordPulse"]),
        .library(name: "SwiftRecordPipeWire", targets: ["SwiftRecordPipeWire"]),
        .library(name: "SwiftRecordCamera", targets: ["SwiftRecordCamera"]),
        .library(name: "SwiftRecordWayland", targets: ["SwiftRecordWayland"]),
        // Another process's pictures and sound over a socket (the host source and the sender).
        .library(name: "SwiftRecordBroadcast", targets: ["SwiftRecordBroadcast"]),
        // The Swift sender alone (BroadcastSampleHandler on raw planes and nanoseconds): no
        // FFmpeg, no Foundation, for a sender whose memory is capped.
        .library(name: "SwiftRecordBroadcastWire", targets: ["SwiftRecordBroadcastWire"]),
        // The sender for C, C++ and Rust: libSwiftRecordSender.so and swift_record_sender.h.
        .library(name: "SwiftRecordSender", type: .dynamic, targets: ["SwiftRecordSender"]),
        .executable(name: "swift-record", targets: ["swift-record"]),
        // Apple's spellings over SwiftRecord, in modules named as Apple's, so that ported code
        // keeps its `import AVFoundation`, `import CoreMedia` and `import CoreVideo` lines
        // (PortingFromAVFoundation.md says why the names are Apple's).
        .library(name: "AVFoundation", targets: ["AVFoundation"]),
        .library(name: "CoreMedia", targets: ["CoreMedia"]),
        .library(name: "CoreVideo", targets: ["CoreVideo"]),
        .library(name: "ReplayKit", targets: ["ReplayKit"]),
        .library(name: "ScreenCaptureKit", targets: ["ScreenCaptureKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Deque: the capture loop's frames waiting for room.
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        // Logging: the library logs through swift-log (FFmpeg's av_log routed into it); the
        // application chooses the backend.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        // FileDescriptor: reads, writes, opens and closes, with EINTR retried in one place.
        .package(url: "https://github.com/apple/swift-system", from: "1.8.0"),
        // `swift package generate-documentation` (make docs); a command plugin, built only when run.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CFFmpeg",
            path: "Sources/CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(["libavcodec-dev", "libavformat-dev", "libswscale-dev", "libavutil-dev", "libavdevice-dev"])]
        ),
        // V4L2's ioctls (variadic in C), for listing cameras; the kernel's headers only.
        .systemLibrary(name: "CV4L2", path: "Sources/CV4L2"),
        // The lock and the monotonic clock, without FFmpeg or Foundation (SwiftRecord re-exports it).
        .target(name: "SwiftRecordBase", path: "Sources/SwiftRecordBase"),
        // The synthetic scene's drawing and the frame-number band's, on raw I420 planes: no
        // FFmpeg, no Foundation (SyntheticScene draws with it, and so does a broadcast sender).
        .target(name: "SwiftRecordScene", path: "Sources/SwiftRecordScene"),
        .target(
            name: "SwiftRecord",
            dependencies: ["CFFmpeg", "CV4L2", "SwiftRecordBase", "SwiftRecordScene", .product(name: "DequeModule", package: "swift-collections"),
                           .product(name: "Logging", package: "swift-log"),
                           .product(name: "SystemPackage", package: "swift-system")],
            path: "Sources/SwiftRecord"
        ),
        // Xlib, MIT-SHM and XFixes are linked (libavutil loads them anyway); libXdamage and
        // libXrandr are opened with dlopen when an X11 source needs them, through stubs as
        // libpulse's below (headers from libx11-dev, libxext-dev, libxfixes-dev, libxdamage-dev,
        // libxrandr-dev, in the default paths).
        .target(name: "CX11", dependencies: ["CSharedLibrary"], path: "Sources/CX11"),
        .target(
            name: "SwiftRecordX11",
            dependencies: ["SwiftRecord", "CX11"],
            path: "Sources/SwiftRecordX11"
        ),
        // libpulse (libpulse-dev), libpipewire-0.3 and sd-bus are not linked: each is opened
        // with dlopen when a source first needs it, through stubs of the functions called
        // (scripts/shared-library-stubs.py writes them; CSharedLibrary opens the library), so
        // that their 13 shared libraries are not loaded by every run, `--help` included.
        .target(name: "CSharedLibrary", path: "Sources/CSharedLibrary"),
        // libpulse's headers (no pkgConfig: libpulse.pc's Cflags, -D_REENTRANT -pthread, make
        // SwiftPM warn on every build; its headers are in the default paths).
        .target(name: "CPulse", dependencies: ["CSharedLibrary"], path: "Sources/CPulse"),
        .target(
            name: "SwiftRecordPulse",
            dependencies: ["SwiftRecord", "CPulse", .product(name: "DequeModule", package: "swift-collections")],
            path: "Sources/SwiftRecordPulse"
        ),
        // libpipewire-0.3 (libpipewire-0.3-dev): the video streams of screen casts and cameras.
        // A C target, not a pkg-config system library: libpipewire-0.3.pc's Cflags carry
        // -D_REENTRANT, which SwiftPM refuses with a warning on every build; its two header
        // folders are reached through include/pipewire and include/spa (links to Debian's
        // /usr/include/pipewire-0.3/pipewire and /usr/include/spa-0.2/spa).
        // Not linked: its functions are stubs (pipewire.c) that open it on first use.
        .target(name: "CPipeWire", dependencies: ["CSharedLibrary"], path: "Sources/CPipeWire"),
        // sd-bus (libsystemd-dev): the portal's and Mutter's D-Bus calls, Wayland screens only;
        // not linked either (sdbus.c's stubs).
        .target(name: "CSDBus", dependencies: ["CSharedLibrary"], path: "Sources/CSDBus"),
        // A PipeWire video stream and the registry's nodes, shared by screens and cameras.
        .target(
            name: "SwiftRecordPipeWire",
            dependencies: ["SwiftRecord", "CPipeWire"],
            path: "Sources/SwiftRecordPipeWire"
        ),
        // Cameras: a PipeWire Video/Source node, or a V4L2 device (SwiftRecord's Cameras/
        // folder, which needs no library beyond FFmpeg). Needs libpipewire, not sd-bus.
        .target(
            name: "SwiftRecordCamera",
            dependencies: ["SwiftRecord", "SwiftRecordPipeWire", "CPipeWire", .product(name: "Logging", package: "swift-log")],
            path: "Sources/SwiftRecordCamera"
        ),
        // Wayland screens (portal or Mutter, over sd-bus). Re-exports SwiftRecordCamera, so
        // code that found `CameraSource` through `import SwiftRecordWayland` keeps compiling.
        .target(
            name: "SwiftRecordWayland",
            dependencies: ["SwiftRecord", "SwiftRecordPipeWire", "SwiftRecordCamera", "CPipeWire", "CSDBus",
                           .product(name: "Logging", package: "swift-log"),
                           .product(name: "SystemPackage", package: "swift-system")],
            path: "Sources/SwiftRecordWayland"
        ),
        // memfd_create, seals, SO_PEERCRED and SCM_RIGHTS's CMSG macros, which Glibc's module lacks.
        .target(name: "CBroadcast", path: "Sources/CBroadcast"),
        // The wire protocol, the socket, the shared ring and the sender (BroadcastSampleHandler
        // on raw planes): no FFmpeg, no Foundation (a sender's memory is capped),
        // re-exported by SwiftRecordBroadcast, which adds SwiftRecord's types to the sender.
        .target(name: "SwiftRecordBroadcastWire", dependencies: ["SwiftRecordBase", "CBroadcast"], path: "Sources/SwiftRecordBroadcastWire"),
        .target(name: "SwiftRecordBroadcast", dependencies: ["SwiftRecord", "SwiftRecordBroadcastWire", "CBroadcast", .product(name: "Logging", package: "swift-log")],
                path: "Sources/SwiftRecordBroadcast"),
        .target(name: "SwiftRecordSender", dependencies: ["SwiftRecordBase", "SwiftRecordBroadcastWire"], path: "Sources/SwiftRecordSender",
                exclude: ["swift_record_sender.h"]),
        // The Apple-spelled layer: CoreVideo (pixel buffers) ← CoreMedia (times, sample
        // buffers) ← AVFoundation (the writer), each re-exporting the one below, as Apple's do.
        .target(name: "CoreVideo", dependencies: ["SwiftRecord", .product(name: "Logging", package: "swift-log")], path: "Sources/CoreVideo"),
        .target(name: "CoreMedia", dependencies: ["CoreVideo", "SwiftRecord"], path: "Sources/CoreMedia"),
        // The capture family opens PipeWire and V4L2 cameras (SwiftRecordCamera) and
        // PulseAudio microphones (SwiftRecordPulse).
        .target(name: "AVFoundation", dependencies: ["CoreMedia", "CoreVideo", "SwiftRecord", "SwiftRecordPulse", "SwiftRecordCamera",
                                                     .product(name: "Logging", package: "swift-log")],
                path: "Sources/AVFoundation"),
        // In-app capture's platform part: this process's X11 windows (or the screen, or the
        // portal's chooser on Wayland) and its PulseAudio sound.
        .target(name: "ReplayKit", dependencies: ["CoreMedia", "SwiftRecord", "SwiftRecordX11", "SwiftRecordPulse", "SwiftRecordWayland",
                                                  .product(name: "Logging", package: "swift-log")],
                path: "Sources/ReplayKit"),
        // Screen capture with ScreenCaptureKit's names: X11's monitors and windows, Mutter's
        // monitors and the portal's chooser on Wayland, streams over the capture sources' async
        // frames, their sound from PulseAudio.
        .target(name: "ScreenCaptureKit", dependencies: ["CoreMedia", "CoreVideo", "SwiftRecord", "SwiftRecordX11", "SwiftRecordWayland", "SwiftRecordPulse"],
                path: "Sources/ScreenCaptureKit"),
        .executableTarget(
            name: "swift-record",
            dependencies: [
                "SwiftRecord",
                "SwiftRecordX11",
                "SwiftRecordPulse",
                "SwiftRecordCamera",
                "SwiftRecordWayland",
                "SwiftRecordBroadcast",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Sources/swift-record"
        ),
        .executableTarget(name: "SceneRecorder", dependencies: ["SwiftRecord"], path: "Examples/SceneRecorder"),
        .executableTarget(name: "PixelBufferPoolTour", dependencies: ["SwiftRecord"], path: "Examples/PixelBufferPoolTour"),
        .executableTarget(name: "X11GrabRate", dependencies: ["SwiftRecord", "SwiftRecordX11"], path: "Examples/X11GrabRate"),
        .executableTarget(name: "YUVToMP4", dependencies: ["SwiftRecord"], path: "Examples/YUVToMP4"),
        .executableTarget(name: "ScreenCaptureWithSound", dependencies: ["SwiftRecord"], path: "Examples/ScreenCaptureWithSound"),
        .executableTarget(name: "ARSceneRecorder", dependencies: ["SwiftRecord"], path: "Examples/ARSceneRecorder"),
        // Apple's RosyWriter (its MovieRecorder), ported with only its import lines changed: the
        // Apple-spelled modules; the capture part, marked, is synthetic here.
        .executableTarget(name: "RosyWriter", dependencies: ["AVFoundation", "CoreVideo"], path: "Examples/RosyWriter"),
        // The same port's files (links to them) in Swift 5 mode, as ported code often is.
        .executableTarget(name: "RosyWriterSwift5", dependencies: ["AVFoundation", "CoreVideo"], path: "Examples/RosyWriterSwift5",
                          swiftSettings: [.swiftLanguageMode(.v5)]),
        // An AVCam-style movie recorder (camera and microphone into AVCaptureMovieFileOutput),
        // ported with only its import lines and its marked platform parts changed.
        .executableTarget(name: "AVCamRecorder", dependencies: ["AVFoundation"], path: "Examples/AVCamRecorder"),
        .executableTarget(name: "AVCamRecorderSwift5", dependencies: ["AVFoundation"], path: "Examples/AVCamRecorderSwift5",
                          swiftSettings: [.swiftLanguageMode(.v5)]),
        // A ReplayKit in-app capture writer, ported with only its import lines changed; the app's
        // window and sound (the platform part) are an X11 window and a PulseAudio tone of its own.
        .executableTarget(name: "ReplayKitWriter", dependencies: ["AVFoundation", "ReplayKit", "SwiftRecordX11", "SwiftRecordPulse"],
                          path: "Examples/ReplayKitWriter"),
        .executableTarget(name: "ReplayKitWriterSwift5", dependencies: ["AVFoundation", "ReplayKit", "SwiftRecordX11", "SwiftRecordPulse"],
                          path: "Examples/ReplayKitWriterSwift5", swiftSettings: [.swiftLanguageMode(.v5)]),
        // A ScreenCaptureKit capture engine (stream, stream output, AVAssetWriter) written as for
        // the Mac, with only its imports and marked platform parts changed.
        .executableTarget(name: "ScreenCaptureEngine", dependencies: ["AVFoundation", "ScreenCaptureKit"], path: "Examples/ScreenCaptureEngine"),
        .executableTarget(name: "ScreenCaptureEngineSwift5", dependencies: ["AVFoundation", "ScreenCaptureKit"], path: "Examples/ScreenCaptureEngineSwift5",
                          swiftSettings: [.swiftLanguageMode(.v5)]),
        // One snippet per row of the porting table's "As written?" tables (AppleLayerTableTests).
        .executableTarget(name: "AppleSnippets", dependencies: ["AVFoundation", "CoreMedia", "CoreVideo", "ReplayKit", "ScreenCaptureKit"], path: "Examples/AppleSnippets"),
        .executableTarget(name: "ReadmeSnippets", dependencies: ["SwiftRecord", "SwiftRecordX11"], path: "Examples/ReadmeSnippets"),
        .executableTarget(name: "DocSnippets", dependencies: ["SwiftRecord", "SwiftRecordX11", "SwiftRecordPulse", "SwiftRecordCamera", "SwiftRecordWayland",
                                                              "SwiftRecordBroadcast", "SwiftRecordBroadcastWire", "ScreenCaptureKit"],
                          path: "Examples/DocSnippets"),
        // A "broadcast upload extension": the synthetic scene and two tones sent to a recorder;
        // neither FFmpeg nor Foundation (the light modules alone), to keep within 50 MB.
        .executableTarget(name: "BroadcastExtension", dependencies: ["SwiftRecordBroadcastWire", "SwiftRecordScene"], path: "Examples/BroadcastExtension"),
        .executableTarget(name: "SceneBench", dependencies: ["SwiftRecord"], path: "bench/SceneBench"),
        // Allocations per frame on the append path (`make bench`, under bench/alloc-counter.c).
        .executableTarget(name: "AllocBench", dependencies: ["SwiftRecord"], path: "bench/AllocBench"),
        .executableTarget(name: "AppendBench", dependencies: ["SwiftRecord"], path: "bench/AppendBench"),
        // SCStream + SCRecordingOutput recording the screen, beside the command line (bench/sck-record).
        .executableTarget(name: "SCKRecordBench", dependencies: ["ScreenCaptureKit"], path: "bench/SCKRecordBench"),
        // Tests only: a PipeWire camera publishing a known pattern (Tests/TestCamera/main.swift).
        .executableTarget(name: "swift-record-test-camera", dependencies: ["CPipeWire", "CFFmpeg"], path: "Tests/TestCamera"),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "SwiftRecordTests", dependencies: ["SwiftRecord", "SwiftRecordScene", "AVFoundation", "ReplayKit", "TestSupport", .product(name: "Logging", package: "swift-log")],
                    path: "Tests/SwiftRecordTests"),
        .testTarget(name: "CLITests", dependencies: ["SwiftRecord", "TestSupport"], path: "Tests/CLITests", exclude: ["Helpers"]),
        // The command line's argument rules in process: `RecordingPlan`s made from argument
        // arrays (the executable target imported with @testable), no binary spawned.
        .testTarget(name: "CommandPlanTests", dependencies: ["swift-record", "SwiftRecord"], path: "Tests/CommandPlanTests"),
        .testTarget(name: "BroadcastTests", dependencies: ["SwiftRecord", "SwiftRecordBroadcast", "TestSupport"], path: "Tests/BroadcastTests"),
        .testTarget(name: "X11Tests", dependencies: ["SwiftRecord", "SwiftRecordX11", "SwiftRecordPulse", "ScreenCaptureKit", "CX11", "TestSupport"], path: "Tests/X11Tests"),
        .testTarget(name: "PulseTests", dependencies: ["SwiftRecord", "SwiftRecordPulse", "TestSupport"], path: "Tests/PulseTests"),
        .testTarget(name: "WaylandTests", dependencies: ["SwiftRecord", "SwiftRecordPipeWire", "SwiftRecordCamera", "SwiftRecordWayland", "CPipeWire", "ReplayKit", "ScreenCaptureKit", "TestSupport", "AVFoundation"], path: "Tests/WaylandTests",
                    exclude: ["Helpers"]),
    ],
    swiftLanguageModes: [.v6]
)

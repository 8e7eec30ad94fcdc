// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "swift-record",
    products: [
        .library(name: "SwiftRecord", targets: ["SwiftRecord"]),
        .executable(name: "swift-record", targets: ["swift-record"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CFFmpeg",
            path: "Sources/CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(["libavcodec-dev", "libavformat-dev", "libswscale-dev", "libavutil-dev"])]
        ),
        .target(
            name: "SwiftRecord",
            dependencies: ["CFFmpeg"],
            path: "Sources/SwiftRecord"
        ),
        .executableTarget(
            name: "swift-record",
            dependencies: [
                "SwiftRecord",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/swift-record"
        ),
        .executableTarget(name: "SceneRecorder", dependencies: ["SwiftRecord"], path: "Examples/SceneRecorder"),
        .executableTarget(name: "PixelBufferPoolTour", dependencies: ["SwiftRecord"], path: "Examples/PixelBufferPoolTour"),
        .executableTarget(name: "YUVToMP4", dependencies: ["SwiftRecord"], path: "Examples/YUVToMP4"),
        .executableTarget(name: "SceneBench", dependencies: ["SwiftRecord"], path: "bench/SceneBench"),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "SwiftRecordTests", dependencies: ["SwiftRecord", "TestSupport"], path: "Tests/SwiftRecordTests"),
        .testTarget(name: "CLITests", dependencies: ["SwiftRecord", "TestSupport"], path: "Tests/CLITests"),
    ],
    swiftLanguageModes: [.v6]
)

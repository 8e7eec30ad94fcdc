// ConvertingRawVideo.md.
import Foundation
import SwiftRecord

func rawVideoConverterSnippet() async throws {
    var options = RawVideoConverter.Options(input: "capture.yuv")
    options.size = VideoSize(width: 1920, height: 1080)
    options.pixelFormat = .nv12
    options.frameRate = Rational(30000, 1001)
    options.rateControl = .constantQuality(20)
    options.output = "capture.mp4"

    // Checks the input and settles the plan; writes nothing yet.
    let converter = try RawVideoConverter(options: options)
    let plan = converter.plan
    print(plan.input.frameCount ?? 0, "frames of", plan.input.frameBytes, "bytes")
    print("to", plan.outputPath, "as", plan.settings.codec)
    for note in plan.notes { print("note: \(note)") }

    let result = try await converter.run()
    print(result.framesWritten, "frames,", result.duration.seconds, "s,",
          result.outputBytes, "bytes")
}

func y4mSnippet() async throws {
    var options = RawVideoConverter.Options(input: "clip.y4m", lossless: true)
    options.crop = CropRegion(x: 0, y: 60, width: 1280, height: 600)
    options.rotation = 90
    let converter = try RawVideoConverter(options: options)
    let plan = converter.plan
    print(plan.input.y4mHeader?.colorSpace ?? "raw", plan.fileType)
    let progress = Task {
        while !Task.isCancelled {
            let p = converter.progress
            let total = p.totalFrames.map(String.init) ?? "?"
            print("\(p.framesWritten) of \(total) frames")
            try await Task.sleep(for: .seconds(1))
        }
    }
    defer { progress.cancel() }
    _ = try await converter.run()
}

func rawFramesByHandSnippet() async throws {
    let configuration = RawVideoFileSource.Configuration(
        path: "frames.rgb", size: VideoSize(width: 640, height: 480),
        pixelFormat: .rgba, frameRate: Rational(25))
    let file = try RawVideoFileSource(configuration: configuration)
    let info = file.info
    print(info.frameCount ?? 0, "frames of", info.frameBytes, "bytes")

    let writer = try AssetWriter(outputURL: URL(fileURLWithPath: "frames.mkv"))
    let input = AssetWriterInput(outputSettings: VideoSettings(
        codec: .h264, width: info.size.width, height: info.size.height,
        rateControl: .constantQuality(18),
        expectedSourceFrameRate: info.frameRate, preset: "veryfast"))
    let adaptor = PixelBufferAdaptor(     // converts rgba to the encoder's yuv420p
        assetWriterInput: input,
        sourcePixelBufferAttributes: PixelBufferAttributes(
            width: info.size.width, height: info.size.height,
            pixelFormat: file.pixelFormat))
    try writer.add(input)
    try writer.startWriting()
    try writer.startSession(atSourceTime: .zero)

    let pool = try PixelBufferPool(
        width: info.size.width, height: info.size.height,
        pixelFormat: file.pixelFormat, maximumBufferCount: input.queueDepth + 2)
    try file.start()
    defer { file.stop() }
    while let frame = try file.nextFrame(from: pool) {
        try await adaptor.append(frame.pixelBuffer,
                                 withPresentationTime: frame.captureTime)
    }
    input.markAsFinished()
    try await writer.finishWriting()
}

// SceneRecorder: record a rendered scene the way AR apps do with AVAssetWriter.
//
// The renderer runs at 60 fps (here the synthetic scene stands in for SceneKit or
// RealityKit); the recording is 30 fps, so every other rendered frame is appended,
// drawn straight into a buffer from the adaptor's pool and stamped with the time it
// was rendered. Rendering offline, the append waits while the encoder's queue is
// full; a live renderer would call `appendIfReady` instead and skip the frame.
//
//   swift run SceneRecorder [output.mp4] [seconds]
import Foundation
import SwiftRecord

let arguments = CommandLine.arguments.dropFirst()
let output = URL(fileURLWithPath: arguments.first ?? "scene.mp4")
let seconds = arguments.dropFirst().first.flatMap(Int.init) ?? 4
let width = 1280, height = 720
let renderRate: Int32 = 60, recordRate: Int32 = 30

do {
    let scene = try SyntheticScene(width: width, height: height)
    // As with AVAssetWriter, writing fails if the file exists: remove an old one first.
    try? FileManager.default.removeItem(at: output)
    let writer = try AssetWriter(outputURL: output)
    writer.metadata = AssetMetadata(title: "SceneRecorder", creationDate: Date())
    let input = AssetWriterInput(outputSettings: VideoSettings(
        codec: .h264, width: width, height: height, rateControl: .averageBitRate(4_000_000),
        maxKeyFrameInterval: 60, expectedSourceFrameRate: Rational(recordRate), profile: "high", preset: "veryfast"))
    let adaptor = PixelBufferAdaptor(assetWriterInput: input)
    try writer.add(input)
    try writer.startWriting()
    try writer.startSession(atSourceTime: .zero)

    var appended = 0, skipped = 0
    for frame in 0..<(seconds * Int(renderRate)) {
        // The render loop's clock: frame / 60 s.
        let renderTime = MediaTime(value: Int64(frame), timescale: renderRate)
        guard frame % Int(renderRate / recordRate) == 0 else { continue }  // record every other frame
        guard let pool = adaptor.pixelBufferPool, let buffer = pool.makePixelBufferIfAvailable() else {
            skipped += 1
            continue
        }
        try scene.render(frame: frame, into: buffer)
        try adaptor.append(buffer, withPresentationTime: renderTime)
        appended += 1
    }
    input.markAsFinished()
    try await writer.finishWriting()
    print("rendered \(seconds * Int(renderRate)) frames at \(renderRate) fps; recorded \(appended) at \(recordRate) fps (\(skipped) skipped) to \(output.path)")
} catch {
    print("SceneRecorder: \(error)")
    exit(1)
}

// PixelBufferPoolTour: the pixel-buffer pool by hand, as with CVPixelBufferPool.
//
// Takes buffers from an adaptor's pool, fills the planes of each by hand (a moving
// colour bar in I420), appends them with presentation times, and shows that the
// pool hands the same storage back instead of allocating.
//
//   swift run PixelBufferPoolTour [output.mp4]
import Foundation
import SwiftRecord

let output = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? "pool-tour.mp4")
let width = 320, height = 240, frameCount = 60
let fps = Rational(30)!

do {
    // As with AVAssetWriter, writing fails if the file exists: remove an old one first.
    try? FileManager.default.removeItem(at: output)
    let writer = try AssetWriter(outputURL: output)
    let input = AssetWriterInput(outputSettings: VideoSettings(
        codec: .h264, width: width, height: height,
        rateControl: .averageBitRate(500_000), expectedSourceFrameRate: fps, preset: "veryfast"))
    let adaptor = PixelBufferAdaptor(assetWriterInput: input)
    try writer.add(input)
    try writer.startWriting()
    try writer.startSession(atSourceTime: .zero)

    guard let pool = adaptor.pixelBufferPool else {
        print("the pool is nil until the writer has started"); exit(1)
    }
    var identities = Set<UInt>()
    for frame in 0..<frameCount {
        let buffer = try pool.makePixelBuffer()
        identities.insert(buffer.storageIdentity)
        buffer.withWriteAccess { planes in
            // Luma: a white bar moving right over grey; rows are bytesPerRow apart, not width.
            let y = planes[0]
            let barX = frame * (width - 32) / frameCount
            for row in 0..<y.height {
                let line = (y.baseAddress + row * y.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                for x in 0..<y.rowLength { line[x] = (x >= barX && x < barX + 32) ? 235 : 96 }
            }
            // Chroma: a hue that changes over time.
            for (plane, value) in [(1, UInt8(128 + frame)), (2, UInt8(128 - frame))] {
                let p = planes[plane]
                for row in 0..<p.height {
                    (p.baseAddress + row * p.bytesPerRow).initializeMemory(as: UInt8.self, repeating: value, count: p.rowLength)
                }
            }
        }
        try adaptor.append(buffer, withPresentationTime: MediaTime(value: Int64(frame), timescale: 30))
    }
    input.markAsFinished()
    try await writer.finishWriting()
    print("wrote \(frameCount) frames to \(output.path)")
    print("distinct pixel storages used: \(identities.count); fresh allocations: \(pool.storageAllocationCount)")
    print("the pool reused its buffers \(frameCount - pool.storageAllocationCount) times")
} catch {
    print("PixelBufferPoolTour: \(error)")
    exit(1)
}

// README.md's Swift snippets, compiled so the documentation cannot rot. Each README
// block appears here verbatim (ReadmeSnippetTests checks that); this target is only
// built, never run.
import Foundation
import SwiftRecord

let writer = try AssetWriter(outputURL: URL(fileURLWithPath: "out.mp4"))   // .mp4 → FileType.mp4
writer.shouldOptimizeForNetworkUse = true                                  // moov before mdat
let input = AssetWriterInput(outputSettings: VideoSettings(
    codec: .h264, width: 1280, height: 720,
    rateControl: .averageBitRate(2_000_000), maxKeyFrameInterval: 60,
    expectedSourceFrameRate: Rational(30)))
let adaptor = PixelBufferAdaptor(assetWriterInput: input,
    sourcePixelBufferAttributes: PixelBufferAttributes(width: 1280, height: 720, pixelFormat: .bgra))
try writer.add(input)
try writer.startWriting()
try writer.startSession(atSourceTime: .zero)

for frame in 0..<300 {
    let buffer = try adaptor.pixelBufferPool!.makePixelBuffer()   // pooled: no allocation per frame
    buffer.withWriteAccess { planes in /* draw into planes[0].baseAddress, bytesPerRow apart */ }
    try adaptor.append(buffer, withPresentationTime: MediaTime(value: Int64(frame), timescale: 30))  // waits for room
}
input.markAsFinished()
try await writer.finishWriting()

_ = x11Snippet

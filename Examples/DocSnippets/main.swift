// The Swift snippets of the DocC articles (Sources/SwiftRecord/SwiftRecord.docc), compiled
// so the documentation cannot rot. Each ```swift block of an article appears, line for line
// (indentation aside), in one of this folder's files, inside a function that is never
// called: DocCSnippetTests checks that every block is here, and `swift build --build-tests`
// builds this target. Lines around a block (the function, set-up an article shows in an
// earlier block) are the compiled file's own.
import Foundation
import SwiftRecord

print("DocSnippets is only compiled; the articles' snippets are in functions that are not run.")

// WritingFiles.md's writer, at top level as the article shows it; never run.
if CommandLine.arguments.contains("--never-run-the-snippets") {

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
}

// PassThroughAndRemuxing.md.
import Foundation
import SwiftRecord

func remuxLoopSnippet() async throws {
    let reader = try AssetReader(path: "recording.mkv")
    let writer = AssetWriter(outputURL: URL(fileURLWithPath: "recording.mp4"), fileType: .mp4)
    var pairs: [(AssetReaderTrackOutput, AssetWriterInput)] = []
    for track in reader.tracks {
        let output = AssetReaderTrackOutput(track: track, outputSettings: nil)
        let input = try AssetWriterInput(mediaType: track.mediaType, outputSettings: nil,
                                         sourceFormatHint: track.formatDescription)
        try reader.add(output)
        try writer.add(input)
        pairs.append((output, input))
    }
    try reader.startReading()
    try writer.startWriting()
    try writer.startSession(atSourceTime: .zero)
    for (output, input) in pairs {
        while let sample = try output.copyNextSampleBuffer() {
            try await input.append(sample)
        }
        input.markAsFinished()
    }
    try await writer.finishWriting()
}

func canAddSnippet() throws {
    let webm = AssetWriter(outputURL: URL(fileURLWithPath: "recording.webm"), fileType: .webm)
    let source = try AssetReader(path: "recording.mkv")
    for track in source.tracks {
        let input = try AssetWriterInput(mediaType: track.mediaType, outputSettings: nil,
                                         sourceFormatHint: track.formatDescription)
        if webm.canAdd(input) {
            try webm.add(input)
        } else {
            print("\(track.codecName) cannot go in WebM; re-encode it (VP9 or AV1, Opus)")
        }
    }
}

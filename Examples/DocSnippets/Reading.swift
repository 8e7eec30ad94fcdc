// ReadingMedia.md.
import Foundation
import SwiftRecord

enum ReadingExampleError: Error {
    case codecNotCarried(String)
}

func transcodingSnippet() async throws {
    let reader = try AssetReader(url: URL(fileURLWithPath: "recording.mkv"))
    let writer = AssetWriter(outputURL: URL(fileURLWithPath: "recording.mp4"), fileType: .mp4)
    var pairs: [(AssetReaderTrackOutput, AssetWriterInput)] = []
    for track in reader.tracks {
        if track.mediaType == .video {
            let size = track.naturalSize
            pairs.append((AssetReaderTrackOutput(track: track, outputSettings: .video(pixelFormat: .yuv420p)),
                          AssetWriterInput(outputSettings: VideoSettings(width: size.width, height: size.height))))
        } else {
            let pcm = AudioFormat(sampleType: .f32, isPlanar: true, sampleRate: 48_000, channelLayout: .stereo)
            pairs.append((AssetReaderTrackOutput(track: track, outputSettings: .audio(pcm)),
                          AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings())))
        }
    }
    for (output, input) in pairs {
        try reader.add(output)
        try writer.add(input)
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

func remuxSnippet() throws {
    let source = try AssetReader(path: "recording.mkv")
    let remux = AssetWriter(outputURL: URL(fileURLWithPath: "copy.mp4"), fileType: .mp4)
    for track in source.tracks {
        let output = AssetReaderTrackOutput(track: track, outputSettings: nil)
        let input = try AssetWriterInput(mediaType: track.mediaType, outputSettings: nil,
                                         sourceFormatHint: track.formatDescription)
        guard remux.canAdd(input) else { throw ReadingExampleError.codecNotCarried(track.codecName) }
        try source.add(output)
        try remux.add(input)
    }
}

func timeRangeSnippet() async throws {
    let clip = try AssetReader(path: "recording.mkv")
    if let video = clip.tracks.first(where: { $0.mediaType == .video }) {
        let frames = AssetReaderTrackOutput(track: video, outputSettings: .video(pixelFormat: .rgba))
        try clip.add(frames)
        clip.timeRange = TimeRange(start: MediaTime(seconds: 10), duration: MediaTime(seconds: 2))
        try clip.startReading()
        for try await sample in frames.samples {
            print(sample.presentationTimeStamp, sample.pixelBuffer?.width ?? 0)
        }
    }
}

func thumbnailSnippet() throws {
    let generator = try AssetImageGenerator(asset: URL(fileURLWithPath: "recording.mkv"))
    generator.maximumSize = VideoSize(width: 320, height: 320)
    generator.appliesPreferredTrackTransform = true
    let (image, actualTime) = try generator.image(at: MediaTime(seconds: 5))
    let png = try generator.encodedImage(at: MediaTime(seconds: 5), format: .png)
    print(image.width, actualTime, png.count)
}

// TrimmingAndJoining.md.
import Foundation
import SwiftRecord

func trimSnippet() async throws {
    let session = try AssetExportSession(asset: URL(fileURLWithPath: "recording.mp4"),
                                         presetName: AssetExportSession.presetPassthrough)
    session.timeRange = TimeRange(start: MediaTime(seconds: 2), end: MediaTime(seconds: 10))
    try await session.export(to: URL(fileURLWithPath: "clip.mp4"), as: .mp4)
    print(session.keyFrameStart!)   // where the copy starts: the key frame at or before 2 s
}

func joinSnippet() async throws {
    let composition = MutableComposition()
    for name in ["a.mp4", "b.mp4", "c.mp4"] {
        try composition.insertTimeRange(nil, of: URL(fileURLWithPath: name), at: composition.duration)
    }
    let join = try AssetExportSession(composition: composition, presetName: AssetExportSession.presetPassthrough)
    try await join.export(to: URL(fileURLWithPath: "all.mp4"), as: .mp4)
}

func presetSnippet() async throws {
    let session = try AssetExportSession(asset: URL(fileURLWithPath: "recording.mp4"),
                                         presetName: AssetExportSession.preset1280x720)
    session.timeRange = TimeRange(start: MediaTime(seconds: 2), end: MediaTime(seconds: 10))
    session.metadata = AssetMetadata(title: "The interesting part")
    try await session.export(to: URL(fileURLWithPath: "clip-720p.mp4"), as: .mp4)
}

func singleTracksSnippet() async throws {
    let composition = MutableComposition()
    let pictures = composition.addMutableTrack(withMediaType: .video)!
    let sound = composition.addMutableTrack(withMediaType: .audio)!
    let screen = try AssetReader(url: URL(fileURLWithPath: "screen.mp4")).tracks.first { $0.mediaType == .video }!
    let voice = try AssetReader(url: URL(fileURLWithPath: "voice.m4a")).tracks.first { $0.mediaType == .audio }!
    let three = TimeRange(start: .zero, duration: MediaTime(seconds: 3))
    try pictures.insertTimeRange(three, of: screen, at: .zero)
    try sound.insertTimeRange(three, of: voice, at: .zero)
    try pictures.insertEmptyTimeRange(TimeRange(start: MediaTime(seconds: 3), duration: MediaTime(seconds: 1)))
    let export = try AssetExportSession(composition: composition, presetName: AssetExportSession.presetHighestQuality)
    try await export.export(to: URL(fileURLWithPath: "narrated.mp4"), as: .mp4)
}

func statesSnippet(_ session: AssetExportSession) async throws {
    let monitor = Task {
        for await state in session.states(updateInterval: 0.5) {
            if case .exporting(let progress) = state { print("\(Int(progress * 100)) %") }
        }
    }
    try await session.export(to: URL(fileURLWithPath: "clip.mp4"), as: .mp4)
    await monitor.value
}

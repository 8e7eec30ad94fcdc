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

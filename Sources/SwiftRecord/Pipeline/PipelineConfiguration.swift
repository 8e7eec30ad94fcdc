import Foundation

/// What a writer asks its pipeline to open.
struct PipelineConfiguration: Sendable {
    struct Track: Sendable {
        let settings: TrackSettings
        let transform: VideoTransform
        let faults: FaultInjection
        /// How many samples the track's queue holds, the one being encoded included.
        let queueDepth: Int
        /// The track's own tags (its title), FFmpeg's key names.
        var metadata: [String: String] = [:]
        /// An audio track mixing several sources: each one's volume (linear), in lane order.
        var mixVolumes: [Double]?
    }
    let url: URL
    /// The file written when `url` is a file URL, checked against the output rule.
    let file: OutputFile?
    let fileType: FileType
    let tracks: [Track]
    let metadata: [String: String]
    let optimizeForNetworkUse: Bool
    let fragments: Muxer.FragmentPlan?
    /// Live outputs and replay buffers: every packet muxed into the file is offered to each.
    var sinks: [any PacketSink] = []
    /// In-memory segments (`AssetWriter(contentType:)`) instead of a file: cut where
    /// `cuts` says on track `track`, each handed to `deliver` on the pipeline's thread.
    struct Segments: Sendable {
        let cuts: SegmentCuts
        let track: Int
        let profile: FileTypeProfile
        let deliver: @Sendable (Data, AssetSegmentType, AssetSegmentReport?) -> Void
    }
    var segments: Segments?
    /// Files the container carries beside the tracks (Matroska's attachments).
    var attachments: [AssetAttachment] = []
}

/// Faults a test can inject into a track, to make stress conditions deterministic
/// (the command line's hidden `--simulate-*` options set them).
package struct FaultInjection: Sendable {
    /// Every frame's encode waits this long first: an encoder slower than real time.
    package var encodeDelay: Duration?
    /// The encode of this frame (0-based, counting frames the track encodes) fails.
    package var failEncodeAtFrame: Int?

    package init(encodeDelay: Duration? = nil, failEncodeAtFrame: Int? = nil) {
        self.encodeDelay = encodeDelay
        self.failEncodeAtFrame = failEncodeAtFrame
    }
}

/// What the pipeline tells its writer, from the pipeline's thread. (Room in a track's
/// queue is not an event: a freed slot wakes its waiters itself, `TrackQueue`.)
enum PipelineEvent: Sendable {
    /// Writing failed; the file was finalised as far as it could be.
    case failed(SwiftRecordError)
    /// An audio track's synchronisation (of its source `lane`, 0 unless it mixes several):
    /// a correction (or none) and the totals so far.
    case audioSync(track: Int, lane: Int, AudioSyncEvent?, AudioSyncStatistics)
}

extension Duration {
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}

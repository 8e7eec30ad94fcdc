extension AssetWriter {
    /// The fragments of a conversion: a recording's default length.
    static let conversionFragmentInterval = MediaTime(seconds: 1)

    /// Makes a converter's MP4 or MOV file crash-safe as a recording is (the rule in
    /// README's "Nothing lost"): written as fragments, each flushed, and rewritten as an
    /// ordinary file on a normal finish. A conversion killed where it cannot clean up
    /// (SIGKILL, a crash, power loss) then leaves a file that plays up to its last fragment
    /// and that `MediaRepair.repair` makes ordinary, not one without an index. Matroska
    /// already is: each cluster is complete when written.
    ///
    /// Not with copied AC-3 or E-AC-3 (`copiedCodecs`): libavformat's MP4 muxer needs their
    /// first packet before it writes a moov, and an empty one up front is refused ("Cannot
    /// write moov atom before AC3 packets"); such a conversion is written as an ordinary file.
    /// Nor with subtitles (`subtitles`): FFmpeg's MP4 muxer fills the gaps between
    /// `mov_text` samples with empty ones, and across fragment boundaries it misplaces them
    /// ("Packet duration: -600 / dts: 1523 is out of range", a subtitle shown too early).
    func writeCrashSafe(copiedCodecs: [String] = [], subtitles: Bool = false) {
        guard fileType == .mp4 || fileType == .mov, !subtitles,
              !copiedCodecs.contains(where: { $0 == "ac3" || $0 == "eac3" }) else { return }
        movieFragmentInterval = AssetWriter.conversionFragmentInterval
    }
}

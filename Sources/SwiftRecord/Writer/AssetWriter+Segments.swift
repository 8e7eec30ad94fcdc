import Foundation

/// Receives the fragmented MPEG-4 segments of a writer made with
/// `AssetWriter(contentType:)`, as `Data` (`AVAssetWriterDelegate`): the initialization
/// segment once, first (with the first media segment: its `moov` needs every track's first
/// times), then each media segment as it is complete. Concatenated in the
/// order they came, they are a fragmented MP4 that plays; an HLS playlist lists the
/// initialization segment as its `EXT-X-MAP` and each media segment as a part or segment.
///
/// The delegate is called on the writer's pipeline thread (the one that encodes), one call
/// at a time, in order: keep the work short (hand the data to a queue of your own), as a
/// slow delegate holds up encoding. Implement either method; the one with a report is called.
///
/// The counterpart of `AVAssetWriterDelegate` on Apple platforms.
public protocol AssetWriterDelegate: AnyObject, Sendable {
    /// A segment with its report (nil for the initialization segment)
    /// (`assetWriter(_:didOutputSegmentData:segmentType:segmentReport:)`).
    func assetWriter(_ writer: AssetWriter, didOutputSegmentData segmentData: Data, segmentType: AssetSegmentType,
                     segmentReport: AssetSegmentReport?)
    /// A segment (`assetWriter(_:didOutputSegmentData:segmentType:)`).
    func assetWriter(_ writer: AssetWriter, didOutputSegmentData segmentData: Data, segmentType: AssetSegmentType)
}

extension AssetWriterDelegate {
    public func assetWriter(_ writer: AssetWriter, didOutputSegmentData segmentData: Data, segmentType: AssetSegmentType,
                            segmentReport: AssetSegmentReport?) {
        assetWriter(writer, didOutputSegmentData: segmentData, segmentType: segmentType)
    }

    public func assetWriter(_ writer: AssetWriter, didOutputSegmentData segmentData: Data, segmentType: AssetSegmentType) {}
}

extension MediaTime {
    /// Apple's `CMTime.indefinite`, where a writer takes it: here the same as ``positiveInfinity``.
    public static var indefinite: MediaTime { .positiveInfinity }
}

extension AssetWriter {
    static let segmentsURL = URL(string: "memory:segments") ?? URL(fileURLWithPath: "/dev/null")

    /// Who receives the segments of a writer made with ``init(contentType:)`` (`delegate`);
    /// held weakly, as Apple's. Set before ``startWriting()``. A writer with an output URL
    /// writes its file and takes no delegate: its ``startWriting()`` throws if one is set.
    public var delegate: (any AssetWriterDelegate)? {
        get { state[\.delegate] }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// What the segments follow (`outputFileTypeProfile`): ``FileTypeProfile/mpeg4AppleHLS``
    /// or ``FileTypeProfile/mpeg4CMAFCompliant``. Required for segments; set before ``startWriting()``.
    public var outputFileTypeProfile: FileTypeProfile? {
        get { state[\.profile] }
        set { state[\.profile] = newValue }
    }

    /// How long each segment is (`preferredOutputSegmentInterval`): a new one starts at the
    /// first sample of the segments' track (the first video input, else the first input) at
    /// or after each multiple of it from ``initialSegmentStartTime``; a picture there is
    /// encoded as a key frame, so segments are this long to the frame (a pass-through track
    /// is cut at its next key frame instead). ``MediaTime/indefinite`` (the default): a
    /// segment ends only when ``flushSegment()`` is called. Set before ``startWriting()``.
    public var preferredOutputSegmentInterval: MediaTime {
        get { state[\.segmentInterval] }
        set { state[\.segmentInterval] = newValue }
    }

    /// Where the segment boundaries are counted from, in source time (`initialSegmentStartTime`);
    /// not set (`.invalid`, the default): the session's start. Set before ``startWriting()``.
    public var initialSegmentStartTime: MediaTime {
        get { state[\.initialSegmentStart] }
        set { state[\.initialSegmentStart] = newValue }
    }

    /// Ends the segment in progress (`flushSegment()`): the next sample appended to the
    /// segments' track starts a new one (a picture is encoded as a key frame), and the
    /// segment before it is handed to the delegate once the encoder has given out all of
    /// it. For ``preferredOutputSegmentInterval`` ``MediaTime/indefinite`` only, as on Apple
    /// platforms; throws otherwise, or before ``startWriting()``.
    public func flushSegment() throws(SwiftRecordError) {
        let cuts = try state.withLock { s throws(SwiftRecordError) in
            guard isSegmented else {
                throw SwiftRecordError(.invalidState, operation: "flushSegment", message: "this writer writes \(outputURL.path); segments come from a writer made with AssetWriter(contentType:)")
            }
            guard s.status == .writing, let cuts = s.segmentCuts else {
                throw SwiftRecordError(.invalidState, operation: "flushSegment", message: "the writer is \(s.status); call startWriting() first")
            }
            guard !s.segmentInterval.isNumeric else {
                throw SwiftRecordError(.invalidState, operation: "flushSegment",
                                       message: "preferredOutputSegmentInterval is \(s.segmentInterval.seconds) s, so the writer cuts segments itself; flushSegment() is for an interval of .indefinite")
            }
            return cuts
        }
        cuts.requestFlush()
    }

    /// The segments' part of the pipeline's configuration (inside `startWriting()`'s lock),
    /// or nil for a file; throws for a set-up that cannot give segments.
    func segmentConfiguration(_ s: inout State) throws(SwiftRecordError) -> PipelineConfiguration.Segments? {
        guard isSegmented else {
            if s.delegate != nil {
                throw SwiftRecordError(.invalidState, operation: "startWriting",
                                       message: "a delegate receives segments only from a writer made with AssetWriter(contentType:); this one writes the file \(outputURL.path)")
            }
            return nil
        }
        guard fileType == .mp4 || fileType == .mov else {
            throw SwiftRecordError(.unsupported, operation: "startWriting",
                                   message: "segments are fragmented MPEG-4; a .\(fileType) writer cannot deliver them: use AssetWriter(contentType: .mp4)")
        }
        guard s.delegate != nil else {
            throw SwiftRecordError(.invalidState, operation: "startWriting",
                                   message: "a writer made with AssetWriter(contentType:) hands its segments to its delegate; set delegate before startWriting()")
        }
        guard let profile = s.profile else {
            throw SwiftRecordError(.invalidState, operation: "startWriting",
                                   message: "set outputFileTypeProfile (.mpeg4AppleHLS or .mpeg4CMAFCompliant) before startWriting()")
        }
        var interval: MediaTime?
        if s.segmentInterval.isNumeric {
            guard s.segmentInterval > .zero else {
                throw SwiftRecordError(.invalidArgument, operation: "startWriting",
                                       message: "preferredOutputSegmentInterval is \(s.segmentInterval.seconds) s; expected a positive time or .indefinite")
            }
            interval = s.segmentInterval
        }
        let track = s.inputs.firstIndex { $0.mediaType == .video } ?? 0
        let cuts = SegmentCuts(interval: interval, origin: s.initialSegmentStart.isNumeric ? s.initialSegmentStart : nil)
        s.segmentCuts = cuts
        s.inputs[track].state.withLock { $0.segmentCuts = cuts }
        return PipelineConfiguration.Segments(cuts: cuts, track: track, profile: profile) { [weak self] data, type, report in
            guard let self, let delegate = self.delegate else { return }
            delegate.assetWriter(self, didOutputSegmentData: data, segmentType: type, segmentReport: report)
        }
    }
}

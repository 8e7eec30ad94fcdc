/// How a source that follows the screen's changes spent its grabs (damage-driven X11
/// capture): whole pictures, changed rectangles only, or nothing at all because nothing
/// changed. Reported in `CaptureStatistics.grabs` and `--stats-json`.
public struct GrabStatistics: Sendable, Codable, Equatable {
    /// Pictures the source delivered.
    public var pictures = 0
    /// Pictures for which the whole area was grabbed and converted.
    public var fullGrabs = 0
    /// Pictures for which only changed rectangles were grabbed and converted.
    public var partialGrabs = 0
    /// Pictures with no change at all: the previous picture again, no pixel touched.
    public var unchanged = 0
    /// Rectangles grabbed, summed over all pictures.
    public var rectangles = 0
    /// Pixels grabbed and converted, summed over all pictures.
    public var grabbedPixels = 0
    /// The pixels of one whole picture, to compare `grabbedPixels` with.
    public var picturePixels = 0

    public init() {}
}

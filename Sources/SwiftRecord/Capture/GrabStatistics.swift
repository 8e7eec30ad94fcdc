/// How a source that follows the screen's changes spent its grabs (damage-driven X11
/// capture): whole pictures, changed rectangles only, or nothing at all because nothing
/// changed; and, for a Wayland screen, pictures copied from the compositor's stream
/// (`fullGrabs`), repeated (`unchanged`) and letterboxed. Reported in
/// `CaptureStatistics.grabs` and `--stats-json`.
public struct GrabStatistics: Sendable, Codable, Equatable {
    /// Pictures the source delivered: `fullGrabs + partialGrabs + unchanged`.
    public var pictures = 0
    /// Pictures for which the whole area was grabbed and converted (`fullGrabs`), or only
    /// changed rectangles (`partialGrabs`); and pictures with no change at all
    /// (`unchanged`): the previous picture again, no pixel touched.
    public var fullGrabs = 0, partialGrabs = 0, unchanged = 0
    /// Rectangles, and pixels, grabbed and converted, summed over all pictures; and the
    /// pixels of one whole picture, to compare `grabbedPixels` with.
    public var rectangles = 0, grabbedPixels = 0, picturePixels = 0
    /// Pictures scaled to fit the recording's size with black bars, because the source's
    /// own picture changed size mid-recording (a Wayland monitor given another mode).
    public var letterboxed = 0

    public init() {}
}

/// How a screen source takes each picture: all of it every time, or only what changed since
/// the last (the X11 source from XDamage, the Wayland source from the compositor's damage
/// metadata), converting only that to yuv420p itself (``GrabStatistics`` counts both).
public enum ScreenCaptureMethod: String, Sendable, CaseIterable {
    /// Whole pictures every time (BGRA).
    case full
    /// Only the changed parts, grabbed and converted into yuv420p pictures.
    case damage
}

/// Width and height of a picture, parsed from and printed as `WxH`.
public struct VideoSize: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses `1280x720` (also `1280X720`); nil unless both are whole numbers ≥ 1.
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }

    public var description: String { "\(width)x\(height)" }
}

/// A rectangle of a picture or of the screen in pixels: `x,y` is its top-left corner.
public struct PixelRegion: Sendable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var size: VideoSize { VideoSize(width: width, height: height) }
    public var description: String { "\(x),\(y),\(width),\(height)" }

    /// This region with each odd side grown by one pixel (right or down, or left or up at
    /// the edge of `bounds`), or shrunk when `bounds` itself is that small: 4:2:0 video
    /// needs even sides.
    package func evenSided(within bounds: VideoSize) -> PixelRegion {
        func fix(_ start: Int, _ length: Int, _ limit: Int) -> (Int, Int) {
            guard length % 2 != 0 else { return (start, length) }
            if start + length + 1 <= limit { return (start, length + 1) }
            if start > 0 { return (start - 1, length + 1) }
            return (start, length - 1)
        }
        let (x, w) = fix(x, width, bounds.width)
        let (y, h) = fix(y, height, bounds.height)
        return PixelRegion(x: x, y: y, width: w, height: h)
    }
}

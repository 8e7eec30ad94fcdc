import Foundation

/// How a video track is shown (`AVAssetWriterInput.transform`): an affine transform with
/// the fields and operations of Apple's `CGAffineTransform` (a point (x, y) goes to
/// (a·x + c·y + tx, b·x + d·y + ty), y pointing down, so a positive angle turns clockwise on screen).
///
/// What can be written is a transform made of quarter turns and mirrors: the eight of
/// ``isQuarterTurnOrMirror`` (identity, 90°, 180°, 270°, and each after a horizontal
/// mirror: `init(scaleX: -1, y: 1)`, the vertical flip `init(scaleX: 1, y: -1)`, and the
/// two diagonal mirrors). MP4 and MOV carry it as the track's display matrix (`tkhd`);
/// Matroska and WebM have none, so there the writer turns and mirrors the pictures
/// themselves before encoding (a quarter turn then swaps the encoded width and height).
/// The translation (`tx`, `ty`) is not written: players place the picture by its
/// orientation alone, as ffmpeg reads Apple's files. Any other transform (an angle that is
/// not a quarter turn, a shear, a scale other than ±1) is refused by `startWriting()`.
///
/// `CGAffineTransform` is an alias of this type, so Apple's spellings compile:
/// `CGAffineTransform(scaleX: 1, y: -1)`, `CGAffineTransformMakeRotation(.pi / 2)`.
public struct VideoTransform: Sendable, Hashable, CustomStringConvertible {
    public var a: Double
    public var b: Double
    public var c: Double
    public var d: Double
    public var tx: Double
    public var ty: Double

    /// The transform with these six fields (`init(a:b:c:d:tx:ty:)`).
    public init(a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double) {
        (self.a, self.b, self.c, self.d, self.tx, self.ty) = (a, b, c, d, tx, ty)
    }

    /// A rotation by `angle` radians, clockwise on screen (`init(rotationAngle:)`).
    public init(rotationAngle angle: Double) {
        let (s, co) = (sin(angle), cos(angle))
        self.init(a: co, b: s, c: -s, d: co, tx: 0, ty: 0)
    }

    /// A scale (`init(scaleX:y:)`); -1 on one axis mirrors.
    public init(scaleX sx: Double, y sy: Double) {
        self.init(a: sx, b: 0, c: 0, d: sy, tx: 0, ty: 0)
    }

    /// A translation (`init(translationX:y:)`); not written (see the type's description).
    public init(translationX x: Double, y: Double) {
        self.init(a: 1, b: 0, c: 0, d: 1, tx: x, ty: y)
    }

    /// Foundation's `AffineTransform` as this type (the same six numbers).
    public init(_ t: AffineTransform) {
        self.init(a: Double(t.m11), b: Double(t.m12), c: Double(t.m21), d: Double(t.m22), tx: Double(t.tX), ty: Double(t.tY))
    }

    /// A quarter-turn rotation, clockwise on display; nil for other angles.
    public init?(rotationDegrees: Int) {
        let degrees = ((rotationDegrees % 360) + 360) % 360
        guard degrees % 90 == 0 else { return nil }
        self.init(quarterTurns: degrees / 90, mirrored: false)
    }

    /// `quarterTurns` clockwise quarter turns, after a horizontal mirror when `mirrored`.
    init(quarterTurns: Int, mirrored: Bool) {
        let table: [(Double, Double)] = [(1, 0), (0, 1), (-1, 0), (0, -1)]     // (cos, sin)
        let (co, s) = table[((quarterTurns % 4) + 4) % 4]
        self = mirrored ? VideoTransform(a: -co, b: -s, c: -s, d: co, tx: 0, ty: 0) : VideoTransform(a: co, b: s, c: -s, d: co, tx: 0, ty: 0)
    }

    /// No change (`CGAffineTransform.identity`).
    public static let identity = VideoTransform(a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0)
    /// A quarter turn clockwise.
    public static let rotated90 = VideoTransform(quarterTurns: 1, mirrored: false)
    /// Upside down.
    public static let rotated180 = VideoTransform(quarterTurns: 2, mirrored: false)
    /// A quarter turn anticlockwise.
    public static let rotated270 = VideoTransform(quarterTurns: 3, mirrored: false)

    /// Whether this is the identity (`isIdentity`).
    public var isIdentity: Bool { self == .identity }

    /// `self` followed by `t` (`concatenating(_:)`): a point goes through `self` first.
    public func concatenating(_ t: VideoTransform) -> VideoTransform {
        VideoTransform(a: a * t.a + b * t.c, b: a * t.b + b * t.d,
                       c: c * t.a + d * t.c, d: c * t.b + d * t.d,
                       tx: tx * t.a + ty * t.c + t.tx, ty: tx * t.b + ty * t.d + t.ty)
    }

    /// A scale, then this transform (`scaledBy(x:y:)`, `CGAffineTransformScale`).
    public func scaledBy(x: Double, y: Double) -> VideoTransform { VideoTransform(scaleX: x, y: y).concatenating(self) }
    /// A rotation by `angle` radians, then this transform (`rotated(by:)`, `CGAffineTransformRotate`).
    public func rotated(by angle: Double) -> VideoTransform { VideoTransform(rotationAngle: angle).concatenating(self) }
    /// A translation, then this transform (`translatedBy(x:y:)`, `CGAffineTransformTranslate`).
    public func translatedBy(x: Double, y: Double) -> VideoTransform { VideoTransform(translationX: x, y: y).concatenating(self) }

    /// The transform undoing this one (`inverted()`); the transform itself when it has no inverse.
    public func inverted() -> VideoTransform {
        let det = a * d - b * c
        guard det != 0, det.isFinite else { return self }
        return VideoTransform(a: d / det, b: -b / det, c: -c / det, d: a / det,
                              tx: (c * ty - d * tx) / det, ty: (b * tx - a * ty) / det)
    }

    /// The transform as (clockwise quarter turns, mirrored first), when it is one of the
    /// eight made of quarter turns and mirrors (the translation aside); nil otherwise.
    var quarterTurns: (turns: Int, mirrored: Bool)? {
        let values = [a, b, c, d]
        guard values.allSatisfy({ $0.isFinite }) else { return nil }
        let rounded = values.map { $0.rounded() }
        guard zip(values, rounded).allSatisfy({ abs($0 - $1) < 1e-9 }) else { return nil }
        let (ra, rb, rc, rd) = (rounded[0], rounded[1], rounded[2], rounded[3])
        guard abs(ra) + abs(rb) == 1, abs(rc) + abs(rd) == 1, ra * rc + rb * rd == 0 else { return nil }
        let mirrored = ra * rd - rb * rc < 0
        // Rotation: (cos, sin) = (a, b); after a mirror, (-a, -b).
        let (co, s) = mirrored ? (-ra, -rb) : (ra, rb)
        let turns = co == 1 ? 0 : (s == 1 ? 1 : (co == -1 ? 2 : 3))
        return (turns, mirrored)
    }

    /// Whether the transform is one of the eight made of quarter turns and mirrors (the
    /// translation aside): the ones a file can carry.
    public var isQuarterTurnOrMirror: Bool { quarterTurns != nil }

    /// The clockwise rotation in degrees (0, 90, 180 or 270) of a quarter-turn transform,
    /// after its mirror if it has one; 0 for other transforms.
    public var rotationDegrees: Int { (quarterTurns?.turns ?? 0) * 90 }

    /// Whether a quarter-turn transform mirrors the picture.
    public var isMirrored: Bool { quarterTurns?.mirrored ?? false }

    /// Whether the transform swaps width and height (a quarter turn, mirrored or not).
    var swapsSides: Bool { (quarterTurns?.turns ?? 0) % 2 == 1 }

    public var description: String { "[a: \(a), b: \(b), c: \(c), d: \(d), tx: \(tx), ty: \(ty)]" }
}

/// Apple's name for the transform type, so ported code compiles as it is.
public typealias CGAffineTransform = VideoTransform

/// `CGAffineTransformIdentity`.
public let CGAffineTransformIdentity = VideoTransform.identity
/// `CGAffineTransformMake(a, b, c, d, tx, ty)`.
public func CGAffineTransformMake(_ a: Double, _ b: Double, _ c: Double, _ d: Double, _ tx: Double, _ ty: Double) -> VideoTransform {
    VideoTransform(a: a, b: b, c: c, d: d, tx: tx, ty: ty)
}
/// `CGAffineTransformMakeScale(sx, sy)`.
public func CGAffineTransformMakeScale(_ sx: Double, _ sy: Double) -> VideoTransform { VideoTransform(scaleX: sx, y: sy) }
/// `CGAffineTransformMakeRotation(angle)`, radians clockwise on screen.
public func CGAffineTransformMakeRotation(_ angle: Double) -> VideoTransform { VideoTransform(rotationAngle: angle) }
/// `CGAffineTransformMakeTranslation(tx, ty)`.
public func CGAffineTransformMakeTranslation(_ tx: Double, _ ty: Double) -> VideoTransform { VideoTransform(translationX: tx, y: ty) }
/// `CGAffineTransformScale(t, sx, sy)`.
public func CGAffineTransformScale(_ t: VideoTransform, _ sx: Double, _ sy: Double) -> VideoTransform { t.scaledBy(x: sx, y: sy) }
/// `CGAffineTransformRotate(t, angle)`.
public func CGAffineTransformRotate(_ t: VideoTransform, _ angle: Double) -> VideoTransform { t.rotated(by: angle) }
/// `CGAffineTransformConcat(t1, t2)`: `t1` then `t2`.
public func CGAffineTransformConcat(_ t1: VideoTransform, _ t2: VideoTransform) -> VideoTransform { t1.concatenating(t2) }

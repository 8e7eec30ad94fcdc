/// One picture asked of a decoding video output (by `AssetImageGenerator`): the one shown
/// at `ticks`, or with a tolerance the first in `earliest...latest`, scaled to `size`.
struct PictureRequest {
    let ticks: Int64
    let earliest: Int64
    let latest: Int64
    let size: VideoSize?

    var isTolerant: Bool { earliest < ticks || latest > ticks }
}

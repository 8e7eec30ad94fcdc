import SwiftRecord
import SwiftRecordPipeWire

extension WaylandSource {
    /// The `damage` method's picture (see `StreamDamagePictures`), brought up to date from
    /// the buffer `look` lent, with the stream's lock released; nothing new from the stream:
    /// the same picture again.
    func updateDamaged(_ d: inout Delivered, _ look: Look, now: MediaTime) throws(SwiftRecordError) -> (CapturedFrame?, String?) {
        guard var damaged = d.damaged else { return (nil, nil) }
        // Taken out while in use, so its own reference to the picture is the only one here.
        d.damaged = nil
        defer { d.damaged = damaged }
        d.index += 1
        guard let held = look.held else {
            guard damaged.pictures.primed else {
                throw SwiftRecordError(.io, operation: "wayland", message: "the compositor sent no picture within \(WaylandSource.firstPictureWait / 1_000_000_000) s")
            }
            d.statistics.unchanged += 1
            return (CapturedFrame(pixelBuffer: damaged.pictures.picture, captureTime: now, index: d.index, isUnchanged: true), nil)
        }
        defer { frames.endBorrow() }
        look.whileBorrowed?()
        guard let (picture, outcome) = try damaged.update(held.pointer, format: look.format, region: copyRegion, damage: look.damage,
                                                          cursor: look.cursor, copier: &d.copier, statistics: &d.statistics) else {
            d.statistics.unchanged += 1
            return (CapturedFrame(pixelBuffer: damaged.pictures.picture, captureTime: now, index: d.index, isUnchanged: true), nil)
        }
        let announcement = d.copier.announcement(after: outcome, recordingSize: nativeSize)
        d.statistics.letterboxed = d.copier.letterboxed
        return (CapturedFrame(pixelBuffer: picture, captureTime: now, index: d.index), announcement)
    }
}

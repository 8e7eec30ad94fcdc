import SwiftRecord
import SwiftRecordPipeWire

extension WaylandSource {
    /// The `damage` method's picture (see `StreamDamagePictures`); nothing new from the
    /// stream: the same picture again.
    func updateDamaged(_ d: inout Delivered, _ s: inout StreamFrames.State, cursor: StreamCursor?,
                               now: MediaTime) throws(SwiftRecordError) -> (CapturedFrame?, String?) {
        guard var damaged = d.damaged else { return (nil, nil) }
        // Taken out while in use, so its own reference to the picture is the only one here.
        d.damaged = nil
        defer { d.damaged = damaged }
        let primed = damaged.pictures.primed
        let isNew = s.heldIsNew || (cursor != nil && s.cursorIsNew) || !primed
        d.index += 1
        guard let held = s.held, isNew else {
            guard primed else {
                throw SwiftRecordError(.io, operation: "wayland", message: "the compositor sent no picture within \(WaylandSource.firstPictureWait / 1_000_000_000) s")
            }
            d.statistics.unchanged += 1
            return (CapturedFrame(pixelBuffer: damaged.pictures.picture, captureTime: now, index: d.index, isUnchanged: true), nil)
        }
        let damage = s.heldIsNew || !primed ? s.takeDamage() : []
        s.heldIsNew = false
        s.cursorIsNew = false
        guard let (picture, outcome) = try damaged.update(held.pointer, format: s.format ?? format, region: copyRegion, damage: damage,
                                                          cursor: cursor, copier: &d.copier, statistics: &d.statistics) else {
            d.statistics.unchanged += 1
            return (CapturedFrame(pixelBuffer: damaged.pictures.picture, captureTime: now, index: d.index, isUnchanged: true), nil)
        }
        let announcement = d.copier.announcement(after: outcome, recordingSize: nativeSize)
        d.statistics.letterboxed = d.copier.letterboxed
        return (CapturedFrame(pixelBuffer: picture, captureTime: now, index: d.index), announcement)
    }
}

import SwiftRecord
import SwiftRecordPipeWire

extension WaylandSource {
    /// What a grab takes from the stream under its lock: news, and the held buffer lent
    /// (`borrowHeld`) when there is a picture to copy.
    struct Look {
        var stopping = false
        var held: HeldBuffer?
        var format: StreamFormat
        /// The cursor to draw (metadata cursor mode).
        var cursor: StreamCursor?
        /// The `damage` method: what changed since the last copy (nil: everything).
        var damage: [PixelRegion]? = []
        var whileBorrowed: (@Sendable () -> Void)?
    }

    /// Looks at the stream (its lock held only here, nothing copied): throws its failure;
    /// lends the held buffer when there is news for this grab (or no picture was made yet:
    /// not `primed`).
    func look(primed: Bool, damageMethod: Bool) throws(SwiftRecordError) -> Look {
        try frames.state.withLock { (s: inout sending StreamFrames.State) throws(SwiftRecordError) -> Look in
            if let failure = s.failure {
                throw SwiftRecordError(.io, operation: "wayland", message: failure)
            }
            var look = Look(format: s.format ?? format)
            if s.stopping { look.stopping = true; return look }
            look.cursor = configuration.showsCursor && configuration.drawsCursorFromMetadata ? s.cursor : nil
            guard s.held != nil, s.heldIsNew || (look.cursor != nil && s.cursorIsNew) || !primed else { return look }
            if damageMethod { look.damage = s.heldIsNew || !primed ? s.takeDamage() : [] }
            s.cursorIsNew = false
            look.held = s.borrowHeld()
            look.whileBorrowed = s.whileBorrowed
            return look
        }
    }
}

import Foundation
import SwiftRecord

extension ScreenCastPortal {
    /// A screen cast the desktop portal granted once (the user's pick in the chooser), kept
    /// open so that several sources can read it in turn without asking again: a picker's
    /// choice that a stream, then a screenshot, then another stream capture.
    ///
    /// Each source opens a PipeWire connection of its own to the granted stream
    /// (``WaylandSource/Configuration/grant``) and leaves the session open when it stops; the
    /// session ends with ``close()`` or when the grant goes.
    public final class Grant: Sendable {
        private let portal: Locked<ScreenCastPortal?>
        /// The granted stream (the first, when the portal granted several).
        public let stream: ScreenCastPortal.Stream
        /// The token that grants the same source next time without the chooser, if any.
        public let restoreToken: String?

        /// Runs the portal's conversation, the chooser included (on the calling thread: it
        /// waits for the user), and keeps the session open.
        public init(options: ScreenCastPortal.Options) throws(SwiftRecordError) {
            let portal = try ScreenCastPortal(options: options)
            (stream, restoreToken) = (portal.streams[0], portal.restoreToken)
            self.portal = Locked(portal)
        }

        deinit { close() }

        /// Ends the session: sources reading it see the cast closed.
        public func close() {
            portal.withLock { p in
                p?.close()
                p = nil
            }
        }

        /// A new PipeWire connection that sees the granted stream.
        func openRemote() throws(SwiftRecordError) -> Int32 {
            try portal.withLock { (p: inout sending ScreenCastPortal?) throws(SwiftRecordError) -> Int32 in
                guard let p else { throw Grant.closed }
                return try p.openPipeWireRemote().rawValue
            }
        }

        func checkOpen() throws(SwiftRecordError) {
            try portal.withLock { (p: inout sending ScreenCastPortal?) throws(SwiftRecordError) in
                guard let p else { throw Grant.closed }
                try p.checkOpen()
            }
        }

        static var closed: SwiftRecordError {
            SwiftRecordError(.invalidState, operation: "portal", message: "the granted screen cast was closed; ask the portal again (its chooser)")
        }
    }
}

/// A source's view of a grant: the grant's session, which the source does not end.
final class GrantedCast: ScreenCastSession {
    let grant: ScreenCastPortal.Grant
    init(_ grant: ScreenCastPortal.Grant) { self.grant = grant }
    var node: UInt32 { grant.stream.node }
    func checkOpen() throws(SwiftRecordError) { try grant.checkOpen() }
    func stop() {}
}

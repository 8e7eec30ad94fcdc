import Foundation
import SwiftRecord

/// A screen cast the Wayland source reads: its PipeWire node, a check that the compositor
/// or portal still holds it, and its end. Mutter's and the portal's sessions are both one.
protocol ScreenCastSession: AnyObject {
    var node: UInt32 { get }
    func checkOpen() throws(SwiftRecordError)
    func stop()
}

extension MutterScreenCast: ScreenCastSession {}

extension ScreenCastPortal: ScreenCastSession {
    var node: UInt32 { streams[0].node }
    func stop() { close() }
}

extension WaylandSource {
    /// The cast `configuration` asks for, opened: its session, the PipeWire connection the
    /// portal handed out (nil: PipeWire's own socket, as for Mutter), the interface used and
    /// the portal's new restore token.
    static func openCast(_ configuration: Configuration, deadline: Int64) throws(SwiftRecordError)
        -> (session: any ScreenCastSession, remote: Int32?, screenCast: Configuration.ScreenCast, restoreToken: String?) {
        if let grant = configuration.grant {
            return (GrantedCast(grant), try grant.openRemote(), .portal, grant.restoreToken)
        }
        let api = configuration.screenCast ?? (ScreenCastPortal.isAvailable() ? .portal : .mutter)
        switch api {
        case .mutter:
            let cursor: CursorMode = configuration.showsCursor ? (configuration.drawsCursorFromMetadata ? .metadata : .embedded) : .hidden
            let session = try MutterScreenCast(monitor: configuration.monitor, cursor: cursor, deadline: deadline)
            return (session, nil, .mutter, nil)
        case .portal:
            var options = configuration.portal
            options.cursor = configuration.showsCursor ? (configuration.drawsCursorFromMetadata ? .metadata : .embedded) : .hidden
            let portal = try ScreenCastPortal(options: options, stoppedBy: configuration.startStop)
            let remote = try portal.openPipeWireRemote()
            return (portal, remote.rawValue, .portal, portal.restoreToken)
        }
    }
}

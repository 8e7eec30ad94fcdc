import Foundation
import SwiftRecord
import SwiftRecordWayland

/// What a picker may offer (`SCContentSharingPickerConfiguration.allowedPickerModes`).
public struct SCContentSharingPickerMode: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let singleWindow = SCContentSharingPickerMode(rawValue: 1 << 0)
    public static let multipleWindows = SCContentSharingPickerMode(rawValue: 1 << 1)
    public static let singleApplication = SCContentSharingPickerMode(rawValue: 1 << 2)
    public static let multipleApplications = SCContentSharingPickerMode(rawValue: 1 << 3)
    public static let singleDisplay = SCContentSharingPickerMode(rawValue: 1 << 4)
}

/// What kind of content a picker presents, or a filter captures.
public enum SCShareableContentStyle: Int, Sendable {
    case none, window, display, application
}

/// How a picker presents itself.
public struct SCContentSharingPickerConfiguration: Sendable {
    /// Windows and displays: the desktop portal's chooser offers monitors and windows, not applications.
    public var allowedPickerModes: SCContentSharingPickerMode = [.singleWindow, .singleDisplay]
    /// Not honoured: the desktop's chooser lists what it lists.
    public var excludedWindowIDs: [Int] = []
    /// Not honoured: the desktop's chooser lists what it lists.
    public var excludedBundleIDs: [String] = []
    public var allowsChangingSelectedContent = true

    public init() {}
}

/// Hears what the user picked.
public protocol SCContentSharingPickerObserver: AnyObject {
    func contentSharingPicker(_ picker: SCContentSharingPicker, didCancelFor stream: SCStream?)
    func contentSharingPicker(_ picker: SCContentSharingPicker, didUpdateWith filter: SCContentFilter, for stream: SCStream?)
    func contentSharingPickerStartDidFailWithError(_ error: any Error)
}

/// The system's chooser of what to capture: on Linux the desktop portal's
/// (`org.freedesktop.portal.ScreenCast`, the desktop's own dialog: GNOME's, KDE's, …).
///
/// `present()` asks the portal in the background and returns at once; the observers hear
/// the pick as a filter (the portal's screen cast, kept open for the streams and screenshots
/// made from it until the filter goes), a cancel, or a failure: no portal on the session
/// bus fails with an error naming what the backend can do instead. Observers hear the
/// chooser's outcome on a thread of the picker's, and a refusal before it opens (an inactive
/// picker, one already open, applications asked for) at once on the caller's; one call at a
/// time, and they are held until removed.
public final class SCContentSharingPicker: Sendable {
    private struct State {
        var configuration = SCContentSharingPickerConfiguration()
        var observers: [PickerObserverHandle] = []
        var isActive = false
        var presenting = false
    }
    private let state = Locked(State())

    /// The one picker of the process.
    public static let shared = SCContentSharingPicker()

    init() {}

    /// What `present()` offers.
    public var defaultConfiguration: SCContentSharingPickerConfiguration {
        get { state.withLock { $0.configuration } }
        set { state.withLock { $0.configuration = newValue } }
    }

    /// Set it true before presenting (as on the Mac); `present()` of an inactive picker fails.
    public var isActive: Bool {
        get { state.withLock { $0.isActive } }
        set { state.withLock { $0.isActive = newValue } }
    }

    public func add(_ observer: any SCContentSharingPickerObserver) {
        state.withLock { $0.observers.append(PickerObserverHandle(object: observer)) }
    }

    public func remove(_ observer: any SCContentSharingPickerObserver) {
        state.withLock { $0.observers.removeAll { $0.object === observer } }
    }

    /// Shows the chooser with what `defaultConfiguration` allows.
    public func present() { present(for: nil, using: .none) }

    /// Shows the chooser for windows or displays only.
    public func present(using contentStyle: SCShareableContentStyle) { present(for: nil, using: contentStyle) }

    /// Shows the chooser; the observers' calls name `stream`.
    public func present(for stream: SCStream?, using contentStyle: SCShareableContentStyle) {
        let (refusal, modes) = state.withLock { s -> (SwiftRecordError?, SCContentSharingPickerMode) in
            guard s.isActive, !s.presenting else {
                return (SwiftRecordError(.invalidState, operation: "SCContentSharingPicker",
                                         message: s.isActive ? "the chooser is already open" : "the picker is not active: set isActive = true before present()"),
                        s.configuration.allowedPickerModes)
            }
            s.presenting = true
            return (nil, s.configuration.allowedPickerModes)
        }
        if let refusal { return notify { $0.contentSharingPickerStartDidFailWithError(refusal) } }
        let types: ScreenCastPortal.SourceTypes
        do {
            types = try SCContentSharingPicker.sourceTypes(contentStyle, modes)
        } catch {
            state.withLock { $0.presenting = false }
            return notify { $0.contentSharingPickerStartDidFailWithError(error) }
        }
        Thread.detachNewThread { [self] in
            let outcome = Result<ScreenCastPortal.Grant, SwiftRecordError> { () throws(SwiftRecordError) in
                guard ScreenCastPortal.isAvailable() else { throw SCContentSharingPicker.noPortal() }
                return try ScreenCastPortal.Grant(options: ScreenCastPortal.Options(sourceTypes: types, cursor: .metadata, persists: false))
            }
            state.withLock { $0.presenting = false }
            switch outcome {
            case .success(let grant):
                let filter = SCContentFilter(content: .portal(grant))
                notify { $0.contentSharingPicker(self, didUpdateWith: filter, for: stream) }
            case .failure(let error) where error.kind == .cancelled:
                notify { $0.contentSharingPicker(self, didCancelFor: stream) }
            case .failure(let error):
                notify { $0.contentSharingPickerStartDidFailWithError(error) }
            }
        }
    }

    private func notify(_ call: (any SCContentSharingPickerObserver) -> Void) {
        for o in state.withLock({ $0.observers }) { call(o.object) }
    }

    /// The portal's source types for a style or the allowed modes.
    static func sourceTypes(_ style: SCShareableContentStyle, _ modes: SCContentSharingPickerMode) throws(SwiftRecordError) -> ScreenCastPortal.SourceTypes {
        var types: ScreenCastPortal.SourceTypes = []
        switch style {
        case .window: types = .window
        case .display: types = .monitor
        case .application: break
        case .none:
            if !modes.isDisjoint(with: [.singleWindow, .multipleWindows]) { types.insert(.window) }
            if modes.contains(.singleDisplay) { types.insert(.monitor) }
        }
        guard !types.isEmpty else {
            throw SwiftRecordError(.unsupported, operation: "SCContentSharingPicker",
                                   message: "the desktop portal's chooser offers monitors and windows, not applications: present(using: .window) or .display")
        }
        return types
    }

    /// No portal answers: what each backend can do without it.
    static func noPortal() -> SwiftRecordError {
        let wayland = (try? SCShareableContent.displayServer(environment: ProcessInfo.processInfo.environment)) == .wayland
        let instead = wayland
            ? "the Wayland backend captures a window only through the portal; it can capture a display of GNOME's Mutter without it: SCShareableContent.current's displays with SCContentFilter(display:excludingWindows: [])"
            : "the X11 backend needs no chooser: SCShareableContent.current lists the displays and windows for SCContentFilter"
        return SwiftRecordError(.unsupported, operation: "SCContentSharingPicker",
                                message: "no desktop portal with screen casting answers on the session bus (install xdg-desktop-portal and the desktop's backend: -gnome, -kde or -wlr); \(instead)")
    }
}

import Foundation

/// A metadata item's identifier (`AVMetadataIdentifier`): the common title and creation
/// date are written; other identifiers go by their raw value as the container's key.
public struct AVMetadataIdentifier: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The title (`commonIdentifierTitle`): a track's name in players and editors.
    public static let commonIdentifierTitle = AVMetadataIdentifier(rawValue: "common/title")
    /// When it was made (`commonIdentifierCreationDate`), an ISO 8601 string.
    public static let commonIdentifierCreationDate = AVMetadataIdentifier(rawValue: "common/creationDate")
}

/// One tag (`AVMetadataItem`): an identifier and a value (a string, or what describes itself as one).
public class AVMetadataItem {
    public internal(set) var identifier: AVMetadataIdentifier?
    public internal(set) var value: (any NSCopying & NSObjectProtocol)?
    init() {}
    /// The value as text (`stringValue`).
    public var stringValue: String? {
        switch value {
        case let s as NSString: s as String
        case let n as NSNumber: n.stringValue
        case let d as NSDate: ISO8601DateFormatter().string(from: d as Date)
        default: value.map { $0.description }
        }
    }
}

/// A tag being made (`AVMutableMetadataItem`).
public final class AVMutableMetadataItem: AVMetadataItem {
    public override init() { super.init() }
    public override var identifier: AVMetadataIdentifier? {
        get { super.identifier }
        set { super.identifier = newValue }
    }
    public override var value: (any NSCopying & NSObjectProtocol)? {
        get { super.value }
        set { super.value = newValue }
    }
}

extension AssetMetadata {
    /// The tags as `AssetMetadata`: the title, the creation date, others by their identifier.
    init(_ items: [AVMetadataItem]) {
        self.init()
        for item in items {
            guard let identifier = item.identifier, let text = item.stringValue else { continue }
            switch identifier {
            case .commonIdentifierTitle: title = text
            case .commonIdentifierCreationDate: creationDate = ISO8601DateFormatter().date(from: text)
            default: custom[identifier.rawValue.split(separator: "/").last.map(String.init) ?? identifier.rawValue] = text
            }
        }
    }

    /// The tags as items, to hand back.
    var items: [AVMetadataItem] {
        var items: [AVMetadataItem] = []
        func add(_ identifier: AVMetadataIdentifier, _ value: String) {
            let item = AVMutableMetadataItem()
            item.identifier = identifier
            item.value = value as NSString
            items.append(item)
        }
        if let title { add(.commonIdentifierTitle, title) }
        if let creationDate { add(.commonIdentifierCreationDate, ISO8601DateFormatter().string(from: creationDate)) }
        for (key, value) in custom.sorted(by: { $0.key < $1.key }) { add(AVMetadataIdentifier(rawValue: key), value) }
        return items
    }
}

// AVFoundation's writer as Apple spells it, a thin layer over SwiftRecord's writer (the
// primary API). `import AVFoundation` brings Foundation, Core Media and Core Video too,
// as Apple's does; PortingFromAVFoundation.md lists every name and what differs.
@_exported import CoreMedia
@_exported import CoreVideo
@_exported import Foundation
import Logging

/// A container type (`AVFileType`: `.mp4`, `.mov`; also `.mkv`, `.webm` here).
public typealias AVFileType = FileType
/// A kind of media (`AVMediaType`: `.video`, `.audio`).
public typealias AVMediaType = MediaType

/// The layer's messages: what a `Bool`-returning call refused, and why.
let log = Logger(label: "swift-record.avfoundation")

/// Says in the log why a call returning `false` refused, the first few times and then
/// now and then, so a loop of refused appends does not flood it.
struct RefusalReporter {
    private(set) var count = 0

    mutating func report(_ what: String, _ error: SwiftRecordError) {
        count += 1
        guard count <= 3 || count.isMultiple(of: 100) else { return }
        let times = count > 1 ? " (refusal \(count))" : ""
        log.warning("\(what) returned false\(times): \(error.message)")
    }
}

// The lock and the monotonic clock live in SwiftRecordBase, which needs neither FFmpeg nor
// Foundation (the broadcast sender's library links it alone); SwiftRecord's users see them
// as SwiftRecord's own.
@_exported import SwiftRecordBase

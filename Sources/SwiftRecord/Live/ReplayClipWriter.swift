import Foundation

/// Writes a replay buffer's packets to a new file: the file rule of every output
/// (`OutputFile`: created exclusively, never replacing anything), the streams described
/// from the encoders' parameters, the packets as they are (no re-encode).
enum ReplayClipWriter {
    /// `packets` describe the clip; `data(i)` gives the bytes of the `i`-th.
    static func write(_ packets: [EncodedPacket], streams: [StreamParameters], to url: URL,
                      data: (Int) throws(SwiftRecordError) -> [UInt8]) throws(SwiftRecordError) {
        guard let fileType = FileType(pathExtension: url.pathExtension) else {
            throw SwiftRecordError(.unsupported, operation: "ReplayBuffer.save",
                                   message: "cannot tell a container for these codecs from '\(url.lastPathComponent)'; expected .mp4, .mov or .mkv")
        }
        let file = try OutputFile(url.path, what: "ReplayBuffer.save", overwrite: false, howToReplace: "choose a new name")
        try file.createEmpty()
        let muxer: Muxer
        do {
            muxer = try Muxer(url: file.ioPath, fileType: fileType, displayURL: file.writingPath)
        } catch {
            file.discard()
            throw error
        }
        do {
            for stream in streams { try stream.addStream(to: muxer.context, priming: false) }
            try muxer.writeHeader(metadata: ["title": "swift-record replay"],
                                  options: fileType == .mp4 || fileType == .mov ? ["movflags": "+faststart"] : [:])
            // One packet for them all: the muxer takes each one's data as it is written.
            let packet = try Packet()
            defer { withExtendedLifetime(packet) {} }
            for (i, p) in packets.enumerated() {
                try p.withData(try data(i)).copy(into: packet)
                try muxer.write(packet.pointer, stream: Int32(p.track), from: p.timeBase)
            }
            try muxer.finish()
            try file.commit()
        } catch {
            muxer.abandon()
            file.discard()
            throw error
        }
    }
}

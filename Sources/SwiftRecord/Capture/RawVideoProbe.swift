/// Finding what a raw video input holds before any frame is read: the Y4M header and
/// every frame header of a file, or the declared size and layout against the length.
extension RawVideoFileSource {
    /// What the input holds: a Y4M header's say, or the raw frames `configuration`
    /// declares, checked against the input's length. Throws, naming what is wrong, before
    /// any frame is read.
    static func probe(_ stream: RawInputStream, configuration: Configuration) throws(SwiftRecordError) -> RawVideoStreamInfo {
        let display = stream.name
        let start = try stream.peek(Y4MStreamHeader.signature.count + 1)
        if Y4MStreamHeader.hasSignature(start) {
            return try probeY4M(stream, name: display, configuration: configuration)
        }
        if configuration.path.lowercased().hasSuffix(".y4m") {
            throw SwiftRecordError(.invalidData, operation: display, message: start.isEmpty
                                   ? "is empty; expected a YUV4MPEG2 stream"
                                   : "is not a YUV4MPEG2 stream: it does not start with 'YUV4MPEG2 ' (found '\(printable(start))'); for raw frames give the file another extension and pass --size and --pix-fmt")
        }
        return try probeRaw(stream, name: display, configuration: configuration, empty: start.isEmpty)
    }

    static func printable(_ bytes: [UInt8]) -> String {
        String(bytes.prefix(12).map { (0x20..<0x7f).contains($0) ? Character(UnicodeScalar($0)) : "." })
    }

    static func probeRaw(_ stream: RawInputStream, name: String, configuration: Configuration, empty: Bool) throws(SwiftRecordError) -> RawVideoStreamInfo {
        guard let size = configuration.size else {
            throw SwiftRecordError(.invalidArgument, operation: name,
                                   message: "raw video needs --size WxH (and --pix-fmt unless it is yuv420p): a raw file does not say its picture size; only .y4m files carry one")
        }
        let format = configuration.pixelFormat ?? .yuv420p
        guard let frameBytes = format.frameSize(width: size.width, height: size.height) else {
            throw SwiftRecordError(.invalidArgument, operation: name, message: "size \(size) is out of range for \(format)")
        }
        var info = RawVideoStreamInfo(container: .raw, size: size, pixelFormat: format, frameRate: defaultFrameRate,
                                      frameRateOrigin: "default", frameBytes: frameBytes, frameCount: nil, trailingBytes: 0,
                                      byteCount: stream.length, y4mHeader: nil)
        let what = "\(size) \(format) frames of \(frameBytes) bytes"
        if let length = stream.length {
            if length == 0 {
                throw SwiftRecordError(.invalidData, operation: name, message: "is empty; expected \(what)")
            }
            let whole = Int(length / Int64(frameBytes)), left = Int(length % Int64(frameBytes))
            if whole == 0 {
                throw SwiftRecordError(.invalidData, operation: name,
                                       message: "holds \(length) bytes, less than one \(size) \(format) frame (\(frameBytes) bytes): no frame to convert; check --size and --pix-fmt")
            }
            if left != 0 && !configuration.allowPartial {
                throw SwiftRecordError(.invalidData, operation: name,
                                       message: "\(length) bytes is not a whole number of \(what): \(whole) whole frame\(whole == 1 ? "" : "s") fit and \(left) bytes are left over; check --size and --pix-fmt, or pass --allow-partial to convert the \(whole) whole frame\(whole == 1 ? "" : "s")")
            }
            info.frameCount = whole
            info.trailingBytes = left
        } else if empty {
            throw SwiftRecordError(.invalidData, operation: name, message: "is empty; expected \(what)")
        }
        return info
    }

    static func probeY4M(_ stream: RawInputStream, name: String, configuration: Configuration) throws(SwiftRecordError) -> RawVideoStreamInfo {
        let (line, terminated) = try stream.readLine(maximum: Y4MStreamHeader.maximumLineLength)
        guard terminated else {
            let why = line.count >= Y4MStreamHeader.maximumLineLength
                ? "is longer than \(Y4MStreamHeader.maximumLineLength) bytes"
                : "is truncated: the input ends after \(line.count) bytes, before the end of the header line"
            throw SwiftRecordError(.invalidData, operation: "\(name): YUV4MPEG2 header", message: "the header line \(why)")
        }
        let header: Y4MStreamHeader
        do {
            header = try Y4MStreamHeader.parse(line: line, length: line.count + 1)
        } catch {
            throw SwiftRecordError(error.kind, operation: "\(name): \(error.operation)", message: error.message)
        }
        let size = VideoSize(width: header.width, height: header.height)
        guard let frameBytes = header.pixelFormat.frameSize(width: header.width, height: header.height) else {
            throw SwiftRecordError(.invalidData, operation: "\(name): YUV4MPEG2 header", message: "size \(size) is out of range")
        }
        var info = RawVideoStreamInfo(container: .y4m, size: size, pixelFormat: header.pixelFormat,
                                      frameRate: header.frameRate ?? defaultFrameRate, frameRateOrigin: header.frameRate == nil ? "default" : "header",
                                      frameBytes: frameBytes, frameCount: nil, trailingBytes: 0, byteCount: stream.length, y4mHeader: header)
        if let length = stream.length {
            let (count, trailing) = try scanFrames(stream, name: name, from: Int64(header.length), length: length, frameBytes: frameBytes)
            let what = "\(size) \(header.pixelFormat) frames (\(frameBytes) bytes each after its FRAME line)"
            if count == 0 && trailing == 0 {
                throw SwiftRecordError(.invalidData, operation: name, message: "has a YUV4MPEG2 header but no frames")
            }
            if count == 0 {
                throw SwiftRecordError(.invalidData, operation: name,
                                       message: "holds no whole frame: \(trailing) bytes after the header, less than one of its \(what)")
            }
            if trailing != 0 && !configuration.allowPartial {
                throw SwiftRecordError(.invalidData, operation: name,
                                       message: "ends inside a frame: \(count) whole \(what) and \(trailing) bytes left over; pass --allow-partial to convert the \(count) whole frame\(count == 1 ? "" : "s")")
            }
            info.frameCount = count
            info.trailingBytes = trailing
        }
        return info
    }

    /// Visits every FRAME line of a Y4M file: counts whole frames and measures an incomplete tail.
    static func scanFrames(_ stream: RawInputStream, name: String, from start: Int64, length: Int64,
                                   frameBytes: Int) throws(SwiftRecordError) -> (Int, Int) {
        var offset = start
        var count = 0
        while offset < length {
            let head = try stream.bytes(at: offset, count: 6)
            let headerLength: Int
            if head.count == 6 && head.starts(with: Y4MStreamHeader.frameSignature) && head[5] == UInt8(ascii: "\n") {
                headerLength = 6
            } else if head.count == 6 && head.starts(with: Y4MStreamHeader.frameSignature) && head[5] == UInt8(ascii: " ") {
                let line = try stream.bytes(at: offset, count: Y4MStreamHeader.maximumLineLength)
                guard let nl = line.firstIndex(of: UInt8(ascii: "\n")) else {
                    if line.count < Y4MStreamHeader.maximumLineLength { return (count, Int(length - offset)) }
                    throw SwiftRecordError(.invalidData, operation: name,
                                           message: "frame \(count + 1) at byte \(offset): the FRAME line is longer than \(Y4MStreamHeader.maximumLineLength) bytes")
                }
                headerLength = nl + 1
            } else if head.count < 6 && Y4MStreamHeader.frameSignature.starts(with: head.prefix(5)) {
                return (count, Int(length - offset))
            } else {
                throw SwiftRecordError(.invalidData, operation: name,
                                       message: "frame \(count + 1) at byte \(offset): expected a FRAME line, found '\(printable(head))'; the header's size or colour space may not match the data")
            }
            if offset + Int64(headerLength) + Int64(frameBytes) > length {
                return (count, Int(length - offset))
            }
            offset += Int64(headerLength) + Int64(frameBytes)
            count += 1
        }
        return (count, 0)
    }

}

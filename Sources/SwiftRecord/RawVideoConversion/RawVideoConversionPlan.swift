import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Settling a conversion before anything is written: what the input holds against the
/// options, the codec and pixel format that keep what must be kept, the sizes after crop,
/// scale, rotation and padding, and the output's name and container.
extension RawVideoConverter {
    /// The settled conversion: what was found in the input and what will be written.
    public struct Plan: Sendable {
        public let input: RawVideoStreamInfo
        public let outputPath: String
        public let fileType: FileType
        /// The encoder's settings: codec, encoded size and pixel format, rate control.
        public let settings: VideoSettings
        /// The picture's size after crop, scale and rotation, before padding to even sides.
        public let pictureSize: VideoSize
        /// Display rotation written as metadata (identity unless `rotationInMetadataOnly`).
        public let displayTransform: VideoTransform
        /// Whether frames go through a crop / scale / format / rotation step (else they
        /// reach the encoder in the buffers they were read into).
        public let transformsFrames: Bool
        /// Sentences worth telling the user: defaults taken, options ignored, padding.
        public let notes: [String]

        /// True when the picture was padded to the encoded size.
        public var isPadded: Bool { pictureSize.width != settings.width || pictureSize.height != settings.height }
    }

    static func makePlan(options: Options, info: RawVideoStreamInfo) throws(SwiftRecordError) -> (Plan, FrameTransform?) {
        var notes: [String] = []
        let y4m = info.y4mHeader
        if let h = y4m {
            if let size = options.size, size != info.size {
                notes.append("--size \(size) is ignored: the YUV4MPEG2 header says \(info.size)")
            }
            if let f = options.pixelFormat, f != info.pixelFormat {
                notes.append("--pix-fmt \(f) is ignored: the YUV4MPEG2 header says C\(h.colorSpace) (\(info.pixelFormat))")
            }
            if let fps = options.frameRate, let rate = h.frameRate, fps != rate {
                notes.append("--fps \(fps) replaces the header's rate \(rate)")
            }
            if h.interlacing == .topFieldFirst || h.interlacing == .bottomFieldFirst || h.interlacing == .mixed {
                notes.append("the input is interlaced (\(h.interlacing.rawValue)); its frames are encoded as progressive pictures")
            }
        }
        if info.frameRateOrigin == "default" {
            notes.append("no frame rate given; using \(info.frameRate) fps (pass --fps)")
        }

        let inputFormat = info.pixelFormat.pixelFormat
        // Crop, then scale, then rotate: the picture's size at each step.
        let cropped = options.crop?.size ?? info.size
        if let crop = options.crop {
            try FrameTransform.validate(crop: crop, in: info.size, format: inputFormat)
        }
        let pixelRotation = options.rotationInMetadataOnly ? 0 : options.rotation
        let quarter = pixelRotation == 90 || pixelRotation == 270
        func turned(_ s: VideoSize) -> VideoSize { quarter ? VideoSize(width: s.height, height: s.width) : s }
        let picture = options.scale ?? turned(cropped)
        let scaledBeforeRotation = turned(picture)

        // Codec and the pixel format the encoder gets.
        var codec = options.codec ?? .h264
        let encoderFormat: PixelFormat
        let rateControl: RateControl
        let keepSamples = options.lossless || codec == .ffv1
        if keepSamples {
            if inputFormat.isRGB {
                if let c = options.codec, c != .ffv1 {
                    throw SwiftRecordError(.unsupported, operation: "lossless",
                                           message: "\(info.pixelFormat) input is kept exactly only by FFV1 (in .mkv); \(c) would convert it to YUV. Drop --codec or use --codec ffv1")
                }
                codec = .ffv1
                encoderFormat = inputFormat == .rgba ? .bgra : (inputFormat == .rgb24 ? .bgr0 : inputFormat)
            } else {
                encoderFormat = inputFormat.planarEquivalent
                let (sx, sy) = encoderFormat.chromaShift
                let oddForChroma = (sx > 0 && picture.width % 2 != 0) || (sy > 0 && picture.height % 2 != 0)
                if oddForChroma && codec != .ffv1 {
                    if options.codec != nil {
                        throw SwiftRecordError(.unsupported, operation: "lossless",
                                               message: "\(picture) \(encoderFormat) has an odd side, which \(codec) cannot encode without padding; use --crop to an even size, or FFV1 (--codec ffv1, .mkv)")
                    }
                    codec = .ffv1
                    notes.append("the \(picture) picture has an odd side, which H.264 \(encoderFormat) cannot hold exactly: using FFV1 in Matroska")
                }
                if quarter && sx != sy {
                    throw SwiftRecordError(.unsupported, operation: "lossless",
                                           message: "turning \(encoderFormat) pictures by \(pixelRotation)° would resample their chroma, so it cannot be lossless; use --rotate-metadata")
                }
                if codec == .av1 {
                    throw SwiftRecordError(.unsupported, operation: "lossless",
                                           message: "the AV1 encoder has no lossless mode here; use h264 (the default), hevc, vp9 or ffv1")
                }
            }
            rateControl = codec == .ffv1 ? .encoderDefault : .constantQuantizer(0)
            if options.lossless {
                notes.append(codec == .ffv1 ? "lossless: FFV1 in \(encoderFormat)" : "lossless: \(codec) at qp 0 in \(encoderFormat)")
            }
        } else {
            encoderFormat = .yuv420p
            rateControl = options.rateControl
        }

        // 4:2:0 and 4:2:2 encoders (FFV1 aside) need even sides: pad by repeating the last column / row.
        let (sx, sy) = codec == .ffv1 ? (0, 0) : encoderFormat.chromaShift
        let encoded = VideoSize(width: sx > 0 ? (picture.width + 1) & ~1 : picture.width,
                                height: sy > 0 ? (picture.height + 1) & ~1 : picture.height)
        if encoded != picture {
            notes.append("\(picture) has an odd side; encoding \(encoded) by repeating the last \(encoded.width != picture.width && encoded.height != picture.height ? "column and row" : (encoded.width != picture.width ? "column" : "row")) (use --crop to cut instead)")
        }

        // Output name and container.
        let outputPath: String
        if let o = options.output {
            outputPath = o
        } else {
            guard options.input != "-" else {
                throw SwiftRecordError(.invalidArgument, operation: "output",
                                       message: "reading standard input: name the output file with -o")
            }
            outputPath = WriterJob.replacingExtension(of: options.input, with: codec == .ffv1 ? "mkv" : "mp4")
        }
        let outputURL = URL(fileURLWithPath: outputPath)
        guard let fileType = FileType(pathExtension: outputURL.pathExtension) else {
            throw SwiftRecordError(.invalidArgument, operation: "output",
                                   message: "'\(outputPath)' has no known container extension; expected .mp4, .mov, .mkv or .webm")
        }
        // Not chosen: the container's own codec (VP9 for .webm), as for every other input.
        if options.codec == nil, !keepSamples, !fileType.supports(codec) {
            codec = fileType.defaultVideoCodec
        }
        guard fileType.supports(codec) else {
            let fits = FileType.allCases.filter { $0.supports(codec) }.map { ".\($0)" }.joined(separator: " or ")
            throw SwiftRecordError(.unsupported, operation: "output",
                                   message: "a .\(fileType) file cannot carry \(codec)\(keepSamples && codec == .ffv1 ? " (which keeps this input exactly)" : ""); name the output \(fits)")
        }
        // The rule for written files (existing, device, symlink, same file as the input,
        // standard input included); the writer checks the output again when it starts.
        // Being the input is the graver fault, so it is told first.
        let inputIdentity = options.input == "-" ? FileIdentity(descriptor: STDIN_FILENO) : FileIdentity(path: options.input)
        let anyFile = try OutputFile(outputPath, what: "output", overwrite: true)
        try OutputFile.checkDistinct(outputs: [("output", anyFile)], inputs: inputIdentity.map { [("input", $0)] } ?? [])
        _ = try OutputFile(outputPath, what: "output", overwrite: options.overwrite)

        // YUV keeps its range (no conversion, honest tags): a Y4M header's XCOLORRANGE, else
        // limited, except gray, which FFmpeg writes full range. RGB becomes limited BT.709.
        let fullRange = inputFormat.isRGB ? false : (y4m?.fullRange ?? (inputFormat == .gray))
        let fps = info.frameRate
        var settings = VideoSettings(
            codec: codec, width: encoded.width, height: encoded.height, pixelFormat: encoderFormat,
            rateControl: rateControl,
            maxKeyFrameInterval: options.keyFrameInterval ?? max(1, Int((2 * fps.doubleValue).rounded())),
            expectedSourceFrameRate: fps, profile: nil, preset: options.preset,
            threads: options.threads.flatMap { $0 > 0 ? $0 : nil },
            colorProperties: ColorProperties(standard: .bt709, fullRange: fullRange),
            encoderOptions: options.encoderOptions)
        if let sar = y4m?.pixelAspectRatio {
            settings.pixelAspectRatio = quarter ? Rational(sar.denominator, sar.numerator) : sar
        }
        let transformsFrames = options.crop != nil || scaledBeforeRotation != cropped || pixelRotation != 0 || encoderFormat != inputFormat
        let transform = transformsFrames
            ? try FrameTransform(sourceSize: info.size, sourceFormat: inputFormat, crop: options.crop, scaledSize: scaledBeforeRotation,
                                 rotation: pixelRotation, destinationFormat: encoderFormat, destinationSize: encoded,
                                 color: settings.colorProperties)
            : nil
        let display = options.rotationInMetadataOnly ? (VideoTransform(rotationDegrees: options.rotation) ?? .identity) : .identity
        let plan = Plan(input: info, outputPath: outputPath, fileType: fileType, settings: settings, pictureSize: picture,
                        displayTransform: display, transformsFrames: transformsFrames, notes: notes)
        return (plan, transform)
    }
}

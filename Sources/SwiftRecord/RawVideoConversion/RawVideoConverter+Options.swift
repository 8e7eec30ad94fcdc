import Foundation

extension RawVideoConverter {
    /// What to convert and how.
    public struct Options: Sendable {
        /// A file, or `-` for standard input.
        public var input: String
        /// The output file; nil: the input's name with the container's extension, next to it.
        public var output: String?
        /// Picture size of raw input (Y4M says its own).
        public var size: VideoSize?
        /// Sample layout of raw input; nil: yuv420p (Y4M says its own).
        public var pixelFormat: RawPixelFormat?
        /// Frames per second; nil: the Y4M header's, else 25.
        public var frameRate: Rational?
        /// nil: H.264, or FFV1 when only FFV1 can keep the input exactly (`lossless` with RGB input).
        public var codec: VideoCodec?
        /// How the encoder spends bits; ignored with `lossless`.
        public var rateControl: RateControl
        /// Encoder preset (x264's names).
        public var preset: String?
        /// Largest key-frame interval in frames; nil: two seconds' worth.
        public var keyFrameInterval: Int?
        /// Encoder threads; nil or 0: the encoder chooses.
        public var threads: Int?
        /// Keep every sample exactly: H.264 at qp 0 in the input's chroma format, or FFV1 in Matroska.
        public var lossless: Bool
        /// Output picture size (after rotation).
        public var scale: VideoSize?
        /// The part of the input picture to keep.
        public var crop: CropRegion?
        /// Clockwise quarter turn: 0, 90, 180 or 270.
        public var rotation: Int
        /// Write the rotation as display-matrix metadata instead of turning the pixels.
        public var rotationInMetadataOnly: Bool
        /// Convert the whole frames of an input that ends inside a frame (the rest is skipped),
        /// and keep the output written so far when something fails.
        public var allowPartial: Bool
        /// Extra encoder options passed through as FFmpeg AVOptions.
        public var encoderOptions: [String: String]
        /// Convert at most this many frames (needed for a device such as /dev/zero).
        public var maximumFrames: Int?
        /// Replace an existing output file (once the new one is complete); otherwise an
        /// existing file is refused (`.fileAlreadyExists`).
        public var overwrite: Bool
        /// Sound from a WAV or raw PCM file, cut where the pictures end.
        public var audio: AudioOptions?

        public init(input: String, output: String? = nil, size: VideoSize? = nil, pixelFormat: RawPixelFormat? = nil,
                    frameRate: Rational? = nil, codec: VideoCodec? = nil, rateControl: RateControl = .averageBitRate(2_000_000),
                    preset: String? = "veryfast", keyFrameInterval: Int? = nil, threads: Int? = nil, lossless: Bool = false,
                    scale: VideoSize? = nil, crop: CropRegion? = nil, rotation: Int = 0, rotationInMetadataOnly: Bool = false,
                    allowPartial: Bool = false, encoderOptions: [String: String] = [:], maximumFrames: Int? = nil,
                    overwrite: Bool = false, audio: AudioOptions? = nil) {
            self.audio = audio
            self.maximumFrames = maximumFrames
            self.overwrite = overwrite
            self.input = input
            self.output = output
            self.size = size
            self.pixelFormat = pixelFormat
            self.frameRate = frameRate
            self.codec = codec
            self.rateControl = rateControl
            self.preset = preset
            self.keyFrameInterval = keyFrameInterval
            self.threads = threads
            self.lossless = lossless
            self.scale = scale
            self.crop = crop
            self.rotation = rotation
            self.rotationInMetadataOnly = rotationInMetadataOnly
            self.allowPartial = allowPartial
            self.encoderOptions = encoderOptions
        }
    }
}

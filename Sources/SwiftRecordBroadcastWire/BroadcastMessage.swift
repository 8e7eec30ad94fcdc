/// The messages a broadcast sender and the recording host exchange over their socket, as
/// pure values: `parse` reads one datagram and refuses anything not exactly as specified;
/// `encoded` writes one. Nothing here touches a descriptor or memory outside the bytes
/// given, so the parser is fuzzed on its own (`fuzz/BroadcastMessageFuzz.swift`).
///
/// Every message is one `SOCK_SEQPACKET` datagram: a 12-byte header (magic `SRB1`, the
/// protocol version, the message type, the body's length) and a body whose size the type
/// fixes (the hello's name and a sound chunk's samples are the only variable parts, each
/// bounded). Integers are little-endian.
package enum BroadcastMessage: Equatable, Sendable {
    /// Sender → host, first: who is sending and what (the host sizes the picture ring from it).
    case hello(Hello)
    /// Sender → host: picture buffer `index` holds the frame presented at `time` (nanoseconds
    /// on `CLOCK_MONOTONIC`).
    case frame(index: Int, time: Int64)
    /// Sender → host: interleaved signed 16-bit PCM at the hello's rate, presented at its `time`.
    case sound(Sound)
    /// Sender → host: the sender paused, resumed or finished its broadcast.
    case paused, resumed, finished
    /// Host → sender, once, with one memfd per buffer beside it (`SCM_RIGHTS`).
    case welcome(Welcome)
    /// Host → sender: buffer `index` is free again.
    case release(index: Int)
    /// Host → sender: refused, and why (the connection closes after it).
    case refused(reason: String)

    package struct Hello: Equatable, Sendable {
        package var pid: Int32
        package var width: Int
        package var height: Int
        package var frameRateNumerator: Int
        package var frameRateDenominator: Int
        package var sampleRate: Int
        package var channels: Int
        package var name: String
        package init(pid: Int32, width: Int, height: Int, frameRateNumerator: Int, frameRateDenominator: Int,
                     sampleRate: Int, channels: Int, name: String) {
            (self.pid, self.width, self.height) = (pid, width, height)
            (self.frameRateNumerator, self.frameRateDenominator) = (frameRateNumerator, frameRateDenominator)
            (self.sampleRate, self.channels, self.name) = (sampleRate, channels, name)
        }
    }

    /// Which of ReplayKit's two sound types a chunk is (`.audioApp`, `.audioMic`).
    package enum SoundKind: UInt8, Sendable, CaseIterable {
        case app = 1
        case microphone = 2
    }

    package struct Sound: Equatable, Sendable {
        package var kind: SoundKind
        package var time: Int64
        package var channels: Int
        /// `frames * channels * 2` bytes.
        package var samples: [UInt8]
        package var frames: Int { samples.count / max(1, channels * 2) }
        package init(kind: SoundKind, time: Int64, channels: Int, samples: [UInt8]) {
            (self.kind, self.time, self.channels, self.samples) = (kind, time, channels, samples)
        }
    }

    /// The ring's layout: `count` buffers of `size` bytes, each a yuv420p picture of the
    /// hello's size whose three planes start at `offsets` with rows `strides` apart.
    package struct Welcome: Equatable, Sendable {
        package var count: Int
        package var size: Int
        package var strides: [Int]
        package var offsets: [Int]
        package init(count: Int, size: Int, strides: [Int], offsets: [Int]) {
            (self.count, self.size, self.strides, self.offsets) = (count, size, strides, offsets)
        }
    }

    package static let magic: UInt32 = 0x3142_5253  // "SRB1"
    package static let version: UInt16 = 1
    package static let headerSize = 12
    /// Limits every parser check refers to.
    package static let maximumNameBytes = 64
    package static let maximumSide = 8192
    package static let maximumBuffers = 16
    package static let maximumSoundFrames = 9600
    package static let maximumChannels = 8
    package static let maximumReasonBytes = 512
    /// No datagram is larger (a 9600-frame chunk of 8 channels plus its header).
    package static let maximumMessageSize = headerSize + 16 + maximumSoundFrames * maximumChannels * 2

    enum Kind: UInt16 {
        case hello = 1, frame, sound, paused, resumed, finished
        case welcome = 16, release, refused
    }

    var kind: Kind {
        switch self {
        case .hello: .hello
        case .frame: .frame
        case .sound: .sound
        case .paused: .paused
        case .resumed: .resumed
        case .finished: .finished
        case .welcome: .welcome
        case .release: .release
        case .refused: .refused
        }
    }
}

/// A message that is not one: what was wrong, and what was expected.
package struct BroadcastProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

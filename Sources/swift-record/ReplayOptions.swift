import ArgumentParser
import Foundation
import SwiftRecord

/// `--replay-buffer`: keep the last N seconds in memory, save them on SIGUSR2 or `s` + Enter.
struct ReplayOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Keep the last T of the recording in memory (encoded, no second encode); SIGUSR2 or s + Enter saves it to NAME-replay-DATE-TIME.EXT beside the output, starting on a key frame.", valueName: "time"),
            transform: parsed(ValueParsing.duration))
    var replayBuffer: MediaTime?

    @Option(help: ArgumentHelp("Most memory the replay buffer may hold: 256M, 1G (default 512M); older seconds go first past it.", valueName: "bytes"),
            transform: parsed { text throws(SwiftRecordError) in try ValueParsing.byteSize(text, option: "--replay-memory") })
    var replayMemory: Int?

    func validate() throws {
        if let replayMemory, replayBuffer == nil {
            throw ValidationError("--replay-memory \(replayMemory) is given without --replay-buffer; it limits the replay buffer's memory, so give --replay-buffer T too (e.g. --replay-buffer 30s), or leave --replay-memory out")
        }
    }

    func makeBuffer() throws(SwiftRecordError) -> ReplayBuffer? {
        guard let replayBuffer else { return nil }
        return try ReplayBuffer(duration: replayBuffer, memoryLimit: replayMemory ?? 512_000_000)
    }
}

/// The replay clips one recording saves (SIGUSR2, `s` + Enter), each on a thread of its
/// own while the recording goes on. They are counted (`--stats-json`: `replaySaved`,
/// `replayFailed`): a clip asked for and not written makes the exit status 1, the
/// recording finished all the same. The recording's end waits for a save in progress,
/// so no clip is cut off by the process ending.
final class ReplaySaves: Sendable {
    struct Counts: Sendable {
        var saved = 0
        var failed = 0
        var inProgress = 0
    }
    private let buffer: ReplayBuffer
    private let output: String
    private let counts = Locked(Counts())

    /// Saves from `buffer` beside `output`; nil without a buffer.
    init?(_ buffer: ReplayBuffer?, besideOutput output: String) {
        guard let buffer else { return nil }
        self.buffer = buffer
        self.output = output
    }

    /// Saves what the buffer holds to NAME-replay-DATE-TIME.EXT beside the output (-2, -3,
    /// … after it when taken; nothing is replaced), and says where, or why not. `settle` runs
    /// first, on the save's own thread (the wait for a pause to be written out).
    func save(after settle: @escaping @Sendable () -> Void = {}) {
        counts.withLock { $0.inProgress += 1 }
        let (buffer, output, counts) = (buffer, output, counts)
        Thread.detachNewThread {
            settle()
            let saved = ReplaySaves.write(buffer, besideOutput: output)
            counts.withLockNotifying { c in
                c.inProgress -= 1
                if saved { c.saved += 1 } else { c.failed += 1 }
            }
        }
    }

    /// Waits for the saves in progress; the figures once they are done.
    func waitUntilDone() -> Counts {
        counts.wait { c in c.inProgress == 0 ? c : nil } ?? counts.withLock { $0 }
    }

    private static func write(_ buffer: ReplayBuffer, besideOutput output: String) -> Bool {
        let url = URL(fileURLWithPath: output)
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss"
        let stem = url.deletingPathExtension().path + "-replay-" + f.string(from: Date())
        let ext = url.pathExtension == "webm" ? "mkv" : url.pathExtension
        // Two saves in one second: the second gets -2, and so on (nothing is replaced).
        for attempt in 1...20 {
            let path = stem + (attempt == 1 ? "" : "-\(attempt)") + "." + ext
            do throws(SwiftRecordError) {
                let length = try buffer.save(to: URL(fileURLWithPath: path))
                note(String(format: "\nswift-record: saved the last %.1f s to %@", length.seconds, path))
                return true
            } catch where error.kind == .fileAlreadyExists {
                continue
            } catch {
                note("\nswift-record: replay not saved: \(error.userMessage)")
                return false
            }
        }
        note("\nswift-record: replay not saved: \(stem).\(ext) and 19 numbered names after it already exist")
        return false
    }
}

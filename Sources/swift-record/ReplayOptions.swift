import ArgumentParser
import Foundation
import SwiftRecord

/// `--replay-buffer`: keep the last N seconds in memory, save them on SIGUSR2 or `s` + Enter.
struct ReplayOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Keep the last T of the recording in memory (encoded, no second encode); SIGUSR2 or s + Enter saves it to NAME-replay-DATE-TIME.EXT beside the output, starting on a key frame.", valueName: "time"),
            transform: parsed(ValueParsing.duration))
    var replayBuffer: MediaTime?

    @Option(help: ArgumentHelp("Most memory the replay buffer may hold: 256M, 1G (default 512M); older seconds go first past it.", valueName: "bytes"),
            transform: { text in
                let units: [Character: Int] = ["k": 1_000, "K": 1_000, "m": 1_000_000, "M": 1_000_000, "g": 1_000_000_000, "G": 1_000_000_000]
                let unit = text.last.flatMap { units[$0] }
                guard let n = Int(unit == nil ? text : String(text.dropLast())), n > 0, n <= 64_000_000_000 / (unit ?? 1) else {
                    throw ValidationError("--replay-memory '\(text)' is not valid; expected a size in bytes such as 256M or 1G")
                }
                return n * (unit ?? 1)
            })
    var replayMemory: Int = 512_000_000

    func makeBuffer() throws(SwiftRecordError) -> ReplayBuffer? {
        guard let replayBuffer else { return nil }
        return try ReplayBuffer(duration: replayBuffer, memoryLimit: replayMemory)
    }

    /// What SIGUSR2 and `s` + Enter do: save `buffer` (if there is one) beside `output`.
    static func saver(_ buffer: ReplayBuffer?, besideOutput output: String) -> (@Sendable () -> Void)? {
        guard let buffer else { return nil }
        let action: @Sendable () -> Void = { save(buffer, besideOutput: output) }
        return action
    }

    /// Saves `buffer` beside `output` on a thread of its own (the recording goes on) and
    /// says where, or why not.
    static func save(_ buffer: ReplayBuffer, besideOutput output: String) {
        Thread.detachNewThread {
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
                    return
                } catch where error.kind == .fileAlreadyExists {
                    continue
                } catch {
                    note("\nswift-record: replay not saved: \(error.userMessage)")
                    return
                }
            }
        }
    }
}

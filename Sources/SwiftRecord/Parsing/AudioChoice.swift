/// What one `--audio SOURCE[,title=NAME][,volume=V]` asks for, parsed without opening
/// anything (the command line opens the source; `ValueParsing.audioChoice`, fuzzed).
package struct AudioChoice: Equatable, Sendable {
    package enum Kind: Equatable, Sendable {
        /// A PulseAudio server's default sink monitor when one is reachable and the
        /// pictures are live; otherwise none.
        case automatic
        case none
        /// A source by registry name, and a device for it (`pulse:DEVICE`).
        case source(String, device: String?)
    }
    package var kind: Kind
    /// The track's title (`,title=NAME`); nil for the source's own ("Desktop", "Microphone").
    package var title: String?
    /// `,volume=V` as given (checked when the recording is planned, with the other options).
    package var volume: String?
    // FAULT-INJECTION: `,skew=R`, this source's clock running off (as --simulate-audio-clock-skew
    // does for every source), for the tests of several sources drifting apart.
    package var clockSkew: Double?

    package static let automatic = AudioChoice(kind: .automatic, title: nil)

    package init(kind: Kind, title: String?) {
        (self.kind, self.title) = (kind, title)
    }

    /// `SOURCE[,title=NAME][,volume=V]`: options are the trailing `,key=value` parts whose key is known,
    /// so a device or file name may itself hold commas.
    package init(_ text: String) throws(SwiftRecordError) {
        var parts = AudioChoice.commaSeparated(text)
        var title: String?, skew: Double?, volume: String?
        while parts.count > 1, let last = parts.last, let eq = last.firstIndex(of: "=") {
            let key = String(last[..<eq]), value = String(last[last.index(after: eq)...])
            switch key {
            case "title":
                guard !value.isEmpty else { throw AudioChoice.invalid("--audio \(text): title= is empty; expected a name, e.g. --audio pulse:MIC,title=Microphone") }
                title = value
            case "volume":
                volume = value
            case "skew":
                guard let ratio = Double(value), abs(ratio) < 0.1 else { throw AudioChoice.invalid("--audio \(text): skew= expects a ratio such as 0.001") }
                skew = ratio
            default:
                break
            }
            guard key == "title" || key == "skew" || key == "volume" else { break }
            parts.removeLast()
        }
        // A known option that is not among the trailing ones: its value held a comma.
        if let key = parts.dropFirst().lazy.compactMap({ AudioChoice.optionKey(of: $0) }).first {
            throw AudioChoice.invalid("--audio \(text): the value of \(key)= holds a comma, which separates options; write a comma in a value as \\, (for example 'pulse:MIC,title=Left\\, Right', quoted for the shell)")
        }
        clockSkew = skew
        self.volume = volume
        let source = parts.joined(separator: ",")
        switch source {
        case "default", "": kind = .automatic
        case "none": kind = .none
        default:
            let split = source.split(separator: ":", maxSplits: 1).map(String.init)
            guard let name = split.first else { throw AudioChoice.invalid("--audio '' is empty") }
            kind = .source(name, device: split.count > 1 && !split[1].isEmpty ? split[1] : nil)
        }
        self.title = title
    }
}

extension AudioChoice {
    static func invalid(_ message: String) -> SwiftRecordError {
        SwiftRecordError(.invalidArgument, operation: "--audio", message: message)
    }

    static let optionKeys = ["title", "volume", "skew"]

    /// `key` when `part` is `key=VALUE` for an option `--audio` knows.
    package static func optionKey(of part: String) -> String? {
        guard let eq = part.firstIndex(of: "=") else { return nil }
        let key = String(part[..<eq])
        return optionKeys.contains(key) ? key : nil
    }

    /// `text` split at its commas, except those written `\,` (kept as commas); `\\` is a
    /// backslash.
    package static func commaSeparated(_ text: String) -> [String] {
        var parts = [""]
        var escaped = false
        for c in text {
            if escaped {
                if c != "," && c != "\\" { parts[parts.count - 1].append("\\") }
                parts[parts.count - 1].append(c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == "," {
                parts.append("")
            } else {
                parts[parts.count - 1].append(c)
            }
        }
        if escaped { parts[parts.count - 1].append("\\") }
        return parts
    }
}

extension ValueParsing {
    /// One `--audio` value (`AudioChoice`).
    package static func audioChoice(_ text: String) throws(SwiftRecordError) -> AudioChoice {
        try AudioChoice(text)
    }
}

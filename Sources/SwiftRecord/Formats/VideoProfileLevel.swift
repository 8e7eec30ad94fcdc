/// A codec profile and level, typed (`AVVideoProfileLevelKey`): `.h264(.high, level: .auto)`.
///
/// `VideoSettings.profile` stays a string, so settings pasted from Apple code work: it
/// takes x264/x265's names (`"high"`, `"main10"`), Apple's values
/// (`AVVideoProfileLevelH264HighAutoLevel`, i.e. `"H264_High_AutoLevel"`, `"H264_Main_3_1"`,
/// `"HEVC_Main10_AutoLevel"`) and this type's `profileString`. A profile the codec does
/// not have is refused at `startWriting()` with the accepted values listed, before the
/// encoder sees it.
public enum VideoProfileLevel: Sendable, Hashable, CustomStringConvertible {
    /// An H.264 profile and level.
    case h264(H264Profile, level: VideoLevel = .auto)
    /// An HEVC (H.265) profile and level.
    case hevc(HEVCProfile, level: VideoLevel = .auto)

    /// H.264 profiles, by x264's names.
    public enum H264Profile: String, Sendable, CaseIterable {
        /// Constrained baseline, as x264 writes it (Apple's Baseline and ConstrainedBaseline).
        case baseline
        /// Main.
        case main
        /// High: what players expect of HD video.
        case high
        /// High 10: 10-bit 4:2:0.
        case high10
        /// High 4:2:2: 4:2:2 chroma, 8 or 10 bits.
        case high422
        /// High 4:4:4 Predictive: 4:4:4 chroma and lossless coding.
        case high444
    }

    /// HEVC profiles, by x265's names.
    public enum HEVCProfile: String, Sendable, CaseIterable {
        /// Main: 8-bit 4:2:0.
        case main
        /// Main 10: 10-bit 4:2:0.
        case main10
        /// Main Still Picture.
        case mainStillPicture = "mainstillpicture"
        /// Main 4:2:2 10.
        case main422_10 = "main422-10"
        /// Main 4:4:4 (8-bit).
        case main444_8 = "main444-8"
    }

    /// The codec this profile belongs to.
    public var codec: VideoCodec {
        switch self {
        case .h264: return .h264
        case .hevc: return .hevc
        }
    }

    /// The level: `.auto` or a fixed one.
    public var level: VideoLevel {
        switch self {
        case .h264(_, let level), .hevc(_, let level): return level
        }
    }

    /// The encoder's name of the profile ("high", "main10").
    var encoderProfile: String {
        switch self {
        case .h264(let p, _): return p.rawValue
        case .hevc(let p, _): return p.rawValue
        }
    }

    /// The string form `VideoSettings.profile` holds: Apple's spelling where Apple has
    /// one (`H264_High_AutoLevel`, `H264_Main_3_1`), else the encoder's name and level.
    public var profileString: String {
        let apple: String?
        switch self {
        case .h264(let p, _):
            apple = [.baseline: "Baseline", .main: "Main", .high: "High"][p].map { "H264_\($0)" }
        case .hevc(let p, _):
            apple = [.main: "Main", .main10: "Main10"][p].map { "HEVC_\($0)" }
        }
        if let apple {
            switch level {
            case .auto: return "\(apple)_AutoLevel"
            case .level(let major, let minor): return "\(apple)_\(major)_\(minor)"
            }
        }
        switch level {
        case .auto: return encoderProfile
        case .level(let major, let minor): return "\(encoderProfile)@\(major).\(minor)"
        }
    }

    public var description: String { profileString }

    /// Reads a profile string for `codec` in any accepted spelling; throws, naming the
    /// accepted values, for one it does not know.
    public init(parsing text: String, codec: VideoCodec) throws(SwiftRecordError) {
        let bad = SwiftRecordError(.invalidArgument, operation: "VideoSettings.profile",
                                   message: "profile '\(text)' is not one \(codec) knows; expected one of "
                                   + VideoProfileLevel.acceptedValues(for: codec) + " (or Apple's AVVideoProfileLevel… constants)")
        var t = text.trimmingCharactersInSet()
        if t.hasPrefix("AVVideoProfileLevel") { t = String(t.dropFirst("AVVideoProfileLevel".count)) }  // a pasted constant's name
        if t.hasPrefix("kVTProfileLevel_") { t = String(t.dropFirst("kVTProfileLevel_".count)) }
        var profileName = t, level = VideoLevel.auto
        let parts = t.split(separator: "_", omittingEmptySubsequences: false).map(String.init)
        if parts.count >= 2, ["h264", "hevc"].contains(parts[0].lowercased()) {
            // Apple's form: H264_High_AutoLevel, H264_Main_3_1, HEVC_Main10_AutoLevel; or the
            // constant's name run together: H264HighAutoLevel, H264High41.
            guard parts[0].lowercased() == (codec == .h264 ? "h264" : codec == .hevc ? "hevc" : "") else { throw bad }
            profileName = parts[1]
            let rest = Array(parts.dropFirst(2))
            if rest == ["AutoLevel"] || rest.isEmpty {
                level = .auto
            } else if rest.count == 2, let major = Int(rest[0]), let minor = Int(rest[1]) {
                level = .level(major, minor)
            } else {
                throw bad
            }
        } else if let at = t.firstIndex(of: "@") {
            profileName = String(t[..<at])
            let l = t[t.index(after: at)...].split(separator: ".")
            guard l.count <= 2, let major = Int(l[0]), let minor = l.count == 2 ? Int(l[1]) : 0 else { throw bad }
            level = .level(major, minor)
        } else if let joined = VideoProfileLevel.splitJoinedConstant(t) {
            (profileName, level) = joined
        }
        let name = profileName.lowercased() == "constrainedbaseline" ? "baseline" : profileName.lowercased()
        guard level.isPlausible else { throw bad }
        switch codec {
        case .h264:
            guard let p = H264Profile(rawValue: name) else { throw bad }
            self = .h264(p, level: level)
        case .hevc:
            guard let p = HEVCProfile(rawValue: name) else { throw bad }
            self = .hevc(p, level: level)
        default:
            throw SwiftRecordError(.invalidArgument, operation: "VideoSettings.profile",
                                   message: "profile '\(text)' given for \(codec), which takes no profile; expected none (nil)")
        }
    }

    /// "H264HighAutoLevel", "H264High41" (Apple's constant names without the prefix).
    private static func splitJoinedConstant(_ t: String) -> (String, VideoLevel)? {
        let codecPrefix = ["H264", "HEVC"].first { t.hasPrefix($0) }
        guard let codecPrefix else { return nil }
        var body = String(t.dropFirst(codecPrefix.count))
        if body.hasSuffix("AutoLevel") {
            body.removeLast("AutoLevel".count)
            return (body, .auto)
        }
        let digits = body.reversed().prefix { $0.isASCIIDigit }
        guard digits.count == 2 else { return nil }
        let d = Array(digits.reversed())
        body.removeLast(2)
        return (body, .level(d[0].wholeNumberValue ?? 0, d[1].wholeNumberValue ?? 0))
    }

    static func acceptedValues(for codec: VideoCodec) -> String {
        switch codec {
        case .h264: return H264Profile.allCases.map(\.rawValue).joined(separator: ", ") + ", H264_High_AutoLevel, H264_Main_4_1"
        case .hevc: return HEVCProfile.allCases.map(\.rawValue).joined(separator: ", ") + ", HEVC_Main_AutoLevel"
        default: return "none"
        }
    }
}

/// A codec level: chosen by the encoder from size and rate (`.auto`), or fixed, e.g. `.level(4, 1)`.
public enum VideoLevel: Sendable, Hashable {
    /// Chosen by the encoder from the picture size and frame rate.
    case auto
    /// A fixed level, major and minor: `.level(4, 1)` is level 4.1.
    case level(Int, Int)

    /// Levels exist from 1 to 6.2.
    var isPlausible: Bool {
        if case .level(let major, let minor) = self { return (1...6).contains(major) && (0...9).contains(minor) }
        return true
    }

    /// The level as H.264's level_idc counts it: 4.1 is 41.
    var h264LevelIDC: Int32? {
        if case .level(let major, let minor) = self { return Int32(major * 10 + minor) }
        return nil
    }
}

extension VideoSettings {
    /// The typed form of `profile` (`AVVideoProfileLevelKey`): nil when no profile is set;
    /// setting it stores its `profileString`. A string this codec does not know reads as nil
    /// (and fails at `startWriting()` with the accepted values).
    public var profileLevel: VideoProfileLevel? {
        get { profile.flatMap { try? VideoProfileLevel(parsing: $0, codec: codec) } }
        set { profile = newValue?.profileString }
    }
}

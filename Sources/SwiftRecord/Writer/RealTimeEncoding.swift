extension VideoSettings {
    /// The encoder preset an input with `expectsMediaDataInRealTime` gets when its settings
    /// name none: x264's `veryfast` (mapped for HEVC, VP9 and AV1), which keeps up with
    /// 1080p at 30 fps on two cores. x264's own default, `medium`, takes 27–45 ms a 720p
    /// frame there, so a live source would lose frames; AVAssetWriter likewise picks a
    /// real-time-capable configuration for a real-time input. A preset in the settings
    /// always wins.
    public static let realTimeDefaultPreset = "veryfast"

    /// These settings as the encoder is opened for an input that does (or does not)
    /// expect media in real time.
    func resolved(realTime: Bool) -> VideoSettings {
        guard realTime, preset == nil else { return self }
        var settings = self
        settings.preset = VideoSettings.realTimeDefaultPreset
        return settings
    }
}

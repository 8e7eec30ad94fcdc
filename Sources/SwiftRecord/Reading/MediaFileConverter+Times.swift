extension MediaFileConverter {
    /// What the samples are interleaved by: decode time for compressed samples (their
    /// order), presentation time otherwise.
    static func orderTime(_ sample: MediaSample) -> MediaTime {
        if case .compressed(let c) = sample { return c.decodeTimeStamp }
        return sample.presentationTimeStamp
    }

    static func endTime(_ sample: MediaSample) -> MediaTime {
        switch sample {
        case .compressed(let c): return c.presentationTimeStamp + c.duration
        case .audio(let a): return a.presentationTimeStamp + a.duration
        case .video(let v): return v.presentationTimeStamp
        }
    }
}

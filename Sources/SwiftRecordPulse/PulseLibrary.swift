internal import CPulse
import SwiftRecord

/// libpulse, which is not linked into the program: with its dependencies (libpulsecommon,
/// libsndfile, libFLAC, libdbus, libsystemd, …) it is ten shared libraries that every run,
/// `--help` included, would otherwise load and relocate before `main`. CPulse's stubs call
/// through the functions `sr_pulse_load` looks up; this is called before anything else of
/// libpulse's (`PulseClient`, `PulseAudioSource`), so a missing library is an error naming
/// it, and a source other than PulseAudio never needs it.
enum PulseLibrary {
    static func load() throws(SwiftRecordError) {
        try SharedLibrary.require("libpulse.so.0", purpose: "which PulseAudio sound is recorded and played through (Debian's package libpulse0)",
                                  operation: "pulse", load: sr_pulse_load)
    }
}

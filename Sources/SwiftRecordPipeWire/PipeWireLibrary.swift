internal import CPipeWire
import SwiftRecord

/// libpipewire-0.3, which is not linked into the program (only Wayland screen casts and
/// PipeWire cameras need it): CPipeWire's stubs call through the functions
/// `sr_pipewire_load` looks up. `PipeWireStream.initialise()` calls this before anything else
/// of libpipewire's, so a missing library is an error naming it.
enum PipeWireLibrary {
    static func load() throws(SwiftRecordError) {
        try SharedLibrary.require("libpipewire-0.3.so.0", purpose: "which Wayland screen casts and PipeWire cameras are read through (Debian's package libpipewire-0.3-0)",
                                  operation: "pipewire", load: sr_pipewire_load)
    }
}

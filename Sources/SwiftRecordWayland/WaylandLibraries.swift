internal import CWayland
import SwiftRecord

/// libpipewire-0.3, which is not linked into the program (only Wayland screen casts and
/// PipeWire cameras need it): CWayland's stubs call through the functions
/// `sr_pipewire_load` looks up. `PipeWireStream.initialise()` calls this before anything else
/// of libpipewire's, so a missing library is an error naming it.
enum PipeWireLibrary {
    static func load() throws(SwiftRecordError) {
        try SharedLibrary.require("libpipewire-0.3.so.0", purpose: "which Wayland screen casts and PipeWire cameras are read through (Debian's package libpipewire-0.3-0)",
                                  operation: "pipewire", load: sr_pipewire_load)
    }
}

/// libsystemd (sd-bus), which is not linked into the program: with liblz4, libzstd and libcap
/// it would be loaded by every run; only the screen-cast portal and Mutter's D-Bus interfaces
/// need it. `DBusConnection.init` calls this first, so a missing library is an error naming it.
enum SDBusLibrary {
    static func load() throws(SwiftRecordError) {
        try SharedLibrary.require("libsystemd.so.0", purpose: "whose sd-bus the screen-cast portal and Mutter are reached through (Debian's package libsystemd0)",
                                  operation: "dbus", load: sr_sdbus_load)
    }
}

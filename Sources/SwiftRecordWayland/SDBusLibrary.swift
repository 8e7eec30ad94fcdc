internal import CSDBus
import SwiftRecord

/// libsystemd (sd-bus), which is not linked into the program: with liblz4, libzstd and libcap
/// it would be loaded by every run; only the screen-cast portal and Mutter's D-Bus interfaces
/// need it. `DBusConnection.init` calls this first, so a missing library is an error naming it.
/// (libpipewire's owner is `PipeWireLibrary`, in SwiftRecordPipeWire.)
enum SDBusLibrary {
    static func load() throws(SwiftRecordError) {
        try SharedLibrary.require("libsystemd.so.0", purpose: "whose sd-bus the screen-cast portal and Mutter are reached through (Debian's package libsystemd0)",
                                  operation: "dbus", load: sr_sdbus_load)
    }
}

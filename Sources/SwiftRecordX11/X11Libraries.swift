internal import CX11
import SwiftRecord

/// libXdamage, which is not linked into the program (libX11, libXext and libXfixes are:
/// libavutil loads them anyway): CX11's stubs call through the functions `sr_xdamage_load`
/// looks up. `DamageState.unavailability` calls this before anything else of libXdamage's,
/// so a missing library means grabbing the whole picture every frame, saying why.
enum XDamageLibrary {
    static func load() throws(SwiftRecordError) {
        try SharedLibrary.require("libXdamage.so.1", purpose: "which damage-driven X11 capture follows the screen's changes through (Debian's package libxdamage1)",
                                  operation: "x11", load: sr_xdamage_load)
    }
}

/// libXrandr, opened as libXdamage is (`XDamageLibrary`): `X11Source.monitors` calls this
/// first, so a missing library is an error naming it.
enum XRandRLibrary {
    static func load() throws(SwiftRecordError) {
        try SharedLibrary.require("libXrandr.so.2", purpose: "which X11 monitors are listed through (Debian's package libxrandr2)",
                                  operation: "monitor", load: sr_xrandr_load)
    }
}

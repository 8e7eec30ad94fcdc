// libpulse's asynchronous API for SwiftRecordPulse. Everything Swift needs imports as is
// (enums, structs, functions); this header is where a macro would be wrapped if one were
// needed, as Sources/CX11/shim.h does for Xlib.
#ifndef SWIFT_RECORD_CPULSE_SHIM_H
#define SWIFT_RECORD_CPULSE_SHIM_H

#include <pulse/pulseaudio.h>

/// Opens libpulse (it is not linked: pulse.c's stubs call through the functions looked up
/// here): NULL when loaded, else the dynamic loader's reason. Once per process; called by
/// PulseLibrary before any other libpulse function.
const char *sr_pulse_load(void);

/// PA_INVALID_INDEX is a cast expression Swift does not import.
static inline uint32_t sr_pa_invalid_index(void) { return PA_INVALID_INDEX; }

#endif

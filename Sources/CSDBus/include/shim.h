// sd-bus (libsystemd) for SwiftRecordWayland's D-Bus calls (the portal, Mutter's screen
// cast): the only place its macros are touched.
#ifndef SWIFT_RECORD_CSDBUS_SHIM_H
#define SWIFT_RECORD_CSDBUS_SHIM_H

#include <systemd/sd-bus.h>

/// Open libsystemd (not linked: sdbus.c's stubs call through the functions looked up here):
/// NULL when loaded, else the dynamic loader's reason. Once per process; called by
/// SDBusLibrary before any other function of its.
const char *sr_sdbus_load(void);

/// `sd_bus_error`'s initial value (SD_BUS_ERROR_NULL is a compound literal).
static inline sd_bus_error sr_sd_bus_error_null(void) { sd_bus_error e = SD_BUS_ERROR_NULL; return e; }

#endif

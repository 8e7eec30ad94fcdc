// Xlib, MIT-SHM, XFixes, XDamage and RandR for SwiftRecordX11. The only place X11 macros are
// touched: Swift cannot import function-like macros, so each one used is wrapped here.
#ifndef SWIFT_RECORD_CX11_SHIM_H
#define SWIFT_RECORD_CX11_SHIM_H

#include <sys/ipc.h>
#include <sys/shm.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/Xatom.h>
#include <X11/extensions/XShm.h>
#include <X11/extensions/Xfixes.h>
#include <X11/extensions/Xdamage.h>
#include <X11/extensions/Xrandr.h>

/// Open libXdamage and libXrandr (neither is linked: xdamage.c's and xrandr.c's stubs call
/// through the functions looked up here; libX11, libXext and libXfixes are, as FFmpeg's
/// libavutil loads them anyway): NULL when loaded, else the dynamic loader's reason. Once per
/// process; called by X11Libraries before any other function of theirs.
const char *sr_xdamage_load(void);
const char *sr_xrandr_load(void);

/// XDestroyImage is a macro calling the image's own destroy function.
static inline int sr_x_destroy_image(XImage *image) { return XDestroyImage(image); }

/// IPC_PRIVATE is a cast expression Swift does not import.
static inline key_t sr_ipc_private(void) { return IPC_PRIVATE; }

/// AllPlanes is a cast expression Swift does not import.
static inline unsigned long sr_all_planes(void) { return AllPlanes; }

/// XA_CARDINAL is a cast expression Swift does not import.
static inline Atom sr_xa_cardinal(void) { return XA_CARDINAL; }

#endif

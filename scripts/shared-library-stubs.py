#!/usr/bin/env python3
"""Writes the stubs through which libpulse, libpipewire-0.3, sd-bus, libXdamage and libXrandr are called (dlopen'd
when first needed, not linked: see Sources/CSharedLibrary/include/sr_shared_library.h).

Each function Swift calls gets a stub of the same name and signature, read from the library's
headers by clang (`-ast-dump=json`); the compiler checks each stub against the header's
declaration and the linker reports a function called but not listed. After adding a call to
a function of one of these libraries, add its name here and run this script (`--check`: fail
when a file differs from what it would write).
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPEWIRE_INCLUDE = os.path.join(ROOT, "Sources", "CPipeWire", "include")

LIBRARIES = [
    ("Sources/CPulse/pulse.c", "libpulse.so.0", "<pulse/pulseaudio.h>", [], "sr_pulse_load", """
        pa_channel_map_init_extend pa_channel_map_parse pa_context_connect pa_context_disconnect pa_context_errno
        pa_context_get_server_info pa_context_get_sink_info_by_index pa_context_get_sink_info_by_name
        pa_context_get_sink_input_info_list pa_context_get_source_info_by_name pa_context_get_source_info_list
        pa_context_get_state pa_context_new pa_context_set_state_callback pa_context_unref pa_operation_cancel
        pa_operation_get_state pa_operation_set_state_callback pa_operation_unref pa_proplist_gets pa_sample_spec_valid
        pa_stream_connect_playback pa_stream_connect_record pa_stream_disconnect pa_stream_drop pa_stream_get_context
        pa_stream_get_device_name pa_stream_get_latency pa_stream_get_state pa_stream_get_timing_info pa_stream_new
        pa_stream_peek pa_stream_set_monitor_stream pa_stream_set_moved_callback pa_stream_set_overflow_callback
        pa_stream_set_read_callback pa_stream_set_state_callback pa_stream_set_suspended_callback
        pa_stream_set_write_callback pa_stream_unref pa_stream_write pa_strerror pa_threaded_mainloop_free
        pa_threaded_mainloop_get_api pa_threaded_mainloop_lock pa_threaded_mainloop_new pa_threaded_mainloop_set_name
        pa_threaded_mainloop_start pa_threaded_mainloop_stop pa_threaded_mainloop_unlock pa_timeval_age pa_usec_to_bytes
    """),
    ("Sources/CX11/xdamage.c", "libXdamage.so.1", "<X11/extensions/Xdamage.h>", [], "sr_xdamage_load", """
        XDamageCreate XDamageDestroy XDamageQueryExtension XDamageSubtract
    """),
    ("Sources/CX11/xrandr.c", "libXrandr.so.2", "<X11/extensions/Xrandr.h>", [], "sr_xrandr_load", """
        XRRFreeMonitors XRRGetMonitors XRRQueryExtension XRRQueryVersion
    """),
    ("Sources/CPipeWire/pipewire.c", "libpipewire-0.3.so.0", "<pipewire/pipewire.h>", ["-I", PIPEWIRE_INCLUDE], "sr_pipewire_load", """
        pw_context_connect pw_context_connect_fd pw_context_destroy pw_context_new pw_core_disconnect pw_init
        pw_properties_new_string pw_properties_set pw_proxy_destroy pw_stream_add_listener pw_stream_connect
        pw_stream_dequeue_buffer pw_stream_destroy pw_stream_disconnect pw_stream_get_node_id pw_stream_get_state
        pw_stream_new pw_stream_queue_buffer pw_stream_trigger_process pw_stream_update_params pw_thread_loop_destroy
        pw_thread_loop_get_loop pw_thread_loop_lock pw_thread_loop_new pw_thread_loop_start pw_thread_loop_stop
        pw_thread_loop_unlock
    """),
    ("Sources/CSDBus/sdbus.c", "libsystemd.so.0", "<systemd/sd-bus.h>", [], "sr_sdbus_load", """
        sd_bus_call sd_bus_error_free sd_bus_flush_close_unref sd_bus_get_unique_name sd_bus_match_signal
        sd_bus_message_append_basic sd_bus_message_at_end sd_bus_message_close_container sd_bus_message_enter_container
        sd_bus_message_exit_container sd_bus_message_get_member sd_bus_message_get_path sd_bus_message_new_method_call
        sd_bus_message_open_container sd_bus_message_peek_type sd_bus_message_read_basic sd_bus_message_ref
        sd_bus_message_skip sd_bus_message_unref sd_bus_open_user sd_bus_process sd_bus_slot_unref sd_bus_wait
    """),
]


def declarations(header, flags):
    source = "#include %s\n" % header
    out = subprocess.run(["clang", "-x", "c", "-fsyntax-only", "-Xclang", "-ast-dump=json", "-"] + flags,
                         input=source, capture_output=True, text=True, check=True).stdout
    return {n["name"]: n for n in json.loads(out)["inner"] if n.get("kind") == "FunctionDecl"}


def declarator(type_text, name):
    """`const char *` → `const char *a0`; `void (*)(int)` → `void (*a0)(int)`; `int [4]` → `int a0[4]`."""
    if "(*)" in type_text:
        return type_text.replace("(*)", "(*%s)" % name, 1)
    m = re.match(r"^(.*?)\s*(\[.*\])$", type_text)
    if m:
        return "%s %s%s" % (m.group(1), name, m.group(2))
    return type_text + ("" if type_text.endswith("*") else " ") + name


def stub(decl):
    name = decl["name"]
    if decl.get("variadic"):
        sys.exit("%s is variadic: a stub cannot forward it" % name)
    params = [p["type"]["qualType"] for p in decl.get("inner", []) if p.get("kind") == "ParmVarDecl"]
    whole = decl["type"]["qualType"]
    tail = "(%s)" % (", ".join(params) if params else "void")
    if not whole.endswith(tail):
        sys.exit("cannot read %s's type: %s" % (name, whole))
    result = whole[: -len(tail)].strip()
    names = ["a%d" % i for i in range(len(params))]
    declared = "(%s)" % (", ".join(declarator(t, n) for t, n in zip(params, names)) if params else "void")
    forwarded = "(%s)" % ", ".join(names)
    if result == "void":
        return "    V(%s, %s, %s)" % (name, declared, forwarded)
    return "    F(%s, %s, %s, %s)" % (result, name, declared, forwarded)


def generate(file, library, header, flags, load, names):
    found = declarations(header, flags)
    missing = [n for n in names.split() if n not in found]
    if missing:
        sys.exit("%s declares no %s" % (header, ", ".join(missing)))
    lines = [stub(found[n]) for n in sorted(names.split())]
    return ("// Generated by scripts/shared-library-stubs.py from %s; do not edit.\n"
            "// Not linked: %s is opened by %s() or the first stub called\n"
            "// (Sources/CSharedLibrary/include/sr_shared_library.h).\n"
            "#include %s\n#include \"sr_shared_library.h\"\n\n"
            "#define FUNCTIONS(F, V) \\\n%s\n\n"
            "SR_SHARED_LIBRARY_STUBS(\"%s\", FUNCTIONS)\n\n"
            "const char *%s(void) { return sr_shared_library_load(&library); }\n"
            % (header, library, load, header, " \\\n".join(lines), library, load))


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for file, library, header, flags, load, names in LIBRARIES:
        text = generate(file, library, header, flags, load, names)
        path = os.path.join(ROOT, file)
        current = open(path).read() if os.path.exists(path) else None
        if current != text:
            if check:
                stale.append(file)
            else:
                with open(path, "w") as f:
                    f.write(text)
    if stale:
        sys.exit("out of date (run scripts/shared-library-stubs.py): " + ", ".join(stale))


if __name__ == "__main__":
    main()

# Tests only: a desktop-portal backend for the real xdg-desktop-portal frontend on a test's
# private session bus. It implements org.freedesktop.impl.portal.ScreenCast (with its Request
# and Session objects) and stands in for the desktop's chooser: in "approve" mode Start asks
# Mutter for the primary monitor (org.gnome.Mutter.ScreenCast, cursor as the app asked) and
# answers with Mutter's PipeWire node, restore data and persist mode 2; in "cancel" mode Start
# answers response 1, as when the user closes the chooser; in "hold" mode Start never answers, as
# a chooser left open (the frontend closing the request is logged as RequestClose). Every call's options are written to
# LOG as one JSON line each, so a test can check what the frontend passed on (the restore data
# a restore token stood for, the cursor mode).
#
# Usage: portal-backend.py BUS_NAME approve|cancel|hold LOG   (prints "ready" once it owns BUS_NAME)
import json
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

IMPL = "org.freedesktop.impl.portal.ScreenCast"
MUTTER = "org.gnome.Mutter.ScreenCast"
# The portal's cursor modes (1 hidden, 2 embedded, 4 metadata) as Mutter's (0, 1, 2).
MUTTER_CURSOR = {1: 0, 2: 1, 4: 2}
RESTORE_DATA = ("swift-record-tests", 1, "primary-monitor")

DBusGMainLoop(set_as_default=True)
bus_name, mode, log_path = sys.argv[1], sys.argv[2], sys.argv[3]
bus = dbus.SessionBus()


def plain(value):
    """A D-Bus value as JSON can hold it."""
    if isinstance(value, (dbus.Dictionary, dict)):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (dbus.Array, dbus.Struct, list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (dbus.Boolean, bool)):
        return bool(value)
    if isinstance(value, (dbus.String, dbus.ObjectPath, str)):
        return str(value)
    return int(value)


def log(method, options):
    with open(log_path, "a") as f:
        f.write(json.dumps({"method": method, "options": plain(options)}) + "\n")


class Request(dbus.service.Object):
    @dbus.service.method("org.freedesktop.impl.portal.Request", in_signature="", out_signature="")
    def Close(self):
        log("RequestClose", {})
        self.remove_from_connection()


class Session(dbus.service.Object):
    def __init__(self, path):
        super().__init__(bus, path)
        self.cursor_mode = 2
        self.mutter_session = None

    def stop_mutter(self):
        if self.mutter_session is not None:
            try:
                self.mutter_session.Stop(dbus_interface=MUTTER + ".Session")
            except dbus.DBusException:
                pass
            self.mutter_session = None

    @dbus.service.method("org.freedesktop.impl.portal.Session", in_signature="", out_signature="")
    def Close(self):
        log("Close", {})
        self.stop_mutter()
        self.remove_from_connection()

    @dbus.service.signal("org.freedesktop.impl.portal.Session", signature="")
    def Closed(self):
        pass


class ScreenCast(dbus.service.Object):
    def __init__(self):
        super().__init__(bus, "/org/freedesktop/portal/desktop")
        self.sessions = {}

    @dbus.service.method(IMPL, in_signature="oosa{sv}", out_signature="ua{sv}")
    def CreateSession(self, handle, session_handle, app_id, options):
        log("CreateSession", options)
        Request(bus, handle)
        self.sessions[str(session_handle)] = Session(session_handle)
        return dbus.UInt32(0), dbus.Dictionary({}, signature="sv")

    @dbus.service.method(IMPL, in_signature="oosa{sv}", out_signature="ua{sv}")
    def SelectSources(self, handle, session_handle, app_id, options):
        log("SelectSources", options)
        session = self.sessions.get(str(session_handle))
        if session is not None:
            session.cursor_mode = int(options.get("cursor_mode", 2))
        return dbus.UInt32(0), dbus.Dictionary({}, signature="sv")

    @dbus.service.method(IMPL, in_signature="oossa{sv}", out_signature="ua{sv}",
                         async_callbacks=("reply", "error"))
    def Start(self, handle, session_handle, app_id, parent_window, options, reply, error):
        log("Start", options)
        session = self.sessions.get(str(session_handle))
        if mode == "hold":
            # The chooser stays open: no answer until the frontend closes the request.
            self.held = Request(bus, handle)
            return
        if mode == "cancel" or session is None:
            reply(dbus.UInt32(1 if mode == "cancel" else 2), dbus.Dictionary({}, signature="sv"))
            return
        cast = bus.get_object(MUTTER, "/org/gnome/Mutter/ScreenCast")
        path = cast.CreateSession(dbus.Dictionary({}, signature="sv"), dbus_interface=MUTTER)
        mutter_session = bus.get_object(MUTTER, path)
        session.mutter_session = mutter_session
        stream_path = mutter_session.RecordMonitor(
            "", dbus.Dictionary({"cursor-mode": dbus.UInt32(MUTTER_CURSOR.get(session.cursor_mode, 1))}, signature="sv"),
            dbus_interface=MUTTER + ".Session")
        stream = bus.get_object(MUTTER, stream_path)
        match = []

        def added(node):
            match[0].remove()
            props = stream.Get(MUTTER + ".Stream", "Parameters", dbus_interface="org.freedesktop.DBus.Properties")
            size = props.get("size", (1280, 720))
            results = {
                "streams": dbus.Array([dbus.Struct((dbus.UInt32(node), dbus.Dictionary({
                    "source_type": dbus.UInt32(1),
                    "position": dbus.Struct((dbus.Int32(0), dbus.Int32(0)), signature="ii"),
                    "size": dbus.Struct((dbus.Int32(size[0]), dbus.Int32(size[1])), signature="ii"),
                }, signature="sv")), signature="ua{sv}")], signature="(ua{sv})"),
                "persist_mode": dbus.UInt32(2),
                "restore_data": dbus.Struct((dbus.String(RESTORE_DATA[0]), dbus.UInt32(RESTORE_DATA[1]),
                                             dbus.String(RESTORE_DATA[2], variant_level=1)), signature="suv"),
            }
            reply(dbus.UInt32(0), dbus.Dictionary(results, signature="sv"))

        match.append(bus.add_signal_receiver(added, "PipeWireStreamAdded", MUTTER + ".Stream", MUTTER, stream_path))
        mutter_session.Start(dbus_interface=MUTTER + ".Session")

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.GetAll(interface)[name]

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        if interface != IMPL:
            return dbus.Dictionary({}, signature="sv")
        return dbus.Dictionary({
            "AvailableSourceTypes": dbus.UInt32(3),
            "AvailableCursorModes": dbus.UInt32(7),
            "version": dbus.UInt32(4),
        }, signature="sv")


screen_cast = ScreenCast()
name = dbus.service.BusName(bus_name, bus, do_not_queue=True)
print("ready", flush=True)
GLib.MainLoop().run()

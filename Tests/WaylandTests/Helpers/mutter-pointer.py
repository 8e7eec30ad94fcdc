# Tests only: puts the pointer of a headless GNOME at (x, y) through Mutter's RemoteDesktop
# (a virtual pointer exists only while a remote-desktop session holds it), says "ready",
# and keeps the session until killed.
import sys
import dbus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
x, y = float(sys.argv[1]), float(sys.argv[2])
remote = bus.get_object("org.gnome.Mutter.RemoteDesktop", "/org/gnome/Mutter/RemoteDesktop")
session_path = remote.CreateSession(dbus_interface="org.gnome.Mutter.RemoteDesktop")
session = bus.get_object("org.gnome.Mutter.RemoteDesktop", session_path)
session_id = session.Get("org.gnome.Mutter.RemoteDesktop.Session", "SessionId", dbus_interface="org.freedesktop.DBus.Properties")
cast = bus.get_object("org.gnome.Mutter.ScreenCast", "/org/gnome/Mutter/ScreenCast")
cast_path = cast.CreateSession({"remote-desktop-session-id": session_id}, dbus_interface="org.gnome.Mutter.ScreenCast")
cast_session = bus.get_object("org.gnome.Mutter.ScreenCast", cast_path)
stream_path = cast_session.RecordMonitor("", {}, dbus_interface="org.gnome.Mutter.ScreenCast.Session")
loop = GLib.MainLoop()

def added(node):
    session.NotifyPointerMotionAbsolute(stream_path, x, y, dbus_interface="org.gnome.Mutter.RemoteDesktop.Session")
    print("ready", flush=True)

bus.add_signal_receiver(added, "PipeWireStreamAdded", "org.gnome.Mutter.ScreenCast.Stream", None, stream_path)
session.Start(dbus_interface="org.gnome.Mutter.RemoteDesktop.Session")
loop.run()

# Bench only: holds a screen cast of the headless GNOME's primary monitor through
# org.gnome.Mutter.ScreenCast (cursor embedded, as swift-record asks by default), prints
# "node N" once PipeWire has the stream, and keeps the session until killed (Mutter ends a
# cast when the connection that made it goes). GStreamer's pipewiresrc, which cannot ask
# Mutter itself, reads that node: the same kind of node swift-record reads. Debian's python3
# (python3-dbus and python3-gi).
import signal
import dbus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
cast = bus.get_object("org.gnome.Mutter.ScreenCast", "/org/gnome/Mutter/ScreenCast")
session_path = cast.CreateSession(dbus.Dictionary({}, signature="sv"), dbus_interface="org.gnome.Mutter.ScreenCast")
session = bus.get_object("org.gnome.Mutter.ScreenCast", session_path)
stream_path = session.RecordMonitor("", dbus.Dictionary({"cursor-mode": dbus.UInt32(1)}, signature="sv"),
                                    dbus_interface="org.gnome.Mutter.ScreenCast.Session")
loop = GLib.MainLoop()


def added(node):
    print("node", int(node), flush=True)


def closed():
    loop.quit()


bus.add_signal_receiver(added, "PipeWireStreamAdded", "org.gnome.Mutter.ScreenCast.Stream", None, stream_path)
bus.add_signal_receiver(closed, "Closed", "org.gnome.Mutter.ScreenCast.Session", None, session_path)
session.Start(dbus_interface="org.gnome.Mutter.ScreenCast.Session")
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
loop.run()
try:
    session.Stop(dbus_interface="org.gnome.Mutter.ScreenCast.Session")
except dbus.DBusException:
    pass

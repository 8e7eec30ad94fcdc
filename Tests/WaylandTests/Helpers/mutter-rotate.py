# Tests only: gives the headless GNOME's first monitor another transform (argv[1]: 0 normal,
# 1 rotated 90°) through org.gnome.Mutter.DisplayConfig.ApplyMonitorsConfig (temporary), its
# current mode kept: the monitor's picture changes from WxH to HxW.
import sys
import dbus

bus = dbus.SessionBus()
config = bus.get_object("org.gnome.Mutter.DisplayConfig", "/org/gnome/Mutter/DisplayConfig")
serial, monitors, logical, properties = config.GetCurrentState(dbus_interface="org.gnome.Mutter.DisplayConfig")
monitor = monitors[0]
mode = [m for m in monitor[1] if m[6].get("is-current")][0]
logical_monitor = dbus.Struct((dbus.Int32(0), dbus.Int32(0), dbus.Double(1.0), dbus.UInt32(int(sys.argv[1])), dbus.Boolean(True),
                               [dbus.Struct((monitor[0][0], mode[0], dbus.Dictionary({}, signature="sv")))]))
config.ApplyMonitorsConfig(dbus.UInt32(serial), dbus.UInt32(1), [logical_monitor], dbus.Dictionary({}, signature="sv"),
                           dbus_interface="org.gnome.Mutter.DisplayConfig")
print("applied", flush=True)

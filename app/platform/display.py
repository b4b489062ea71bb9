"""Is there a display to show the tray app on? Checked before Qt starts, because Qt's own failure is
an abort with plugin text ("could not load the Qt platform plugin xcb … libxcb-cursor0") that sends
the user to the wrong fix.

Only Linux and the other X11/Wayland systems are checked; Windows and macOS always have a display,
and an explicit `QT_QPA_PLATFORM` other than xcb/wayland (offscreen, vnc, eglfs, …) needs no display.

The X11 check's connection stays open until Qt has its own (`display_checked` is a context): an X
server with no other client (Xvfb, xvfb-run, a bare VNC server) resets when its last client leaves
and refuses connections meanwhile, so a check that let go at once made Qt's connection fail, now
and then, with the very plugin abort this check is there to prevent.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import socket
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

ADVICE = (
    "Start Hayai from a desktop session (X11 or Wayland), or set DISPLAY (X11) or WAYLAND_DISPLAY "
    "to a running display. Without a display, `hayai ocr IMAGE…` reads image files."
)


def _wayland_reachable(name: str) -> bool:
    path = (
        name if os.path.isabs(name) else os.path.join(os.environ.get("XDG_RUNTIME_DIR", ""), name)
    )
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect(path)
    except OSError:
        return False
    return True


@contextmanager
def _x11_connection(name: str) -> Iterator[bool | None]:
    """Whether libxcb (which Qt's X11 plugin needs anyway) connects to `name`, its connection held
    open until the block ends; None without libxcb."""
    path = ctypes.util.find_library("xcb") or "libxcb.so.1"
    try:
        xcb = ctypes.CDLL(path)
    except OSError:
        yield None
        return
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    connection = xcb.xcb_connect(name.encode(), None)
    try:
        yield connection is not None and xcb.xcb_connection_has_error(connection) == 0
    finally:
        if connection:
            xcb.xcb_disconnect(connection)


@contextmanager
def display_checked(environ=None) -> Iterator[str | None]:
    """None when Qt will find a display, else what is wrong and what to do, for the terminal;
    make the QApplication inside the block (an X display stays connected until it ends)."""
    with ExitStack() as held:
        yield _problem(os.environ if environ is None else environ, held)


def _problem(env, held: ExitStack) -> str | None:
    if sys.platform in ("win32", "darwin"):
        return None
    chosen = [p.split(":")[0].strip() for p in env.get("QT_QPA_PLATFORM", "").split(";") if p]
    if chosen and not all(p == "xcb" or p.startswith("wayland") for p in chosen):
        return None  # offscreen, vnc, eglfs, …: platforms that need no desktop display
    wayland, x11 = env.get("WAYLAND_DISPLAY", ""), env.get("DISPLAY", "")
    if not wayland and not x11:
        return f"no display found (neither DISPLAY nor WAYLAND_DISPLAY is set). {ADVICE}"
    if wayland and _wayland_reachable(wayland):
        return None
    if x11:
        reachable = held.enter_context(_x11_connection(x11))
        if reachable is None:
            return (
                "Qt's X11 support needs system libraries that are missing (libxcb): run the "
                "`apt-get install` line of the README's set-up section."
            )
        if reachable:
            return None
        return f"cannot open the X display {x11!r} (DISPLAY). {ADVICE}"
    return f"cannot connect to the Wayland display {wayland!r} (WAYLAND_DISPLAY). {ADVICE}"

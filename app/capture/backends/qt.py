"""Capture with QScreen.grabWindow(0): works wherever Qt can read the screen; the fallback.

The pixmap comes back in device pixels; its top-left in the virtual desktop is the screen's logical
top-left (Qt keeps native origins and scales only sizes).
"""

from __future__ import annotations

from app.capture.models import Capture, CaptureError, ScreenInfo
from app.platform.backends import session_type

INSTALL_HINT = "comes with PySide6; it needs a running QGuiApplication"


def is_compatible() -> bool:
    # Every Qt platform implements grabWindow, but Wayland compositors give it nothing (or black).
    return session_type() != "wayland"


def is_available() -> bool:
    from PySide6.QtGui import QGuiApplication

    return QGuiApplication.instance() is not None


def grab(screens: list[ScreenInfo]) -> dict[str, Capture]:
    from PySide6.QtGui import QGuiApplication, QImage

    qscreens = {s.name(): s for s in QGuiApplication.screens()}
    captures: dict[str, Capture] = {}
    for screen in screens:
        qscreen = qscreens.get(screen.name)
        if qscreen is None:
            raise CaptureError(f"screen {screen.name!r} is gone (screens now: {sorted(qscreens)})")
        image = qscreen.grabWindow(0).toImage()
        if image.isNull():
            raise CaptureError(
                f"Qt could not read screen {screen.name!r} (on Wayland the compositor refuses: "
                "use the grim or portal capture backend)"
            )
        image = image.convertToFormat(QImage.Format.Format_RGB32)
        image.setDevicePixelRatio(1.0)  # plain pixels; scales are measured from sizes where used
        x, y = screen.physical[:2]  # qt_screens' origins: screens of two scales never overlap
        info = ScreenInfo(
            screen.name, screen.logical, (x, y, image.width(), image.height()), screen.dpr
        )
        captures[screen.name] = Capture(info, image)
    return captures

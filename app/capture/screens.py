"""The screens as Qt sees them, and a grab cut to a box: what every capture backend shares."""

from __future__ import annotations

from app.capture.models import CaptureError, Rect, ScreenInfo


def qt_screens() -> list[ScreenInfo]:
    """The screens as Qt sees them; `physical` is estimated here and measured by the backend.

    Where no global physical space is known (Wayland; an X11 backend measures it, mss), a
    screen's physical origin is its logical origin times the largest scale: screens of different
    scales then never overlap in desktop px (a scale-2 laptop at 0,0 beside a monitor at logical
    1440,0: 0..2880 and 2880.., where the logical origin would have put the monitor inside the
    laptop's pixels)."""
    from PySide6.QtGui import QGuiApplication

    if QGuiApplication.instance() is None:
        raise CaptureError("capture needs a running QApplication")
    qscreens = QGuiApplication.screens()
    top = max((q.devicePixelRatio() for q in qscreens), default=1.0)
    screens = []
    for qscreen in qscreens:
        g = qscreen.geometry()
        dpr = qscreen.devicePixelRatio()
        physical = (
            round(g.x() * top), round(g.y() * top), round(g.width() * dpr), round(g.height() * dpr)
        )  # fmt: skip
        screens.append(
            ScreenInfo(qscreen.name(), (g.x(), g.y(), g.width(), g.height()), physical, dpr)
        )
    return screens


def crop(image, box: Rect):
    """`image` cut to `box`, clamped to the image; an empty box is an error."""
    from PySide6.QtCore import QRect

    rect = QRect(*box).intersected(image.rect())
    if rect.isEmpty():
        raise CaptureError(f"box {box} lies outside the {image.width()}x{image.height()} screen")
    return image.copy(rect)

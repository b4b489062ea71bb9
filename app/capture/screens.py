"""The screens as Qt sees them, and a grab cut to a box: what every capture backend shares."""

from __future__ import annotations

from app.capture.models import CaptureError, Rect, ScreenInfo


def qt_screens() -> list[ScreenInfo]:
    """The screens as Qt sees them; `physical` is estimated here and measured by the backend."""
    from PySide6.QtGui import QGuiApplication

    if QGuiApplication.instance() is None:
        raise CaptureError("capture needs a running QApplication")
    screens = []
    for qscreen in QGuiApplication.screens():
        g = qscreen.geometry()
        dpr = qscreen.devicePixelRatio()
        physical = (g.x(), g.y(), round(g.width() * dpr), round(g.height() * dpr))
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

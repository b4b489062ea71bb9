"""Where a window of ours may go: the free area of a screen."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QGuiApplication

# When Qt knows no screen (an unplugged monitor, a platform without screens) windows are placed as
# on a common 1920×1080 one.
FALLBACK_AREA = QRect(0, 0, 1920, 1080)


def screen_area(at: QPoint | None = None) -> QRect:
    """The free area (without panels) of the screen at `at` (logical pixels), else of the primary
    screen, else FALLBACK_AREA."""
    screen = (QGuiApplication.screenAt(at) if at is not None else None) or (
        QGuiApplication.primaryScreen()
    )
    return screen.availableGeometry() if screen is not None else QRect(FALLBACK_AREA)

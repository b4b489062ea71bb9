"""Screen capture on a real X server: a window shows known noise; the grab must hold those pixels.

Qt on X11 (xcb) runs in a child process (this file's `__main__`), since the pytest process uses
the offscreen platform. The helpers here are shared with test_selection_xvfb.py's children.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.xvfb, pytest.mark.gui]

NOISE_SIZE = (300, 200)  # physical pixels
NOISE_AT = (120, 80)  # logical top-left of the noise window (physical = this * QT_SCALE_FACTOR)


@pytest.mark.parametrize("backend", ["mss", "qt"])
@pytest.mark.parametrize("scale", ["1", "2"])
def test_grab_screens_holds_the_pixels_on_screen(xvfb, child, backend, scale):
    # GIVEN a window showing random noise at a known place, Qt scaled by QT_SCALE_FACTOR
    env = xvfb.env(QT_SCALE_FACTOR=scale)
    # WHEN every screen is grabbed with the backend
    out = child(Path(__file__), "grab", backend, env=env).stdout
    result = json.loads(out.strip().splitlines()[-1])
    # THEN the capture is keyed by the Qt screen name, in physical pixels, and holds the noise exactly
    assert result["screens"] == {"screen": [0, 0, xvfb.width, xvfb.height]}
    assert result["image_size"] == [xvfb.width, xvfb.height]
    assert result["noise_at_physical"] == [NOISE_AT[0] * int(scale), NOISE_AT[1] * int(scale)]
    assert result["mismatched_pixels"] == 0
    assert result["region_equal"] is True


# --- child side -------------------------------------------------------------------------------


def noise_image(seed: int = 7):
    from PySide6.QtGui import QImage

    w, h = NOISE_SIZE
    data = random.Random(seed).randbytes(w * h * 4)
    return QImage(data, w, h, w * 4, QImage.Format.Format_RGB32).copy()


def show_noise_window(app):
    """A frameless window painting the noise 1:1 in device pixels at NOISE_AT (logical)."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtGui import QPainter
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QWidget

    class NoiseWindow(QWidget):
        def __init__(self, image):
            super().__init__(
                None, Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnTopHint
            )
            self.image = image
            dpr = app.primaryScreen().devicePixelRatio()
            self.image.setDevicePixelRatio(dpr)  # paint 1 image px = 1 device px
            self.setFixedSize(round(image.width() / dpr), round(image.height() / dpr))
            self.move(*NOISE_AT)

        def paintEvent(self, event):
            QPainter(self).drawImage(QPoint(0, 0), self.image)

    window = NoiseWindow(noise_image())
    window.show()
    assert QTest.qWaitForWindowExposed(window, 5000), "noise window never exposed"
    for _ in range(20):  # let the X server finish drawing
        app.processEvents()
        QTest.qWait(10)
    dpr = app.primaryScreen().devicePixelRatio()
    return window, (round(NOISE_AT[0] * dpr), round(NOISE_AT[1] * dpr))


def mismatches(a, b) -> int:
    from PySide6.QtGui import QImage

    if a.size() != b.size():
        return a.width() * a.height() or 1
    a = a.convertToFormat(QImage.Format.Format_RGB888)
    b = b.convertToFormat(QImage.Format.Format_RGB888)
    return sum(1 for y in range(a.height()) if a.constScanLine(y) != b.constScanLine(y))


def _grab_child(backend: str) -> None:
    from PySide6.QtWidgets import QApplication

    from app.capture import grab_region, grab_screens

    app = QApplication(sys.argv[:1])
    window, (px, py) = show_noise_window(app)
    captures = grab_screens(backend)
    capture = captures["screen"]
    w, h = NOISE_SIZE
    crop = capture.image.copy(px, py, w, h)
    noise = noise_image()
    region = grab_region("screen", (px, py, w, h), backend)
    print(
        json.dumps(
            {
                "screens": {name: list(c.screen.physical) for name, c in captures.items()},
                "image_size": [capture.image.width(), capture.image.height()],
                "noise_at_physical": [px, py],
                "mismatched_pixels": mismatches(crop, noise),  # counted in rows
                "region_equal": mismatches(region, noise) == 0,
            }
        ),
        flush=True,
    )
    window.close()


if __name__ == "__main__" and sys.argv[1:2] == ["grab"]:
    _grab_child(sys.argv[2])

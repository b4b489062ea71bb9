"""Mixed-DPI multi-monitor selection on Qt's offscreen platform with a screens file.

Xvfb shows one head only, so the layout comes from `QT_QPA_PLATFORM=offscreen:configfile=...`
(Qt's offscreen plugin: {"screens": [{"name", "x", "y", "width", "height", "dpr"}]}, geometry in
logical pixels). The platform is fixed per process, hence the child process: this file's `__main__`.
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui

SCREENS = [
    {"name": "left", "x": 0, "y": 0, "width": 1000, "height": 600, "dpr": 1.0},
    {"name": "right", "x": 1000, "y": 0, "width": 800, "height": 500, "dpr": 2.0},
    {"name": "frac", "x": 1800, "y": 0, "width": 800, "height": 600, "dpr": 1.5},
]
# (screen, drag start, drag end) in that window's logical pixels
DRAGS = [
    ("right", (100, 50), (300, 150)),
    ("left", (10, 20), (110, 70)),
    ("frac", (100, 50), (300, 150)),
]


def test_mixed_dpi_boxes_crop_the_right_physical_pixels(tmp_path, child):
    # GIVEN three screens: 1x, 2x and 1.5x, side by side, each with its own noise capture
    config = tmp_path / "screens.json"
    config.write_text(json.dumps({"screens": SCREENS}))
    env = dict(
        os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={config}", PYTHONPATH=str(Path.cwd())
    )
    # WHEN the user drags a box on each screen's selection window (in a child process)
    out = child(Path(__file__), "child", env=env).stdout
    results = {r["screen"]: r for r in map(json.loads, out.strip().splitlines())}
    # THEN each window sat on its own screen, scaled by its own measured ratio
    assert results["right"]["window_screen"] == "right"
    assert results["right"]["scale"] == [2.0, 2.0]
    assert results["frac"]["scale"] == [1.5, 1.5]
    # AND the box on the 2x screen is in that screen's physical pixels, crop pixel-exact
    right = results["right"]
    assert right["box_image_px"] == [200, 100, 400, 200]
    # (desktop px: the screen's logical origin 1000 times the largest scale, 2: app/capture/screens.py)
    assert right["box_desktop_px"] == [2200, 100, 400, 200]
    assert right["logical_rect"] == [1100, 50, 200, 100]
    assert right["crop_equal"] is True
    left = results["left"]
    assert left["box_image_px"] == [10, 20, 100, 50]
    assert left["box_desktop_px"] == [10, 20, 100, 50]
    assert left["crop_equal"] is True
    frac = results["frac"]
    assert frac["box_image_px"] == [150, 75, 300, 150]
    assert frac["logical_rect"] == [1900, 50, 200, 100]
    assert frac["crop_equal"] is True


def _child() -> None:
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtGui import QImage
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from app.capture import Capture, qt_screens
    from app.ui.selection import SelectionSession

    app = QApplication(sys.argv[:1])
    screens = {s.name: s for s in qt_screens()}
    assert sorted(screens) == sorted(s["name"] for s in SCREENS), screens
    for name, start, end in DRAGS:
        captures = {}
        for i, (screen_name, info) in enumerate(sorted(screens.items())):
            w, h = info.physical[2:]
            data = random.Random(i).randbytes(w * h * 4)
            captures[screen_name] = Capture(
                info, QImage(data, w, h, w * 4, QImage.Format.Format_RGB32).copy()
            )
        session = SelectionSession(captures)
        results = []
        session.selected.connect(results.append)
        session.start()
        app.processEvents()
        window = next(w for w in session.windows if w.capture.screen.name == name)
        scale = [
            window.capture.image.width() / window.width(),
            window.capture.image.height() / window.height(),
        ]
        window_screen = window.windowHandle().screen().name()
        QTest.mousePress(
            window, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(*start)
        )
        QTest.mouseMove(window, QPoint(*end))
        QTest.mouseRelease(
            window, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(*end)
        )
        app.processEvents()
        assert len(results) == 1, f"no selection on {name}"
        sel = results[0]
        expected = captures[name].image.copy(*sel.box_image_px)
        print(
            json.dumps(
                {
                    "screen": sel.screen_name,
                    "window_screen": window_screen,
                    "scale": scale,
                    "box_image_px": sel.box_image_px,
                    "box_desktop_px": sel.box_desktop_px,
                    "logical_rect": sel.logical_rect,
                    "crop_equal": sel.image == expected and not expected.isNull(),
                }
            ),
            flush=True,
        )


if __name__ == "__main__" and sys.argv[1:] == ["child"]:
    _child()

"""Capture without a real X server: backend matching, fallback, crops (offscreen Qt)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QGuiApplication, QImage

from app.capture import CaptureError, ScreenInfo, crop, grab_region, grab_screens, qt_screens
from app.capture.backends import mss as mss_backend

pytestmark = pytest.mark.gui

MONITORS = [
    {"left": 0, "top": 0, "width": 1920, "height": 1080, "output": "DP-1"},
    {"left": 1920, "top": 0, "width": 3840, "height": 2160, "output": "HDMI-1"},
]


@pytest.mark.parametrize(
    ("screen", "expected"),
    [
        (ScreenInfo("DP-1", (0, 0, 1920, 1080), (0, 0, 1920, 1080), 1.0), 0),  # by name
        (ScreenInfo("HDMI-1", (1920, 0, 1920, 1080), (0, 0, 0, 0), 2.0), 1),  # by name, 2x size
        (
            ScreenInfo("other", (1920, 0, 1920, 1080), (0, 0, 0, 0), 2.0),
            1,
        ),  # by top-left + scaled size
        (ScreenInfo("other", (1920, 0, 3840, 2160), (0, 0, 0, 0), 1.0), 1),  # by geometry, 1x
        (ScreenInfo("mac", (1920, 0, 3840, 2160), (0, 0, 0, 0), 2.0), 1),  # points (macOS) size
        (
            ScreenInfo("DP-1", (0, 0, 1280, 720), (0, 0, 0, 0), 1.0),
            None,
        ),  # name fits, size does not
        (ScreenInfo("gone", (5000, 0, 1920, 1080), (0, 0, 0, 0), 1.0), None),
    ],
)
def test_mss_monitor_matching(screen, expected):
    match = mss_backend.match_monitor(screen, MONITORS)
    assert match == (None if expected is None else MONITORS[expected])


class FakeShot:
    def __init__(self, monitor):
        self.width, self.height = monitor["width"], monitor["height"]
        # every pixel's blue byte = the monitor's left edge / 10, so screens are told apart
        self.raw = bytearray([monitor["left"] // 10 % 256, 0, 0, 255] * (self.width * self.height))


class FakeMss:
    def __init__(self, monitors):
        self.monitors = [{"left": 0, "top": 0, "width": 0, "height": 0}, *monitors]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def grab(self, monitor):
        return FakeShot(monitor)


def test_mss_grab_keys_by_screen_name_and_measures_physical_geometry(monkeypatch):
    # GIVEN Qt screens (one 2x) and the monitors mss reports for them, listed in another order
    screens = [
        ScreenInfo("left", (0, 0, 100, 60), (0, 0, 100, 60), 1.0),
        ScreenInfo("right", (100, 0, 50, 30), (100, 0, 100, 60), 2.0),
    ]
    monitors = [
        {"left": 100, "top": 0, "width": 100, "height": 60},
        {"left": 0, "top": 0, "width": 100, "height": 60},
    ]
    monkeypatch.setattr(mss_backend, "_open", lambda: FakeMss(monitors))
    captures = mss_backend.grab(screens)
    # THEN each capture belongs to its screen, in physical pixels, with the monitor's desktop origin
    assert set(captures) == {"left", "right"}
    right = captures["right"]
    assert right.screen.physical == (100, 0, 100, 60)
    assert (right.image.width(), right.image.height()) == (100, 60)
    assert right.image.pixelColor(5, 5).blue() == 10
    assert captures["left"].image.pixelColor(5, 5).blue() == 0


def test_mss_grab_refuses_an_unmatched_screen(monkeypatch):
    monkeypatch.setattr(
        mss_backend, "_open", lambda: FakeMss([{"left": 0, "top": 0, "width": 10, "height": 10}])
    )
    with pytest.raises(CaptureError, match="mss found no monitor for screen 'x'"):
        mss_backend.grab([ScreenInfo("x", (0, 0, 100, 100), (0, 0, 100, 100), 1.0)])


def test_qt_backend_grabs_every_screen_by_name(qapp):
    captures = grab_screens("qt")
    names = [s.name() for s in QGuiApplication.screens()]
    assert sorted(captures) == sorted(names)
    for name, capture in captures.items():
        assert capture.screen.name == name
        assert capture.image.format() == QImage.Format.Format_RGB32
        assert capture.screen.physical[2:] == (capture.image.width(), capture.image.height())


def test_automatic_choice_falls_back_to_qt_when_mss_fails(qapp, monkeypatch, caplog):
    monkeypatch.setattr(mss_backend, "is_compatible", lambda: True)
    monkeypatch.setattr(mss_backend, "is_available", lambda: True)

    def broken(screens):
        raise CaptureError("no monitor matches")

    monkeypatch.setattr(mss_backend, "grab", broken)
    with caplog.at_level("WARNING"):
        captures = grab_screens()
    assert sorted(captures) == sorted(s.name for s in qt_screens())
    assert "falling back to qt" in caplog.text
    # an explicit override does not fall back: the user asked for mss
    with pytest.raises(CaptureError, match="no monitor matches"):
        grab_screens("mss")


def test_grab_region_and_crop(qapp):
    name = QGuiApplication.primaryScreen().name()
    region = grab_region(name, (10, 20, 30, 40), "qt")
    assert (region.width(), region.height()) == (30, 40)
    with pytest.raises(CaptureError, match="is gone"):
        grab_region("no-such-screen", (0, 0, 10, 10), "qt")
    image = QImage(100, 50, QImage.Format.Format_RGB32)
    assert crop(image, (90, 40, 50, 50)).size().toTuple() == (10, 10)  # clamped to the image
    with pytest.raises(CaptureError, match="outside"):
        crop(image, (200, 0, 10, 10))

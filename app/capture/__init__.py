"""Screen capture behind one interface: `grab_screens()` (all screens, keyed by Qt screen name,
physical pixels) and `grab_region()` (one box again). Backends: mss (X11, Windows, macOS), grim and
the desktop portal (Wayland), qt (fallback)."""

from app.capture.main import (
    REGISTRY,
    BackgroundGrab,
    background_grab,
    crop,
    grab_box,
    grab_region,
    grab_screens,
    qt_screens,
    watch_problem,
)
from app.capture.models import Capture, CaptureCancelled, CaptureError, ScreenInfo

__all__ = [
    "BackgroundGrab",
    "Capture",
    "CaptureCancelled",
    "CaptureError",
    "background_grab",
    "REGISTRY",
    "ScreenInfo",
    "crop",
    "grab_box",
    "watch_problem",
    "grab_region",
    "grab_screens",
    "qt_screens",
]

"""Pick a capture backend and grab: every screen at once (before selecting), or one box again."""

from __future__ import annotations

import logging
import threading
import time

from PySide6.QtCore import QObject, Qt, Signal

from app.capture.backends import grim as grim_backend
from app.capture.backends import mss as mss_backend
from app.capture.backends import portal as portal_backend
from app.capture.backends import qt as qt_backend
from app.capture.models import (
    Capture,
    CaptureBackend,
    CaptureCancelled,
    CaptureError,
    Rect,
    ScreenInfo,
)
from app.capture.screens import crop, qt_screens
from app.platform.backends import pick

log = logging.getLogger(__name__)

# Most preferred first: mss reads physical pixels of every monitor directly (X11, Windows, macOS);
# on Wayland grim copies each output exactly without a dialog where the compositor offers
# wlr-screencopy, and the desktop portal works everywhere else (GNOME, KDE); Qt is the fallback.
REGISTRY: dict[str, CaptureBackend] = {
    "mss": mss_backend,
    "grim": grim_backend,
    "portal": portal_backend,
    "qt": qt_backend,
}


def grab_screens(backend: str | None = None) -> dict[str, Capture]:
    """Every screen, keyed by Qt screen name, in physical pixels. Runs on the GUI thread.

    `backend` (a REGISTRY name) overrides the automatic choice. When the automatic choice fails
    (e.g. mss finds no monitor matching a Qt screen) the Qt backend is tried before giving up.
    """
    choice = pick(REGISTRY, backend, capability="capture")
    screens = qt_screens()
    start = time.perf_counter()
    # Qt is the fallback only where it can read the screen: on Wayland it gets black or nothing.
    no_fallback = backend or choice.name == "qt" or not qt_backend.is_compatible()
    try:
        captures = choice.module.grab(screens)
    except CaptureError as error:
        if no_fallback:
            raise
        log.warning("capture with %s failed (%s); falling back to qt", choice.name, error)
        captures = qt_backend.grab(screens)
    except Exception as error:  # mss raises its own ScreenShotError, Xlib errors, ...
        if no_fallback:
            raise CaptureError(f"screen capture failed: {error}") from error
        log.warning("capture with %s failed (%s); falling back to qt", choice.name, error)
        captures = qt_backend.grab(screens)
    log.debug(
        "captured %s in %.1f ms",
        ", ".join(f"{n} {c.image.width()}x{c.image.height()}" for n, c in captures.items()),
        (time.perf_counter() - start) * 1000,
    )
    return captures


class BackgroundGrab(QObject):
    """A grab that must not run on the GUI thread: the desktop portal may wait for minutes on its
    permission dialog, or for xdg-desktop-portal to start. The backend's `grab_cancellable` runs
    on a thread of its own; what it says comes back to the GUI thread through a queued signal,
    and nothing comes back once `cancel()` was called."""

    arrived = Signal(object)  # dict[str, Capture]
    failed = Signal(str)  # what went wrong, in words
    waiting = Signal(str)  # what it waits for now, in words

    _report = Signal(str, object)  # from the thread: ("arrived" | "failed" | "waiting", value)

    def __init__(self, grab_cancellable, screens: list[ScreenInfo], state: str, parent=None):
        super().__init__(parent)
        self.state = state  # what it waits for now, in words (the last `waiting`)
        self._grab = grab_cancellable
        self._screens = screens
        self._cancelled = threading.Event()
        self._report.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def start(self) -> None:
        threading.Thread(target=self._run, name="hayai-background-grab", daemon=True).start()

    def cancel(self) -> None:
        self._cancelled.set()

    def _run(self) -> None:
        started = time.perf_counter()
        try:
            captures = self._grab(
                self._screens, self._cancelled, lambda text: self._report.emit("waiting", text)
            )
        except CaptureCancelled:
            log.debug("background capture cancelled")
            return
        except Exception as error:  # CaptureError, or any failure of the backend: said in words
            self._report.emit("failed", str(error) or type(error).__name__)
            return
        log.debug("background capture in %.1f ms", (time.perf_counter() - started) * 1000)
        self._report.emit("arrived", captures)

    def _deliver(self, kind: str, value) -> None:
        if self._cancelled.is_set():
            return
        if kind == "waiting":
            self.state = value
        getattr(self, kind).emit(value)


def background_grab(backend: str | None = None) -> BackgroundGrab | None:
    """A BackgroundGrab of every screen (not started) when the chosen backend may wait on the
    desktop (it has `grab_cancellable`); None when `grab_screens` answers at once."""
    choice = pick(REGISTRY, backend, capability="capture")
    grab = getattr(choice.module, "grab_cancellable", None)
    if grab is None:
        return None
    # An optional part of the protocol (app/capture/models.py), there with grab_cancellable.
    return BackgroundGrab(grab, qt_screens(), choice.module.WAITING_FIRST)  # type: ignore[attr-defined]


def grab_region(screen_name: str, box_image_px: Rect, backend: str | None = None):
    """Grab `box_image_px` (x, y, w, h in that screen's image pixels) again, for "re-scan last region".

    The whole screen is grabbed and cropped, so the box means exactly what it meant at selection time.
    """
    captures = grab_screens(backend)
    capture = captures.get(screen_name)
    if capture is None:
        raise CaptureError(
            f"screen {screen_name!r} is gone (screens now: {sorted(captures)}); select a region again"
        )
    return crop(capture.image, box_image_px)


def grab_box(
    screen_name: str, box_image_px: Rect, box_desktop_px: Rect, backend: str | None = None
):
    """Only the box, as cheaply as the backend allows (a watched region is grabbed every tick).

    A backend with `grab_box(box_desktop_px)` reads just those pixels; the others grab the screen
    and crop (`grab_region`).
    """
    choice = pick(REGISTRY, backend, capability="capture")
    direct = getattr(choice.module, "grab_box", None)
    if direct is not None:
        try:
            return direct(box_desktop_px)
        except Exception as error:
            log.debug("grab_box with %s failed (%s); grabbing the screen", choice.name, error)
    return grab_region(screen_name, box_image_px, backend)


def watch_problem(backend: str | None = None) -> str:
    """Why a region cannot be watched with the backend that would grab it ("" when it can): a
    backend whose every grab asks the desktop says so in `WATCH_PROBLEM`."""
    choice = pick(REGISTRY, backend, capability="capture")
    return getattr(choice.module, "WATCH_PROBLEM", "")

"""Watched regions: read a boxed region again whenever its content has changed and then settled.

Every `interval` the region is grabbed (only that box, app/capture's `grab_box`) and shrunk to a
signature of at most SIGNATURE_SIDE² cell means; `ChangeTracker` compares it with the previous
tick's and with the one last read:

- changed since the last tick → still changing (a typewriter effect, a fade): wait;
- unchanged since the last tick but different from what was read → settled: read it, once;
- a region that never settles (a subtitle over moving video) is read every MAX_UNSETTLED_S anyway,
  and the same text twice in a row is not emitted again.

At most one read is in flight: a due read waits until the previous one has come back. The region is
shown by `WatchFrame`, a ring drawn just outside it (never inside, so never captured), and a tick
is skipped while any other window of the app covers the region: the app never reads itself.
"""

from __future__ import annotations

import logging
import time

import numpy as np
from PySide6.QtCore import QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QRegion
from PySide6.QtWidgets import QApplication, QWidget

from app.ui.guard import qt_override

log = logging.getLogger(__name__)

SIGNATURE_SIDE = 48  # cells along the longer side of the signature
CHANGE_LEVEL = 6  # a cell's mean luminance moving more than this (0-255) is a change
MAX_UNSETTLED_S = 8.0  # a region changing for longer than this (moving video) is read anyway
FRAME_WIDTH = 3  # px of the ring around the watched region
FRAME_COLOUR = QColor(56, 189, 248)
FRAME_PAUSED = QColor(148, 163, 184)


def signature(bgra: np.ndarray) -> np.ndarray:
    """Mean luminance of at most SIGNATURE_SIDE × SIGNATURE_SIDE cells of an (h, w, 4) BGRA array."""
    h, w = bgra.shape[:2]
    step = max(1, -(-max(h, w) // SIGNATURE_SIDE))
    rows, cols = max(1, h // step), max(1, w // step)
    g = bgra[: rows * step, : cols * step, 1].astype(np.float32)  # green ≈ luminance, cheaply
    g += bgra[: rows * step, : cols * step, 2]
    return g.reshape(rows, step, cols, step).mean(axis=(1, 3)) / 2


def differs(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None or a.shape != b.shape:
        return True
    return bool(np.abs(a - b).max() > CHANGE_LEVEL)


class ChangeTracker:
    """Decides, tick by tick, when a region is due for a read (no Qt, no clock of its own)."""

    def __init__(self):
        self.previous: np.ndarray | None = None  # the last tick's signature
        self.read: np.ndarray | None = None  # the signature of the last read
        self.changing_since: float | None = None

    def update(self, sig: np.ndarray, now: float) -> bool:
        """True when the region should be read now (the caller then calls `reading(sig)`)."""
        moved = differs(sig, self.previous)
        self.previous = sig
        if moved:
            if self.changing_since is None:
                self.changing_since = now
            return now - self.changing_since >= MAX_UNSETTLED_S  # never settles: read anyway
        self.changing_since = None  # settled
        return differs(sig, self.read)

    def reading(self, sig: np.ndarray) -> None:
        self.read = sig
        self.changing_since = None


def locate(box_desktop_px, screens):
    """(screen name, box in that screen's image px, logical rect) of a virtual-desktop physical box.

    `screens` are app/capture ScreenInfo; the box must lie on one screen (ValueError otherwise).
    """
    x, y, w, h = (int(v) for v in box_desktop_px)
    if w < 4 or h < 4:
        raise ValueError(f"the region {x},{y},{w},{h} is smaller than 4×4 pixels")
    for screen in screens:
        px, py, pw, ph = screen.physical
        if px <= x and py <= y and x + w <= px + pw and y + h <= py + ph:
            lx, ly, lw, lh = screen.logical
            sx, sy = pw / max(1, lw), ph / max(1, lh)
            ix, iy = x - px, y - py
            logical = (round(lx + ix / sx), round(ly + iy / sy), round(w / sx), round(h / sy))
            return screen.name, (ix, iy, w, h), logical
    where = ", ".join(f"{s.name} {','.join(map(str, s.physical))}" for s in screens)
    raise ValueError(f"the region {x},{y},{w},{h} does not lie on one screen (screens: {where})")


def qimage_bgra(image: QImage) -> np.ndarray:
    from app.ui.selection import qimage_bgra as view

    return view(image)


class WatchFrame(QWidget):
    """A thin ring just outside the watched region; clicks go through it, it never takes focus."""

    def __init__(self, logical_rect: tuple[int, int, int, int]):
        super().__init__(None)
        flags = (
            Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint
            | Qt.WindowType.Tool
            | Qt.WindowType.WindowDoesNotAcceptFocus
            | Qt.WindowType.WindowTransparentForInput
            | Qt.WindowType.X11BypassWindowManagerHint
        )
        self.setWindowFlags(flags)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setObjectName("watch-frame")
        self.paused = False
        x, y, w, h = logical_rect
        d = FRAME_WIDTH
        self.setGeometry(x - d, y - d, w + 2 * d, h + 2 * d)
        # Only the ring is part of the window: the region inside stays the application's own pixels.
        self.setMask(QRegion(self.rect()).subtracted(QRegion(QRect(d, d, w, h))))

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.update()

    @qt_override
    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), FRAME_PAUSED if self.paused else FRAME_COLOUR)
        painter.end()


class RegionWatcher(QObject):
    """Ticks every `interval_ms`; emits `read_due(QImage)` when the region's content has settled.

    `grab()` returns the region's pixels (QImage); `covered()` says whether another window of the
    app lies over the region now (the tick is then skipped). The owner reports each read's end with
    `read_done(text)` → whether the text is new (to emit), or `read_failed()`.
    """

    read_due = Signal(object)  # QImage of the region
    state_changed = Signal(str)  # "watching", "paused", "stopped"

    def __init__(self, region, interval_ms: int, grab, covered=None, parent=None):
        """`region`: anything with `box_desktop_px` and `logical_rect` (the app's Region)."""
        super().__init__(parent)
        self.region = region
        self._grab = grab
        self._covered = covered or (lambda: False)
        self.tracker = ChangeTracker()
        self.in_flight = False
        self.last_text: str | None = None
        self.ticks = 0
        self.reads = 0
        self.tick_ms = (
            0.0  # total time spent in ticks (grab + signature), for `hayai bench --watch`
        )
        self._timer = QTimer(self)
        self._timer.setInterval(max(50, int(interval_ms)))
        self._timer.timeout.connect(self.tick)
        self.frame = WatchFrame(region.logical_rect)
        self.state = "stopped"

    def set_interval(self, interval_ms: int) -> None:
        self._timer.setInterval(max(50, int(interval_ms)))

    def start(self) -> None:
        self.frame.show()
        self._timer.start()
        self._set_state("watching")

    def pause(self) -> None:
        if self.state == "watching":
            self._timer.stop()
            self.frame.set_paused(True)
            self._set_state("paused")

    def resume(self) -> None:
        if self.state == "paused":
            self.frame.set_paused(False)
            self._timer.start()
            self._set_state("watching")

    def toggle(self) -> None:
        self.pause() if self.state == "watching" else self.resume()

    def stop(self) -> None:
        self._timer.stop()
        self.frame.close()
        self.frame.deleteLater()
        self._set_state("stopped")

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            log.info("watched region %s: %s", self.region.box_desktop_px, state)
            self.state_changed.emit(state)

    def tick(self) -> None:
        started = time.perf_counter()
        self.ticks += 1
        try:
            if self._covered():
                log.debug("watched region covered by one of our windows: tick skipped")
                return
            try:
                image = self._grab()
            except Exception as exc:  # a screen gone, capture refused: say so once, keep ticking
                log.warning("watched region: capture failed: %s", exc)
                return
            sig = signature(qimage_bgra(image))
            due = self.tracker.update(sig, time.monotonic())
            if due and not self.in_flight:
                self.tracker.reading(sig)
                self.in_flight = True
                self.reads += 1
                self.read_due.emit(image)
        finally:
            self.tick_ms += (time.perf_counter() - started) * 1000

    def read_done(self, text: str) -> bool:
        """The read came back with `text`; True when it differs from the last one emitted."""
        self.in_flight = False
        text = text.strip()
        if not text or text == self.last_text:
            return False
        self.last_text = text
        return True

    def read_failed(self) -> None:
        """The read was dropped or failed: the region is read again at the next settled tick."""
        self.in_flight = False
        self.tracker.read = None


def app_windows_over(rect: tuple[int, int, int, int], exclude: QWidget | None = None) -> bool:
    """Whether a visible top-level window of this app (other than `exclude`) overlaps `rect`."""
    area = QRect(*rect)
    for widget in QApplication.topLevelWidgets():
        if widget is exclude or not widget.isVisible() or widget.objectName() == "watch-frame":
            continue
        if widget.frameGeometry().intersects(area):
            return True
    return False

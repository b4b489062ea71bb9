"""Watched regions: read a boxed region again whenever its content has changed and then settled.

Every `interval` after the last check ended the region is grabbed (only that box, app/capture's
`grab_box`) and shrunk to a signature of at most SIGNATURE_SIDE² cell means; `ChangeTracker`
decides from what the frames show, never from how fast they come:

- changed since the last frame → still changing (a typewriter effect, a fade): wait;
- the same picture in frames taken at least SETTLE_SHARE of an interval apart → settled: it is
  queued for a read, once (a grab that took long, followed at once by the next, proves nothing);
- a region that never settles (a subtitle over moving video) is queued every MAX_UNSETTLED_S worth
  of frames anyway, counted in frames so that a late tick does not read a picture mid-change.

Settled pictures wait in a queue and are read one at a time, in order, each once: a slow read
(a busy CPU) delays the next change, never drops it, and a read that was dropped or failed is
tried again, that same picture, at the next tick. The same text twice in a row is not emitted
again. The region is shown by `WatchFrame`, a ring drawn just outside it (never inside, so never
captured). The app never reads itself: when watching starts, its windows over the region are moved
out of the way where the screen has room; a tick while one of them still covers the region is
skipped, and the frame and the tray/window entry say which window covers it ("Covered by the
Hayai window").
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque

import numpy as np
from PySide6.QtCore import QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QRegion
from PySide6.QtWidgets import QApplication, QWidget

from app.platform.qt_images import qimage_bgra
from app.ui import theme
from app.ui.guard import qt_override

log = logging.getLogger(__name__)

SIGNATURE_SIDE = 48  # cells along the longer side of the signature
CHANGE_LEVEL = 6  # a cell's mean luminance moving more than this (0-255) is a change
MAX_UNSETTLED_S = 8.0  # a region changing for this long (moving video) is read anyway, in frames
# A picture is settled once frames this share of an interval apart show it unchanged (a timer may
# fire a little early: Qt's coarse timers by up to 5 %).
SETTLE_SHARE = 0.8
MAX_WAITING = 8  # settled pictures waiting for a read; beyond it the oldest is dropped, logged
FRAME_WIDTH = 3  # px of the ring around the watched region
FRAME_COLOUR = QColor(theme.ACCENT)
FRAME_PAUSED = QColor(theme.MUTED)
NOTE_BACKGROUND = QColor(15, 23, 42, 235)
NOTE_TEXT = QColor(theme.TEXT)
NOTE_HEIGHT = 24  # px of the note shown beside the frame while the region is covered


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
    """Decides, frame by frame, when a region holds a settled picture not yet taken for a read (no
    Qt; `now` is when each frame was grabbed, only to tell frames taken back to back apart)."""

    def __init__(self, interval_s: float):
        self.interval_s = interval_s
        self.previous: np.ndarray | None = None  # the last frame's signature
        self.since = 0.0  # when the picture of `previous` was first seen
        self.changes = 0  # frames in a row that differed from the one before
        self.taken: np.ndarray | None = None  # the signature of the last picture taken

    def update(self, sig: np.ndarray, now: float) -> bool:
        """True when this frame is to be read: settled (or never settling) and not yet taken."""
        if differs(sig, self.previous):
            self.previous, self.since = sig, now
            self.changes += 1
            if self.changes < max(2, math.ceil(MAX_UNSETTLED_S / self.interval_s)):
                return False  # still changing
        elif now - self.since < SETTLE_SHARE * self.interval_s:
            return False  # the same picture, but only for a moment so far
        self.changes = 0
        if not differs(sig, self.taken):
            return False  # still the picture taken last: nothing new
        self.taken = sig
        return True


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
        self.note = ""  # why the region is not read now ("Covered by the Hayai window"), if so
        self._region = QRect(*logical_rect)
        self._place()

    def _place(self) -> None:
        """The ring just outside the region, and the note's strip above it (below at a screen's top)."""
        d, r = FRAME_WIDTH, self._region
        ring = QRect(r.x() - d, r.y() - d, r.width() + 2 * d, r.height() + 2 * d)
        outer = QRect(ring)
        if self.note:
            width = max(ring.width(), self.fontMetrics().horizontalAdvance(self.note) + 20)
            above = ring.top() - NOTE_HEIGHT >= self._screen_top()
            y = ring.top() - NOTE_HEIGHT if above else ring.bottom() + 1
            self._note_rect = QRect(ring.left(), y, width, NOTE_HEIGHT)
            outer = outer.united(self._note_rect)
        self.setGeometry(outer)
        # Only the ring (and the note) is part of the window: the region inside stays the watched
        # application's own pixels.
        shape = QRegion(ring.translated(-outer.topLeft())).subtracted(
            QRegion(r.translated(-outer.topLeft()))
        )
        if self.note:
            shape = shape.united(QRegion(self._note_rect.translated(-outer.topLeft())))
        self.setMask(shape)

    def _screen_top(self) -> int:
        screen = QApplication.screenAt(self._region.center()) or QApplication.primaryScreen()
        return screen.geometry().top() if screen is not None else 0

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.update()

    def set_note(self, note: str) -> None:
        if note != self.note:
            self.note = note
            self._place()
            self.update()

    @qt_override
    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), FRAME_PAUSED if self.paused or self.note else FRAME_COLOUR)
        if self.note:
            note = self._note_rect.translated(-self.geometry().topLeft())
            painter.fillRect(note, NOTE_BACKGROUND)
            font = QFont(self.font())
            font.setWeight(QFont.Weight.DemiBold)
            painter.setFont(font)
            painter.setPen(NOTE_TEXT)
            painter.drawText(note.adjusted(10, 0, -10, 0), Qt.AlignmentFlag.AlignVCenter, self.note)
        painter.end()


class RegionWatcher(QObject):
    """Checks the region `interval_ms` after each check ended; emits `read_due(QImage)` for each
    settled picture, one read at a time, in the order they settled.

    `grab()` returns the region's pixels (QImage); `covered()` returns the window of the app that
    lies over the region now, or None (the tick is then skipped, and `covered_changed(note)` says
    so: "Covered by the Hayai window", "" once it is clear). The owner reports each read's end with
    `read_done(text)` → whether the text is new (to emit), or `read_failed()`. `clock` says when a
    frame was grabbed (tests pass their own).
    """

    read_due = Signal(object)  # QImage of the region
    state_changed = Signal(str)  # "watching", "paused", "stopped"
    covered_changed = Signal(str)  # "Covered by the … window" while one of ours covers it, else ""

    def __init__(
        self, region, interval_ms: int, grab, covered=None, parent=None, clock=time.monotonic
    ):
        """`region`: anything with `box_desktop_px` and `logical_rect` (the app's Region)."""
        super().__init__(parent)
        self.region = region
        self._grab = grab
        self._covered = covered or (lambda: None)
        self._clock = clock
        self.covered_note = ""
        self.tracker = ChangeTracker(max(50, int(interval_ms)) / 1000)
        self.waiting: deque = deque()  # settled pictures (QImage) not read yet, oldest first
        self.reading = None  # the picture whose read is in flight
        self.last_text: str | None = None
        self.ticks = 0
        self.reads = 0
        # total time spent in ticks (grab + signature), for `hayai bench --watch`
        self.tick_ms = 0.0
        # One shot, started again when a check ends: a check that took longer than the interval
        # (a busy CPU) is never followed at once by the next.
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.tick)
        self.set_interval(interval_ms)
        self.frame = WatchFrame(region.logical_rect)
        self.state = "stopped"

    @property
    def in_flight(self) -> bool:
        return self.reading is not None

    def set_interval(self, interval_ms: int) -> None:
        interval_ms = max(50, int(interval_ms))
        self._timer.setInterval(interval_ms)
        self.tracker.interval_s = interval_ms / 1000

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
        self.waiting.clear()
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
            self._check()
            self._send_next()
        except Exception:  # contained: the next tick comes all the same
            log.exception("watched region: a check failed")
        finally:
            self.tick_ms += (time.perf_counter() - started) * 1000
            if self.state == "watching":
                self._timer.start()

    def _check(self) -> None:
        """Grab a frame; a settled picture not read yet joins the queue."""
        window = self._covered()
        self._set_covered_note(covered_note(window) if window else "")
        if window:
            return
        now = self._clock()
        try:
            image = self._grab()
        except Exception as exc:  # a screen gone, capture refused: say so, keep ticking
            log.warning("watched region: capture failed: %s", exc)
            return
        if self.tracker.update(signature(qimage_bgra(image)), now):
            if len(self.waiting) >= MAX_WAITING:
                self.waiting.popleft()
                log.warning(
                    "watched region: %d changes wait for a read; skipped the oldest", MAX_WAITING
                )
            self.waiting.append(image)

    def _send_next(self) -> None:
        """The oldest settled picture to the reader, unless a read is in flight or we are paused."""
        if self.reading is None and self.waiting and self.state == "watching":
            self.reading = self.waiting.popleft()
            self.reads += 1
            self.read_due.emit(self.reading)

    def _set_covered_note(self, note: str) -> None:
        if note != self.covered_note:
            self.covered_note = note
            log.info(
                "watched region %s: %s", self.region.box_desktop_px, note or "no longer covered"
            )
            self.frame.set_note(note)
            self.covered_changed.emit(note)

    def read_done(self, text: str) -> bool:
        """The read came back with `text`; True when it differs from the last one emitted. The next
        settled picture, if one waits, goes to the reader right after."""
        self.reading = None
        QTimer.singleShot(0, self, self._send_next)
        text = text.strip()
        if not text or text == self.last_text:
            return False
        self.last_text = text
        return True

    def read_failed(self) -> None:
        """The read was dropped or failed: that same picture is read again at the next tick (a
        newer one waits behind it)."""
        if self.reading is not None:
            self.waiting.appendleft(self.reading)
            self.reading = None


def app_windows_over(
    rect: tuple[int, int, int, int], exclude: QWidget | None = None
) -> QWidget | None:
    """The first visible top-level window of this app (other than `exclude`) overlapping `rect`."""
    from app.ui.views import own_windows

    area = QRect(*rect)
    for widget in own_windows(exclude=(exclude,)):
        if widget.objectName() != "watch-frame" and widget.frameGeometry().intersects(area):
            return widget
    return None


def covered_note(window: QWidget) -> str:
    """ "Covered by the Hayai window" (the no-tray window), "Covered by the Reading log window"."""
    title = window.windowTitle().removeprefix("Hayai — ").removesuffix(" — Hayai").strip()
    return f"Covered by the {title or 'Hayai'} window"


def move_out_of(rect: tuple[int, int, int, int], windows) -> None:
    """Move each of `windows` that overlaps `rect` beside it (right, left, below, above: the first
    side where it fits on that screen's free area); one with no room stays where it is."""
    area = QRect(*rect)
    for window in windows:
        frame = window.frameGeometry()
        if not frame.intersects(area):
            continue
        screen = QApplication.screenAt(area.center()) or QApplication.primaryScreen()
        free = screen.availableGeometry() if screen is not None else QRect()
        gap = 2 * FRAME_WIDTH + NOTE_HEIGHT
        for x, y in (
            (area.right() + gap, frame.y()),
            (area.left() - gap - frame.width(), frame.y()),
            (frame.x(), area.bottom() + gap),
            (frame.x(), area.top() - gap - frame.height()),
        ):
            moved = frame.translated(x - frame.x(), y - frame.y())
            if free.contains(moved):
                window.move(window.pos() + moved.topLeft() - frame.topLeft())
                log.info("moved %r out of the watched region", window.windowTitle())
                break

"""Hover to read: hold a key (Shift by default), point at text anywhere on the screen, and the
popup dictionary shows the word under the pointer, beside the text and never over it.

    key down (app/hotkey/hold.py) → the pointer, looked at every TICK_MS while the key is held:
      on a block found since the key went down → the character there (app/hover_text.py), the
      block's pixels checked unchanged → the popup dictionary (app/dictionary_hook.py), with the
      whole text read and the word marked in it
      elsewhere → the screen around the pointer grabbed, our own windows painted over; its blocks
      found on the `hayai-hover` thread (app/hover_find.py); the block under the pointer cut out
      and read by the OCR worker as source "hover" (app/reads.py: history, reading log and text
      outputs as any read), unless a block of the same pixels was read before (texts are kept by
      a hash of their block's pixels) → the popup as above
    key up → the popup hides unless the pointer is in it (Mine, scrolling); another key pressed
      while it is held (typing) hides it at once

Nothing runs while the key is up: no timer, no grab. The GUI thread grabs (small boxes, a few ms
through mss) but never waits on the detector or the model. Reading our own windows is ruled out
twice: a pointer over one of them reads nothing, and a grab has them painted over; a block the
popup covered is grabbed again once the popup is out of the way.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QPoint, QRect, QTimer, Signal
from PySide6.QtGui import QColor, QCursor, QImage, QPainter

from app.capture.models import ScreenInfo
from app.hotkey.hold import HeldKey, key_label
from app.hotkey.models import HotkeyError
from app.hover_find import (
    BlockFinder,
    around,
    cut_by,
    intersects,
    logical_to_physical,
    moved,
    physical_screen,
    to_logical,
    to_physical,
)
from app.hover_text import char_at, spread
from app.ui.screens import screen_area
from app.ui.text_view import HoverGuard
from app.ui.views import own_windows

if TYPE_CHECKING:
    from app.application import Application

log = logging.getLogger(__name__)

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 in virtual-desktop physical px, exclusive ends

TICK_MS = 20  # how often the pointer is looked at while the key is held (never while it is up)
# physical px grabbed around the pointer to find the block there (the detector's time grows with
# its pixels): a balloon, a few lines of a page; doubled along each side the block reaches (a
# dialogue box's width), MAX_GROWS times at most
AROUND = (512, 320)
MAX_GROWS = 2
CROP_MARGIN = 0.25  # of the block's letter size around its lines, in the crop read (as hayai page)
TEXTS_KEPT = 64  # texts remembered by their block's pixels
READING_NOTE_MS = 250  # a read that takes longer says "Reading…" beside its block meanwhile


@dataclass(eq=False)
class Found:
    """A block found around the pointer (desktop physical px) and what is known of its text."""

    block: Any  # app.blocks.Block, moved to desktop px
    screen: ScreenInfo
    crop: Box  # the block grown by CROP_MARGIN letters: the pixels read and checked
    cut: tuple[bool, bool]  # it reaches a side (and or) top or bottom of the grab, not the screen's
    image: QImage | None = None  # the crop as it was read (Mine's picture)
    signature: Any = None  # its pixels in brief (app/reading/watch.py), to see them unchanged
    digest: bytes = b""
    text: str | None = None
    lines: list[str] = field(default_factory=list)  # the text over the block's lines
    reading: bool = False
    failed: str = ""
    checked: bool = True  # its pixels were grabbed just now (no need to look again)


@dataclass
class Area:
    """What the last detection grabbed and found."""

    rect: Box
    image: QImage
    found: list[Found]
    stale: bool = False  # found while the key was down before


@dataclass
class Job:
    """A detection under way."""

    id: int
    rect: Box
    screen: ScreenInfo
    image: QImage  # the grab, our windows painted over
    covered: list[tuple[Box, Any]]  # (physical box, window) of ours painted over
    grows: int
    again: bool  # taken again once our popup was out of the way
    started: float


class HoverView(QObject):
    """Hover to read as a text view of the popup dictionary (`DictionaryHook.hook`): its text is
    the block under the pointer, its line that block (the popup goes beside it, never over it)."""

    word_hovered = Signal(str, int, QPoint)
    word_left = Signal()

    def __init__(self, control: HoverControl):
        super().__init__(control)
        self.control = control
        self.text = ""
        self.rect = QRect()  # the block's crop, logical
        self.vertical = False

    def line_at(self, index: int) -> tuple[QRect, bool]:
        return QRect(self.rect), self.vertical

    def highlight(self, start: int, length: int) -> None:
        """The word looked up: the popup shows the whole text with it marked."""
        popup = self.control.popup()
        if popup is not None:
            popup.set_read(self.text if length else "", start, length)


class HoverControl(QObject):
    """The hover key, the pointer while it is held, and the popup. `apply()` follows the settings;
    `read_done` / `read_failed` come from app/reads.py."""

    def __init__(self, app: Application, pointer=None, finder: BlockFinder | None = None):
        super().__init__(app)
        self.app = app
        self.view = HoverView(self)
        self.pointer = pointer or QCursor.pos  # the pointer, logical (a bench or test gives one)
        self.finder = finder or BlockFinder(parent=self)
        self.finder.found.connect(self._on_found)
        self.finder.failed.connect(self._on_find_failed)
        self.key: HeldKey | None = None
        self.problem = ""  # why the key cannot be heard here, "" when it can
        self.held = False
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._screens: list[ScreenInfo] = []
        self._area: Area | None = None
        self._job: Job | None = None
        self._jobs = 0
        self._texts: OrderedDict[bytes, str] = OrderedDict()
        self._guard = HoverGuard()
        self._last_pos: QPoint | None = None
        self._due = False  # look at the pointer at the next tick even if it has not moved
        self._hooked = False
        self.shown: Found | None = None  # the block whose word the popup shows
        self.pressed_at = 0.0
        self._tick_at = 0.0
        self.timing: dict[str, float] = {}  # the last popup's figures (hayai bench --hover)

    # --- the setting and the key -----------------------------------------------------------------

    def apply(self) -> None:
        """Listen for the hover key while `hover/enabled` is on (the key `hover/key`)."""
        settings = self.app.settings
        on, key = settings.get("hover/enabled"), settings.get("hover/key")
        if self.key is not None and (not on or self.key.key != key):
            self.key.stop()
            self.key = None
            self._end_hold()
        self.problem = ""
        if on and self.key is None:
            try:
                held = HeldKey(key, self)
                held.start()
            except HotkeyError as exc:
                self.problem = str(exc)
                self.app.notify("Hover to read is not available", self.problem, error=True)
            else:
                held.pressed.connect(self.key_down)
                held.released.connect(self.key_up)
                held.interrupted.connect(self.key_interrupted)
                self.key = held
                self.finder.warm()
        for view in self.app.views:
            view.set_hover(on, key_label(key), self.problem)

    def set_enabled(self, on: bool) -> None:
        """The tray's "Hover to read": the setting, which `apply` then follows."""
        self.app.settings.set("hover/enabled", bool(on))

    def stop(self) -> None:
        if self.key is not None:
            self.key.stop()
            self.key = None
        self._end_hold()
        self.finder.stop()

    def key_down(self) -> None:
        if self.app.hotkey_control.recording or self.app.capture.busy():
            return  # Settings records a combo, or a selection is open
        from app.capture import qt_screens

        self.held = True
        self.pressed_at = time.perf_counter()
        self.timing = {}
        self._screens = qt_screens()
        if self._area is not None:  # the screen may have changed since the key was last down:
            self._area.stale = True  # its blocks are looked at again before they are used,
            for found in self._area.found:  # and a place without one is searched again
                found.checked = False
        self._job = None
        self._due = True
        self._hook()
        self._timer.start()
        self._tick()

    def key_up(self) -> None:
        self._end_hold()
        popup = self.popup()
        if (
            popup is not None
            and popup.isVisible()
            and popup.frameGeometry().contains(self.pointer())
        ):
            return  # the user went into it (Mine, scrolling): it hides once the pointer leaves
        self.hide()

    def key_interrupted(self) -> None:
        """Another key went down while the hover key was held: typing, not pointing."""
        self._end_hold()
        self.hide()

    def _end_hold(self) -> None:
        self.held = False
        self._timer.stop()
        self._job = None  # a detection under way is no longer wanted
        self._guard.left()

    # --- the pointer -----------------------------------------------------------------------------

    def _tick(self) -> None:
        pos = self.pointer()
        if pos == self._last_pos and not self._due:
            return
        self._last_pos, self._due = QPoint(pos), False
        self._tick_at = time.perf_counter()
        if any(w.frameGeometry().contains(pos) for w in own_windows()):
            return  # over the popup (Mine, scrolling) or another window of ours: nothing read
        p = to_physical(pos.x(), pos.y(), self._screens)
        if p is None:
            self._left()
            return
        if self._job is not None and _holds(self._job.rect, p):
            return  # being found
        area = self._area
        if area is None or not _holds(area.rect, p):
            self._find(p)
            return
        found = _found_at(area.found, p)
        if found is None and area.stale:
            self._find(p)  # text may have come there since
        elif found is None:
            self._left()
        elif any(found.cut):  # more of it lies beyond what was grabbed
            self._find(_middle(found.crop), _grown(area.rect, found.cut), 1)
        else:
            self._point(found, p, pos)

    def _point(self, found: Found, p: tuple[int, int], pos: QPoint) -> None:
        if found.failed:
            if self._guard.moved_to((id(found), "failed")):
                self._message(found, found.failed, pos)
            return
        if found.text is None and not self._known(found):
            if not found.reading and self._still(found):
                self._read(found, pos)
            return
        block = found.block
        spot = char_at(block.lines, block.vertical, found.lines, *p, reach=block.font_size)
        if spot is None:
            self._left()
            return
        if not self._guard.moved_to((id(found), spot.index)) or not self._still(found):
            return
        found.checked = False  # looked at again before the next word
        self._show(found, spot.index, pos)

    def _still(self, found: Found) -> bool:
        """The block's pixels are still those found (looked at again unless grabbed just now);
        where they changed, the text there is found again."""
        if found.checked or self._unchanged(found):
            found.checked = True
            return True
        log.info("hover: the block's pixels changed; finding the text again")
        self._area = None
        self._guard.left()
        self._due = True
        return False

    def _left(self) -> None:
        if self._guard.left():
            self.view.word_left.emit()

    # --- finding the block -----------------------------------------------------------------------

    def _find(
        self, p: tuple[int, int], size: tuple[int, int] = AROUND, grows: int = 0, again=False
    ) -> None:
        screen = physical_screen(*p, self._screens)
        if screen is None:
            return
        rect = around(*p, size, screen)
        try:
            image = self._grab(rect)
        except Exception as exc:  # CaptureError, a backend gone: said once, the hold ends
            log.warning("hover: the screen could not be grabbed: %s", exc)
            self._end_hold()
            self.app.notify("Hover to read could not read the screen", str(exc), error=True)
            return
        covered = self._paint_over_own_windows(image, rect)
        from app.qt_images import qimage_bgra

        self._jobs += 1
        self._job = Job(self._jobs, rect, screen, image, covered, grows, again, time.perf_counter())
        self.finder.find(self._jobs, qimage_bgra(image).copy())

    def _on_found(self, job_id: int, blocks) -> None:
        job = self._job
        if job is None or job.id != job_id or not self.held:
            return  # a newer detection, or the key is up
        self.timing["detect_ms"] = (
            self.timing.get("detect_ms", 0.0) + (time.perf_counter() - job.started) * 1000
        )
        x0, y0 = job.rect[:2]
        found = [self._found(moved(block, x0, y0), job) for block in blocks]
        p = (
            to_physical(self._last_pos.x(), self._last_pos.y(), self._screens)
            if self._last_pos
            else None
        )
        target = _found_at(found, p) if p is not None else None
        if target is not None and any(target.cut):  # the grab grows around it
            self._find(_middle(target.crop), _grown(job.rect, target.cut), job.grows + 1, job.again)
            return
        popup = self.popup()
        if (
            target is not None
            and p is not None
            and not job.again
            and any(window is popup and intersects(box, target.crop) for box, window in job.covered)
        ):
            # our popup stood over the block: out of the way, the block is grabbed again
            from app.capture_flow import REPAINT_MS

            self.hide()
            size = (job.rect[2] - job.rect[0], job.rect[3] - job.rect[1])
            QTimer.singleShot(REPAINT_MS, self, lambda: self._find_again(job, p, size))
            return
        self._job = None
        self._area = Area(job.rect, job.image, found)
        self._due = True
        self._tick()

    def _find_again(self, job: Job, p: tuple[int, int], size: tuple[int, int]) -> None:
        if self.held and self._job is job:  # nothing newer was asked meanwhile
            self._find(p, size, job.grows, again=True)

    def _on_find_failed(self, job_id: int, message: str) -> None:
        if self._job is None or self._job.id != job_id:
            return
        self._job = None
        self._end_hold()
        self.app.notify(
            "Hover to read cannot find text", f"The text detector failed: {message}", error=True
        )

    def _found(self, block, job: Job) -> Found:
        margin = int(round(CROP_MARGIN * block.font_size))
        x0, y0, x1, y1 = block.box
        r = job.rect
        crop = (
            max(r[0], x0 - margin),
            max(r[1], y0 - margin),
            min(r[2], x1 + margin),
            min(r[3], y1 + margin),
        )
        cut = (False, False)
        if job.grows < MAX_GROWS:
            from app.qt_images import qimage_bgra

            cut = cut_by(block.box, r, job.screen, qimage_bgra(job.image))
        return Found(block, job.screen, crop, cut)

    def _grab(self, box: Box) -> QImage:
        """The physical `box` (on one screen) as it is on the screen now."""
        from app.reading.watch import locate
        from app.reads import Region

        desktop = (box[0], box[1], box[2] - box[0], box[3] - box[1])
        name, image_box, logical = locate(desktop, self._screens)
        return self.app.capture.route.box(Region(name, image_box, desktop, logical))

    def _paint_over_own_windows(self, image: QImage, rect: Box) -> list[tuple[Box, Any]]:
        """Our windows in the grab painted over with its mean colour: never read, never found."""
        covered = []
        for window in own_windows():
            g = window.frameGeometry()
            box = logical_to_physical(
                (g.x(), g.y(), g.x() + g.width(), g.y() + g.height()), self._screens
            )
            if box is not None and intersects(box, rect):
                covered.append((box, window))
        if covered:
            fill = QColor(image.scaled(1, 1).pixelColor(0, 0))
            painter = QPainter(image)
            for (x0, y0, x1, y1), _ in covered:
                painter.fillRect(QRect(x0 - rect[0], y0 - rect[1], x1 - x0, y1 - y0), fill)
            painter.end()
        return covered

    # --- reading it ------------------------------------------------------------------------------

    def _known(self, found: Found) -> bool:
        """Cut the block out of the grab; True when a block of these pixels was read before."""
        from app.qt_images import qimage_bgra
        from app.reading.watch import signature

        area = self._area
        if found.image is None and area is not None:
            r = area.rect
            x0, y0, x1, y1 = found.crop
            found.image = area.image.copy(QRect(x0 - r[0], y0 - r[1], x1 - x0, y1 - y0))
            bgra = qimage_bgra(found.image)
            found.signature = signature(bgra)
            found.digest = hashlib.blake2b(bgra.tobytes(), digest_size=16).digest()
        text = self._texts.get(found.digest)
        if text is None:
            return False
        self._texts.move_to_end(found.digest)
        self._learn(found, text)
        return True

    def _read(self, found: Found, pos: QPoint) -> None:
        if found.image is None or not self.app.reads.hover_may_read():
            self._due = True  # a box's read is pending: this one goes once it is done
            return
        from app.reading.watch import locate
        from app.reads import Region

        x0, y0, x1, y1 = found.crop
        desktop = (x0, y0, x1 - x0, y1 - y0)
        name, image_box, logical = locate(desktop, self._screens)
        found.reading = True
        region = Region(name, image_box, desktop, logical)
        self.app.reads.submit(found.image, region, self.pressed_at, source="hover", origin=found)
        QTimer.singleShot(READING_NOTE_MS, self, lambda: self._reading_note(found))

    def _reading_note(self, found: Found) -> None:
        if found.reading and self.held and self._area is not None and found in self._area.found:
            self._message(found, "Reading…", self._last_pos or self.pointer())

    def read_done(self, found: object, result) -> None:
        """The worker read a block (app/reads.py); its text is kept by its pixels."""
        assert isinstance(found, Found)  # the origin this module gave Reads.submit
        found.reading = False
        self._texts[found.digest] = result.text
        while len(self._texts) > TEXTS_KEPT:
            self._texts.popitem(last=False)
        self._learn(found, result.text)
        self.timing["model_ms"] = self.timing.get("model_ms", 0.0) + result.ocr_ms
        if self.held:
            self._guard.left()  # the "Reading…" note gives way to the word
            self._due = True
            self._tick()

    def read_failed(self, found: object, message: str) -> None:
        """A read failed (`message`), or another read of the user's pushed it out ("")."""
        assert isinstance(found, Found)  # the origin this module gave Reads.submit
        found.reading = False
        if not message:
            self._due = True  # read again at the next tick
            return
        status = self.app.status
        found.failed = (
            "The model is still loading; hold the key again in a moment."
            if status.state == "loading"
            else status.read_failure(message)
        )
        if self.held:
            self._guard.left()
            self._due = True

    def _learn(self, found: Found, text: str) -> None:
        found.text = text
        found.lines = spread(text, found.block.lines, found.block.vertical)

    def _unchanged(self, found: Found) -> bool:
        """The block's pixels still the ones read (app/reading/watch.py's test of a change)."""
        from app.qt_images import qimage_bgra
        from app.reading.watch import differs, signature

        try:
            image = self._grab(found.crop)
        except Exception as exc:
            log.debug("hover: the block could not be grabbed again: %s", exc)
            return False
        self._paint_over_own_windows(image, found.crop)
        return not differs(signature(qimage_bgra(image)), found.signature)

    # --- the popup -------------------------------------------------------------------------------

    def popup(self):
        controller = self.app.dictionary_popup
        return None if controller is None else controller.popup

    def _hook(self) -> None:
        """The popup dictionary reads this view's words (made once the dictionary is attached)."""
        hook = self.app.dictionary_hook
        if not self._hooked and hook.controller is not None:
            hook.hook(self.view)
            self._hooked = True

    def _place(self, found: Found) -> None:
        x0, y0, x1, y1 = to_logical(found.crop, found.screen)
        self.view.rect = QRect(x0, y0, x1 - x0, y1 - y0)
        self.view.vertical = found.block.vertical

    def _show(self, found: Found, index: int, pos: QPoint) -> None:
        self.shown = found
        self.view.text = "".join(found.lines)
        self._place(found)
        self._hook()
        self.view.word_hovered.emit(self.view.text, index, pos)
        now = time.perf_counter()
        self.timing["word_ms"] = (now - self._tick_at) * 1000
        self.timing.setdefault("first_ms", (now - self.pressed_at) * 1000)

    def _message(self, found: Found, text: str, pos: QPoint) -> None:
        """A sentence in the popup beside the block ("Reading…", why it was not read)."""
        controller = self.app.dictionary_popup
        if controller is None:
            return
        controller.hide()  # its last word is forgotten: the next one is shown, even the same
        self._place(found)
        controller.popup.set_message(text)
        controller.popup.show_at(pos, screen_area(pos), self.view.rect, self.view.vertical)

    def hide(self) -> None:
        self._guard.left()
        self.app.dictionary_hook.hide()

    def mining_context(self, max_side: int) -> tuple[bytes | None, str]:
        """Mine from the popup: the picture of the block the word was read in, and where."""
        from app.reads import png_bytes

        found = self.shown
        if found is None or found.image is None:
            return None, "Hayai · hover"
        return png_bytes(found.image, max_side) or None, f"Hayai · hover · {found.screen.name}"


def _holds(box: Box, p: tuple[int, int]) -> bool:
    return box[0] <= p[0] < box[2] and box[1] <= p[1] < box[3]


def _found_at(found: list[Found], p: tuple[int, int]) -> Found | None:
    """The block a pointer at physical `p` is on (app/blocks' click rule)."""
    from app.blocks import block_at

    block = block_at([f.block for f in found], *p)
    return next((f for f in found if f.block is block), None)


def _middle(box: Box) -> tuple[int, int]:
    return (box[0] + box[2]) // 2, (box[1] + box[3]) // 2


def _grown(box: Box, cut: tuple[bool, bool]) -> tuple[int, int]:
    """The size of a grab twice as wide where a block reached its side, twice as high where it
    reached its top or bottom."""
    return (box[2] - box[0]) * (2 if cut[0] else 1), (box[3] - box[1]) * (2 if cut[1] else 1)

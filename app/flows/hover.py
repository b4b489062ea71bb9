"""Hover to read: hold a key (Shift by default), point at text anywhere on the screen, and the
popup dictionary shows the word under the pointer, beside the text and never over it.

    key down (app/hotkey/hold.py) → the pointer, looked at every TICK_MS while the key is held:
      on a block found since the key went down → the character there (app/hover/text.py), the
      block's pixels checked unchanged → the popup dictionary (app/flows/dictionary_hook.py), with the
      whole text read and the word marked in it
      elsewhere → the screen around the pointer grabbed, our own windows painted over; its blocks
      found on the detector's thread (app/hover/find.py); the block under the pointer cut out
      and read by the OCR worker as source "hover" (app/flows/reads.py: history, reading log and text
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
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QPoint, QRect, QTimer, Signal
from PySide6.QtGui import QImage

from app.blocks.params import HOVER, HOVER_SMALL_LETTERS, PARAMS
from app.capture.models import ScreenInfo
from app.hotkey.hold import held_key, key_label
from app.hotkey.models import HotkeyError
from app.hover.find import (
    Area,
    BlockFinder,
    Box,
    Found,
    Job,
    around,
    found_at,
    found_in,
    grown,
    holds,
    intersects,
    middle,
    moved,
    paint_over_own_windows,
    physical_screen,
    to_physical,
)
from app.hover.text import char_at, spread
from app.hover.view import HoverView
from app.ui.text_view import HoverGuard
from app.ui.views import own_windows

if TYPE_CHECKING:
    from app.flows.capture import CaptureFlow, CaptureRoute
    from app.flows.dictionary_hook import DictionaryHook
    from app.flows.hotkeys import HotkeyControl
    from app.flows.model_status import ModelStatus
    from app.flows.reads import Reads
    from app.settings import Settings

log = logging.getLogger(__name__)

TICK_MS = 20  # how often the pointer is looked at while the key is held (never while it is up)
# physical px grabbed around the pointer to find the block there (the detector's time grows with
# its pixels): a balloon, a few lines of a page; doubled along each side the block reaches (a
# dialogue box's width), MAX_GROWS times at most
AROUND = (512, 320)
MAX_GROWS = 2
TEXTS_KEPT = 64  # texts remembered by their block's pixels
READING_NOTE_MS = 250  # a read that takes longer says "Reading…" beside its block meanwhile


class HoverControl(QObject):
    """The hover key, the pointer while it is held, and the popup. `apply()` follows the settings;
    `read_done` / `read_failed` are the answers of the reads it asks of app/flows/reads.py."""

    notice = Signal(str, str, bool)  # title, message, error: for the user
    hover_changed = Signal(bool, str, str)  # on, the key's name, why it cannot work ("": it can)

    def __init__(
        self,
        settings: Settings,
        route: CaptureRoute,
        capture: CaptureFlow,
        hotkeys: HotkeyControl,
        reads: Reads,
        status: ModelStatus,
        hook: DictionaryHook,
        pointer=None,
        finder: BlockFinder | None = None,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.settings = settings
        self.route = route  # the pixels around the pointer
        self.capture = capture  # no hover while a selection is open
        self.hotkeys = hotkeys  # nor while Settings records a combo
        self.reads = reads  # a block is read as any read, source "hover"
        self.status = status  # a failed read in words
        self.view = HoverView(hook, self)
        # the pointer, logical; None while not known (a bench or test gives its own)
        self.pointer = pointer or self._key_pointer
        self.finder = finder or BlockFinder(parent=self)
        self.finder.found.connect(self._on_found)
        self.finder.failed.connect(self._on_find_failed)
        self.key = None  # the hover key's listener (app/hotkey/hold.py's held_key)
        self.problem = ""  # why the key cannot be heard here, "" when it can
        self._applied = False  # apply() ran before: a key started now was turned on by the user
        self.held = False
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._screens: list[ScreenInfo] = []
        self._area: Area | None = None
        self._job: Job | None = None
        self._jobs = 0
        self._small_letters = False  # the last block found had them: grabs are found enlarged
        self._texts: OrderedDict[bytes, str] = OrderedDict()
        self._guard = HoverGuard()
        self._last_pos: QPoint | None = None
        self._due = False  # look at the pointer at the next tick even if it has not moved
        self.pressed_at = 0.0
        self._tick_at = 0.0
        self.timing: dict[str, float] = {}  # the last popup's figures (hayai bench --hover)

    # --- the setting and the key -----------------------------------------------------------------

    def apply(self) -> None:
        """Listen for the hover key while `hover/enabled` is on (the key `hover/key`)."""
        settings = self.settings
        on, key = settings.get("hover/enabled"), settings.get("hover/key")
        if self.key is not None and (not on or self.key.key != key):
            self.key.stop()
            self.key = None
            self._end_hold()
        self.problem = ""
        if on and self.key is None:
            try:
                held = held_key(key, self)
                held.start()
            except Exception as exc:  # HotkeyError's words, or the X server's refusal, said
                if not isinstance(exc, HotkeyError):
                    log.exception("hover to read: the key cannot be listened for")
                self.problem = str(exc) or type(exc).__name__
                self.notice.emit("Hover to read is not available", self.problem, True)
            else:
                held.pressed.connect(self.key_down)
                held.released.connect(self.key_up)
                held.interrupted.connect(self.key_interrupted)
                held.failed.connect(self._key_failed)
                self.key = held
                self.finder.warm()
                if held.note and self._applied:  # turned on now (at start, the log says it)
                    self.notice.emit("Hover to read is on", held.note, False)
        self._applied = True
        self.hover_changed.emit(on, key_label(key), self.problem)

    def _key_failed(self, why: str) -> None:
        """The key's listener stopped hearing it (Sway went), or a hold could not start."""
        self._end_hold()
        self.hide()
        self.problem = why
        self.notice.emit("Hover to read is not available", why, True)
        self.hover_changed.emit(True, key_label(self.settings.get("hover/key")), why)

    def set_enabled(self, on: bool) -> None:
        """The tray's "Hover to read": the setting, which `apply` then follows."""
        self.settings.set("hover/enabled", bool(on))

    def stop(self) -> None:
        if self.key is not None:
            self.key.stop()
            self.key = None
        self._end_hold()
        self.finder.stop()

    def key_down(self) -> None:
        if self.hotkeys.recording or self.capture.busy():
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
        self.view.hook()
        self._timer.start()
        self._tick()

    def key_up(self) -> None:
        self._end_hold()
        popup, pos = self.view.popup(), self.pointer()
        if (
            popup is not None
            and pos is not None
            and popup.isVisible()
            and popup.frameGeometry().contains(pos)
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

    def _key_pointer(self) -> QPoint | None:
        return None if self.key is None else self.key.pointer()

    def _tick(self) -> None:
        pos = self.pointer()
        if pos is None:
            return  # not known yet (Sway's glass tells it at the pointer's first move)
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
        if self._job is not None and holds(self._job.rect, p):
            return  # being found
        area = self._area
        if area is None or not holds(area.rect, p):
            self._find(p)
            return
        found = found_at(area.found, p)
        if found is None and area.stale:
            self._find(p)  # text may have come there since
        elif found is None:
            self._left()
        elif any(found.cut):  # more of it lies beyond what was grabbed
            self._find(middle(found.crop), grown(area.rect, found.cut), 1)
        else:
            self._point(found, p, pos)

    def _point(self, found: Found, p: tuple[int, int], pos: QPoint) -> None:
        if found.failed:
            if self._guard.moved_to((id(found), "failed")):
                self.view.say(found, found.failed, pos)
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
        self.view.show_word(found, spot.index, pos)
        now = time.perf_counter()
        self.timing["word_ms"] = (now - self._tick_at) * 1000
        self.timing.setdefault("first_ms", (now - self.pressed_at) * 1000)

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
        self,
        p: tuple[int, int],
        size: tuple[int, int] = AROUND,
        grows: int = 0,
        again=False,
        enlarged: bool | None = None,
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
            self.notice.emit("Hover to read could not read the screen", str(exc), True)
            return
        covered = paint_over_own_windows(image, rect, self._screens)
        from app.platform.qt_images import qimage_bgra

        if enlarged is None:
            enlarged = self._small_letters
        self._jobs += 1
        self._job = Job(
            self._jobs, rect, screen, image, covered, grows, again, time.perf_counter(), enlarged
        )
        log.debug("hover: finding the text in %s (grown %d, %d windows of ours painted over)",
                  rect, grows, len(covered))  # fmt: skip
        self.finder.find(self._jobs, qimage_bgra(image).copy(), PARAMS if enlarged else HOVER)

    def _find_enlarged(self, job: Job) -> None:
        """The same grab found again, enlarged as a page is (app/blocks/params.py, HOVER)."""
        from dataclasses import replace

        from app.platform.qt_images import qimage_bgra

        self._jobs += 1
        self._job = replace(job, id=self._jobs, started=time.perf_counter(), enlarged=True)
        self.finder.find(self._jobs, qimage_bgra(job.image).copy(), PARAMS)

    def _on_found(self, job_id: int, blocks) -> None:
        job = self._job
        if job is None or job.id != job_id or not self.held:
            return  # a newer detection, or the key is up
        self.timing["detect_ms"] = (
            self.timing.get("detect_ms", 0.0) + (time.perf_counter() - job.started) * 1000
        )
        x0, y0 = job.rect[:2]
        found = [found_in(moved(block, x0, y0), job, job.grows < MAX_GROWS) for block in blocks]
        p = (
            to_physical(self._last_pos.x(), self._last_pos.y(), self._screens)
            if self._last_pos
            else None
        )
        target = found_at(found, p) if p is not None else None
        log.debug("hover: %d blocks in %.0f ms; at the pointer %s", len(found),
                  (time.perf_counter() - job.started) * 1000, target and target.crop)  # fmt: skip
        if target is not None and any(target.cut):  # the grab grows around it
            self._find(
                middle(target.crop), grown(job.rect, target.cut), job.grows + 1, job.again,
                job.enlarged,
            )  # fmt: skip
            return
        small = target is not None and target.block.font_size < HOVER_SMALL_LETTERS
        if not job.enlarged and (target is None or small):
            log.debug("hover: %s at the pointer; found again enlarged",
                      "small letters" if small else "no block")  # fmt: skip
            self._find_enlarged(job)
            return
        if target is not None:
            self._small_letters = small  # the next grab starts where these letters are found
        popup = self.view.popup()
        if (
            target is not None
            and p is not None
            and not job.again
            and any(window is popup and intersects(box, target.crop) for box, window in job.covered)
        ):
            # our popup stood over the block: out of the way, the block is grabbed again
            from app.flows.capture import REPAINT_MS

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
            self._find(p, size, job.grows, again=True, enlarged=job.enlarged)

    def _on_find_failed(self, job_id: int, message: str) -> None:
        if self._job is None or self._job.id != job_id:
            return
        self._job = None
        self._end_hold()
        self.notice.emit(
            "Hover to read cannot find text", f"The text detector failed: {message}", True
        )

    def _grab(self, box: Box) -> QImage:
        """The physical `box` (on one screen) as it is on the screen now."""
        from app.capture.region import Region
        from app.reading.watch import locate

        desktop = (box[0], box[1], box[2] - box[0], box[3] - box[1])
        name, image_box, logical = locate(desktop, self._screens)
        return self.route.box(Region(name, image_box, desktop, logical))

    # --- reading it ------------------------------------------------------------------------------

    def _known(self, found: Found) -> bool:
        """Cut the block out of the grab; True when a block of these pixels was read before."""
        from app.platform.qt_images import qimage_bgra
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
        if found.image is None or not self.reads.hover_may_read():
            self._due = True  # a box's read is pending: this one goes once it is done
            return
        from app.capture.region import Region
        from app.reading.watch import locate

        x0, y0, x1, y1 = found.crop
        desktop = (x0, y0, x1 - x0, y1 - y0)
        name, image_box, logical = locate(desktop, self._screens)
        found.reading = True
        region = Region(name, image_box, desktop, logical)
        self.reads.submit(
            found.image,
            region,
            self.pressed_at,
            source="hover",
            done=lambda result: self.read_done(found, result),
            failed=lambda message: self.read_failed(found, message),
        )
        QTimer.singleShot(READING_NOTE_MS, self, lambda: self._reading_note(found))

    def _reading_note(self, found: Found) -> None:
        area, pos = self._area, self._last_pos
        if (
            found.reading
            and self.held
            and area is not None
            and found in area.found
            and pos is not None
        ):
            self.view.say(found, "Reading…", pos)

    def read_done(self, found: Found, result) -> bool:
        """The worker read a block (app/flows/reads.py); its text is kept by its pixels, and goes on
        to the history and the text outputs (True)."""
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
        return True

    def read_failed(self, found: Found, message: str) -> None:
        """A read failed (`message`), or another read of the user's pushed it out ("")."""
        found.reading = False
        if not message:
            self._due = True  # read again at the next tick
            return
        log.warning("hover: reading failed: %s", message)
        status = self.status
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
        from app.platform.qt_images import qimage_bgra
        from app.reading.watch import differs, signature

        try:
            image = self._grab(found.crop)
        except Exception as exc:
            log.debug("hover: the block could not be grabbed again: %s", exc)
            return False
        paint_over_own_windows(image, found.crop, self._screens)
        return not differs(signature(qimage_bgra(image)), found.signature)

    def hide(self) -> None:
        self._guard.left()
        self.view.hide()

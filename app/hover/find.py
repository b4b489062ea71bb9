"""Hover to read's helpers beside its controller (app/flows/hover.py): what was found around the pointer,
where things are in physical pixels, our windows kept out of a grab, and the text detector off the
GUI thread.

Geometry: the pointer and our windows are in Qt's global logical coordinates, grabs and the
detector's blocks in virtual-desktop physical pixels (app/capture/models.py). Qt keeps a screen's
top-left as it is and divides its size by the scale factor, so a point's physical place is its
screen's physical top-left plus its offset on that screen times the screen's measured scale;
each screen has its own (HiDPI beside a normal monitor).

`BlockFinder` runs `app.blocks.find_blocks` on the app's detector thread (app/blocks/background.py,
joined at quit): one picture waiting at a time, a newer one replaces it; each answer (the blocks,
or the error) comes back to the GUI thread through a queued signal. A failure is logged with its
traceback and answered, and the thread goes on with the next picture.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

from PySide6.QtCore import QObject, QRect, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter

from app.capture.models import ScreenInfo
from app.engines.worker import Mailbox
from app.ui.views import own_windows

log = logging.getLogger(__name__)

Box = tuple[int, int, int, int]  # x0, y0, x1, y1, x1 and y1 exclusive


@dataclass(eq=False)
class Found:
    """A block found around the pointer (desktop physical px) and what is known of its text."""

    block: Any  # app.blocks.Block, moved to desktop px
    screen: ScreenInfo
    crop: Box  # the block with a margin of its letters: the pixels read and checked
    cut: tuple[
        bool, bool
    ]  # it runs on beyond a side, a top or bottom of the grab (not the screen's)
    image: QImage | None = None  # the crop as it was read (Mine's picture)
    signature: Any = None  # its pixels in brief (app/reading/watch.py), to see them unchanged
    digest: bytes = b""  # a hash of its pixels, the key its text is kept by
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
    enlarged: bool = False  # seen enlarged as a page is (small letters), not at its size


def found_in(block, job: Job, may_grow: bool) -> Found:
    """A block found in `job`'s grab (moved to desktop px): its crop, and whether it runs on
    beyond the grab (only asked while the grab `may_grow`)."""
    from app.page.read import crop_margin
    from app.platform.qt_images import qimage_bgra

    margin = crop_margin(block)  # the crop a click or hayai page reads of the same block
    x0, y0, x1, y1 = block.box
    r = job.rect
    crop = (max(r[0], x0 - margin), max(r[1], y0 - margin),
            min(r[2], x1 + margin), min(r[3], y1 + margin))  # fmt: skip
    # a letter cut by the edge may be left out of the block: within a letter of it, it may run on
    slack = max(4, round(block.font_size))
    cut = (
        cut_by(block.box, r, job.screen, qimage_bgra(job.image), slack)
        if may_grow
        else (False, False)
    )
    return Found(block, job.screen, crop, cut)


def holds(box: Box, p: tuple[int, int]) -> bool:
    return box[0] <= p[0] < box[2] and box[1] <= p[1] < box[3]


def found_at(found: list[Found], p: tuple[int, int]) -> Found | None:
    """The block a pointer at physical `p` is on (app/blocks' click rule)."""
    from app.blocks import block_at

    block = block_at([f.block for f in found], *p)
    return next((f for f in found if f.block is block), None)


def middle(box: Box) -> tuple[int, int]:
    return (box[0] + box[2]) // 2, (box[1] + box[3]) // 2


def grown(box: Box, cut: tuple[bool, bool]) -> tuple[int, int]:
    """The size of a grab twice as wide where a block ran on beyond its side, twice as high
    where it ran on beyond its top or bottom."""
    return (box[2] - box[0]) * (2 if cut[0] else 1), (box[3] - box[1]) * (2 if cut[1] else 1)


def paint_over_own_windows(
    image: QImage, rect: Box, screens: list[ScreenInfo]
) -> list[tuple[Box, Any]]:
    """Our windows in a grab of the physical `rect` painted over with its mean colour: never
    read, never found. Returns them, (physical box, window)."""
    covered = []
    for window in own_windows():
        g = window.frameGeometry()
        box = logical_to_physical((g.x(), g.y(), g.x() + g.width(), g.y() + g.height()), screens)
        if box is not None and intersects(box, rect):
            covered.append((box, window))
    if covered:
        fill = QColor(image.scaled(1, 1).pixelColor(0, 0))
        painter = QPainter(image)
        for (x0, y0, x1, y1), _ in covered:
            painter.fillRect(QRect(x0 - rect[0], y0 - rect[1], x1 - x0, y1 - y0), fill)
        painter.end()
    return covered


def _scale(screen: ScreenInfo) -> tuple[float, float]:
    lw, lh = screen.logical[2:]
    pw, ph = screen.physical[2:]
    return pw / max(1, lw), ph / max(1, lh)


def _holding(rect, x: float, y: float) -> bool:
    rx, ry, rw, rh = rect
    return rx <= x < rx + rw and ry <= y < ry + rh


def screen_at(x: float, y: float, screens: list[ScreenInfo]) -> ScreenInfo | None:
    """The screen whose logical rect holds the logical point (x, y)."""
    return next((s for s in screens if _holding(s.logical, x, y)), None)


def to_physical(x: float, y: float, screens: list[ScreenInfo]) -> tuple[int, int] | None:
    """The logical point (x, y) in virtual-desktop physical px; None off every screen."""
    screen = screen_at(x, y, screens)
    if screen is None:
        return None
    sx, sy = _scale(screen)
    return (
        int(screen.physical[0] + (x - screen.logical[0]) * sx),
        int(screen.physical[1] + (y - screen.logical[1]) * sy),
    )


def physical_screen(x: int, y: int, screens: list[ScreenInfo]) -> ScreenInfo | None:
    """The screen whose physical rect holds the physical point (x, y)."""
    return next((s for s in screens if _holding(s.physical, x, y)), None)


def to_logical(box: Box, screen: ScreenInfo) -> Box:
    """A physical box on `screen` in logical coordinates (x0, y0, x1, y1), rounded outwards."""
    import math

    sx, sy = _scale(screen)
    px, py = screen.physical[:2]
    lx, ly = screen.logical[:2]
    return (
        math.floor(lx + (box[0] - px) / sx),
        math.floor(ly + (box[1] - py) / sy),
        math.ceil(lx + (box[2] - px) / sx),
        math.ceil(ly + (box[3] - py) / sy),
    )


def logical_to_physical(box: Box, screens: list[ScreenInfo]) -> Box | None:
    """A logical box (a window of ours) in physical px, by the screen its top-left is on (a
    window across two screens of one scale, as on most desktops, comes out whole)."""
    screen = screen_at(box[0], box[1], screens) or screen_at(box[2] - 1, box[3] - 1, screens)
    if screen is None:
        return None
    sx, sy = _scale(screen)
    px, py = screen.physical[:2]
    lx, ly = screen.logical[:2]
    return (
        int(px + (box[0] - lx) * sx),
        int(py + (box[1] - ly) * sy),
        int(round(px + (box[2] - lx) * sx)),
        int(round(py + (box[3] - ly) * sy)),
    )


def around(x: int, y: int, size: tuple[int, int], screen: ScreenInfo) -> Box:
    """A box of `size` physical px centred on (x, y), moved and cut to lie on `screen`."""
    px, py, pw, ph = screen.physical
    w, h = min(size[0], pw), min(size[1], ph)
    x0 = min(max(px, x - w // 2), px + pw - w)
    y0 = min(max(py, y - h // 2), py + ph - h)
    return (x0, y0, x0 + w, y0 + h)


def intersects(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


INK_RANGE = 60  # luminance steps between the lightest and darkest px of an edge where ink is


def cut_by(
    block_box: Box, area: Box, screen: ScreenInfo, bgra=None, slack: int = 4
) -> tuple[bool, bool]:
    """Does the block run on beyond a left or right, a top or bottom edge of `area` (not the
    screen's)? (sideways, up or down). A block that ends within `slack` px of such an edge runs on
    when the grab `bgra` (area's pixels, B, G, R, A) has ink on that edge along the block (a
    letter cut by the edge is often left out of the block; a block whose margin reaches the edge
    over bare paper ends there); without `bgra`, whenever it ends that near."""
    px, py, pw, ph = screen.physical
    x0, y0, x1, y1 = (block_box[0] - area[0], block_box[1] - area[1],
                      block_box[2] - area[0], block_box[3] - area[1])  # fmt: skip
    w, h = area[2] - area[0], area[3] - area[1]

    def inked(strip) -> bool:
        if bgra is None:
            return True
        g = strip[..., 1]  # green ≈ luminance
        return g.size > 0 and int(g.max()) - int(g.min()) > INK_RANGE

    rows = slice(max(0, y0), min(h, y1))
    cols = slice(max(0, x0), min(w, x1))
    return (
        (x0 <= slack and area[0] > px and inked(bgra[rows, :2] if bgra is not None else None))
        or (
            w - x1 <= slack
            and area[2] < px + pw
            and inked(bgra[rows, w - 2 :] if bgra is not None else None)
        ),
        (y0 <= slack and area[1] > py and inked(bgra[:2, cols] if bgra is not None else None))
        or (
            h - y1 <= slack
            and area[3] < py + ph
            and inked(bgra[h - 2 :, cols] if bgra is not None else None)
        ),
    )


def moved(block, dx: int, dy: int):
    """A Block (app/blocks) found in a grab, in the coordinates the grab's origin is at."""

    def shift(b) -> Box:
        return (b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy)

    return replace(block, box=shift(block.box), lines=tuple(shift(line) for line in block.lines))


class BlockFinder(QObject):
    """The text detector off the GUI thread: `find(job, bgra)`; `found(job, blocks)` or
    `failed(job, message)` on the GUI thread."""

    found = Signal(int, object)  # job id, list[Block] in the picture's px
    failed = Signal(int, str)  # job id, what went wrong, in words
    _answer = Signal(int, object, str)

    def __init__(self, find=None, parent=None):
        super().__init__(parent)
        self._find = find  # (bgra array) → blocks; None: app.blocks.find_blocks
        self._mailbox = Mailbox()
        self._stopped = False
        self._answer.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def find(self, job: int, bgra, params=None) -> None:
        """Find the blocks of `bgra` (an (h, w, 4) B, G, R, A array) on the detector's thread, by
        `params` (app/blocks/params.py; None: PARAMS); a picture still waiting there is dropped."""
        from app.blocks import background

        if self._stopped:
            return
        self._mailbox.put((job, bgra, params))
        background.submit(self._run)  # a run that finds the mailbox empty does nothing

    def warm(self) -> None:
        """Load hover's detector (its int8 model, made the first time: a few seconds more) on its
        thread now, so that the first key press finds at once; its answer (job 0) is nobody's."""
        import numpy as np

        from app.blocks.params import HOVER

        self.find(0, np.full((64, 64, 4), 255, dtype=np.uint8), HOVER)

    def stop(self) -> None:
        """No more pictures; one waiting is dropped (the app's quit waits for a run under way)."""
        self._stopped = True
        self._mailbox.take()

    def _run(self) -> None:
        # the future background.submit returns is nobody's: whatever fails here is logged here
        try:
            self._find_next()
        except Exception:
            log.exception("hover: a detector run failed")

    def _find_next(self) -> None:
        request = self._mailbox.take()
        if request is None or self._stopped:
            return
        job, bgra, params = request
        try:
            blocks = self._detect(bgra, params)
        except Exception as exc:  # contained: said to the GUI, the next picture is found
            log.exception("hover: finding the text blocks failed")
            self._answer.emit(job, None, str(exc) or type(exc).__name__)
        else:
            self._answer.emit(job, blocks, "")

    def _detect(self, bgra, params):
        if self._find is not None:
            return self._find(bgra)
        from app.blocks import find_blocks
        from app.blocks.params import PARAMS

        return find_blocks(bgra, bgr=True, params=params or PARAMS)

    def _deliver(self, job: int, blocks, error: str) -> None:
        if error:
            self.failed.emit(job, error)
        else:
            self.found.emit(job, blocks)

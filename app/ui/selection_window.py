"""One screen's window of a region selection: its frozen capture, the box the user drags on it (or
the text region a click proposes), and the `Selection` made of it.

The window shows its screen's capture (never a translucent window over the live desktop, which
turns black without a compositor), dims it outside the box, draws a crosshair, the box's size in
physical pixels and a hint. The box is converted to that screen's image pixels with the scale
measured when the mouse is released (image px / widget px, per screen), so HiDPI and mixed-DPI
layouts crop exactly what the user boxed.

A click without a drag reads the text block under the pointer: as the window shows, the text
detector runs over the frozen image on a background thread (app/blocks, `find_blocks`), and a click
proposes the block `block_at` names there (read with the margin a whole page's crop has:
app/page/read.py `crop_box`). The proposal is drawn (dashed) while the pointer rests, so the user sees
what a click takes. A click before the detector has answered waits for it ("finding text…") and
is then taken at its point; where there is no block (a photo), a click says so and the user drags.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QWidget

from app.blocks import Block, background, block_at
from app.capture.models import Capture, Rect
from app.capture.nearby import Nearby, nearby
from app.platform.qt_images import qimage_bgra
from app.ui import theme
from app.ui.guard import qt_override

log = logging.getLogger(__name__)

MIN_BOX_PX = 4  # a box narrower or lower than this (image px) is a click: it reads the proposal
REST_MS = 120  # the pointer rested this long: propose the region under it

DIM = QColor(8, 10, 20, 140)
ACCENT = QColor(theme.ACCENT)  # the box border and handles
CROSSHAIR = QColor(255, 255, 255, 90)
PILL = QColor(15, 23, 42, 225)
PILL_TEXT = QColor(theme.TEXT)
PILL_EDGE = QColor(255, 255, 255, 48)  # keeps the pill apart from dark screens
HINT = "Drag a box or click a bubble   ·   Esc or right-click to cancel"
PROPOSAL_HINT = "Click to read this"
NOTHING_HERE = "No text region found here: drag a box around the text"
FINDING = "Finding text…"  # a click waits for the detector's answer
NOT_FOUND = "Text could not be found on this screen: drag a box around the text"
FOUND_POLL_MS = 20  # how often a window looks whether its screen's blocks are in


@dataclass(frozen=True)
class Selection:
    screen_name: str
    box_image_px: Rect  # x, y, w, h in that screen's capture image
    box_desktop_px: Rect  # x, y, w, h in virtual-desktop physical pixels (X11 root coordinates)
    logical_rect: Rect  # x, y, w, h in Qt's global logical coordinates (to place the overlay)
    image: QImage  # the crop
    released_at: float  # time.perf_counter() at mouse release, for latency measurements
    how: str = "box"  # "box" (dragged) or "click" (the proposal under a click)
    # the blocks the overlay leaves clear (the block read, the next) and the read's direction, in
    # logical coordinates as logical_rect: made from `SelectionWindow.screen_blocks`
    nearby: Nearby = Nearby()


def _rect(box) -> Rect:
    """A box (x0, y0, x1, y1) as a rect (x, y, w, h)."""
    x0, y0, x1, y1 = box
    return x0, y0, x1 - x0, y1 - y0


# the detector over a screen's pixels on the app's one detector thread (joined at quit)
_in_background = background.submit


class SelectionWindow(QWidget):
    """Shows one screen's frozen capture and lets the user drag a box on it. Its session
    (app/ui/selection.py) hears the outcome from its signals."""

    chosen = Signal(object)  # the Selection released on: a box, or the block a click took
    cancelled = Signal()  # Esc, the right button, or closed (also from outside: Alt+F4)

    def __init__(self, capture: Capture, qscreen=None, debug: bool = False):
        super().__init__(None)
        self.capture = capture
        self._qscreen = qscreen
        self._debug = debug
        self._image = capture.image
        self._origin: QPointF | None = None
        self._current: QPointF | None = None
        self._mouse: QPointF | None = None
        # The screen's text blocks: None until the detector has answered (`_find_blocks`, as the
        # window shows), then the blocks in reading order (none when it failed: `_failed`).
        self.blocks: list[Block] | None = None
        self._finding: Future | None = None
        self._failed = False
        self._closed = False  # no detector runs for a window already closed
        self._found_poll = QTimer(self)
        self._found_poll.setInterval(FOUND_POLL_MS)
        self._found_poll.timeout.connect(self._take_blocks)
        # a click that came before the blocks: (its widget point, its release time)
        self._waiting_click: tuple[QPointF, float] | None = None
        self.proposal: Block | None = None  # the block a click would read now
        # The screen's text blocks in reading order, (x, y, w, h) image px and vertical, once the
        # finder has them (empty until then): what a read's `Nearby` is made of.
        self.screen_blocks: list[tuple[Rect, bool]] = []
        self._proposal_for: tuple[int, int] | None = None  # the image px it was found for
        self.notice = ""  # shown instead of the hint after a click that found nothing
        self._rest = QTimer(self)
        self._rest.setSingleShot(True)
        self._rest.setInterval(REST_MS)
        self._rest.timeout.connect(self._propose_under_mouse)
        self.setObjectName(f"selection:{capture.screen.name}")
        self.setWindowTitle("Hayai — select a region")
        # Not Qt.Tool: some window managers refuse to make utility windows full screen or focus them.
        self.setWindowFlags(Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnTopHint)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)  # we paint every pixel
        self.setMouseTracking(True)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    # --- showing -------------------------------------------------------------------------------

    def show_on_screen(self) -> None:
        self.setGeometry(QRect(*self.capture.screen.logical))
        if self._qscreen is not None:
            self.winId()  # creates the native window so it can be put on its screen
            self.windowHandle().setScreen(self._qscreen)
        self.showFullScreen()
        # The screen's text blocks, found while the user moves to the text.
        QTimer.singleShot(0, self, self._find_blocks)

    def _find_blocks(self) -> None:
        if self._finding is None and self.blocks is None and not self._closed:
            from app.blocks import find_blocks

            # a copy: the view of the frozen image's pixels dies with the window, maybe mid-run
            pixels = qimage_bgra(self._image).copy()
            self._finding = _in_background(find_blocks, pixels, True)
            self._found_poll.start()

    def _take_blocks(self) -> None:
        """Take the screen's blocks once the detector has them (a timer's slot)."""
        if self._finding is None or not self._finding.done():
            return
        self._found_poll.stop()
        try:  # never out of a slot: on an error a click says so, and a drag still works
            blocks = self._finding.result()
        except Exception:
            log.exception("finding the text blocks of the screen failed")
            blocks, self._failed = [], True
        self.blocks = blocks
        self.screen_blocks = [(_rect(b.box), b.vertical) for b in blocks]
        log.debug("%d text blocks on %s", len(blocks), self.capture.screen.name)
        self._proposal_for = None
        if self._waiting_click is not None:
            point, released_at = self._waiting_click
            self._waiting_click = None
            self._click(point, released_at)
        else:
            self._propose_under_mouse()
        self.update()

    # --- geometry ------------------------------------------------------------------------------

    def _scale(self) -> tuple[float, float]:
        """Image pixels per widget pixel, measured now (never one ratio for the whole desktop)."""
        return self._image.width() / max(1, self.width()), self._image.height() / max(
            1, self.height()
        )

    def _box_widget(self) -> QRectF | None:
        if self._origin is None or self._current is None:
            return None
        bounds = QRectF(self.rect())
        a, b = self._clamped(self._origin, bounds), self._clamped(self._current, bounds)
        return QRectF(
            QPointF(min(a.x(), b.x()), min(a.y(), b.y())),
            QPointF(max(a.x(), b.x()), max(a.y(), b.y())),
        )

    @staticmethod
    def _clamped(p: QPointF, bounds: QRectF) -> QPointF:
        # A drag may leave the window (the mouse is grabbed); the box stops at the screen's edge.
        return QPointF(
            min(max(p.x(), bounds.left()), bounds.right()),
            min(max(p.y(), bounds.top()), bounds.bottom()),
        )

    def _box_image_px(self) -> Rect | None:
        box = self._box_widget()
        if box is None:
            return None
        sx, sy = self._scale()
        left, top = round(box.left() * sx), round(box.top() * sy)
        right = min(round(box.right() * sx), self._image.width())
        bottom = min(round(box.bottom() * sy), self._image.height())
        return left, top, max(0, right - left), max(0, bottom - top)

    def selection(self, box_image_px: Rect, released_at: float, how: str = "box") -> Selection:
        x, y, w, h = box_image_px
        screen = self.capture.screen
        px, py = screen.physical[:2]
        sx, sy = self._scale()
        lx, ly = screen.logical[:2]

        def logical(rect: Rect) -> Rect:
            rx, ry, rw, rh = rect
            return round(lx + rx / sx), round(ly + ry / sy), round(rw / sx), round(rh / sy)

        return Selection(
            screen_name=screen.name,
            box_image_px=box_image_px,
            box_desktop_px=(px + x, py + y, w, h),
            logical_rect=logical(box_image_px),
            image=self._image.copy(QRect(x, y, w, h)),
            released_at=released_at,
            how=how,
            nearby=nearby(box_image_px, self.screen_blocks).mapped(logical),
        )

    # --- one click per bubble --------------------------------------------------------------------

    def _image_point(self, p: QPointF) -> tuple[int, int]:
        sx, sy = self._scale()
        x = min(max(0, int(p.x() * sx)), self._image.width() - 1)
        y = min(max(0, int(p.y() * sy)), self._image.height() - 1)
        return x, y

    def propose_at(self, p: QPointF) -> Block | None:
        """The block a click at widget point `p` reads (cached for the same image pixel); None
        also while the screen's blocks are not in."""
        if self.blocks is None:
            return None
        point = self._image_point(p)
        if point != self._proposal_for:
            started = time.perf_counter()
            self.proposal = block_at(self.blocks, *point)
            self._proposal_for = point
            if self.proposal is not None:
                self.notice = ""
            log.debug(
                "proposal at %s: %s (%.1f ms)",
                point,
                self.proposal,
                (time.perf_counter() - started) * 1000,
            )
        return self.proposal

    def _propose_under_mouse(self) -> None:
        if self._mouse is not None and self._origin is None:
            self.propose_at(self._mouse)
            self.update()

    def _read_box(self, block: Block) -> Rect:
        """The box (x, y, w, h, image px) a click on `block` reads: its crop in a whole page's."""
        from app.page.read import crop_box

        return _rect(crop_box(block, self._image.width(), self._image.height()))

    def _proposal_widget(self) -> QRectF | None:
        if self.proposal is None:
            return None
        sx, sy = self._scale()
        x, y, w, h = self._read_box(self.proposal)
        return QRectF(x / sx, y / sy, w / sx, h / sy)

    # --- input ---------------------------------------------------------------------------------

    @qt_override
    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.RightButton:
            self.cancelled.emit()
        elif event.button() == Qt.MouseButton.LeftButton:
            self._waiting_click = None  # a new press: the click before it no longer waits
            self._origin = self._current = event.position()
            self.update()

    @qt_override
    def mouseMoveEvent(self, event) -> None:
        self._mouse = event.position()
        if self._origin is not None:
            self._current = event.position()
        elif self._image_point(self._mouse) != self._proposal_for:
            self.proposal, self._proposal_for = None, None
            self._rest.start()
        self.update()

    @qt_override
    def mouseReleaseEvent(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._origin is None:
            return
        released_at = time.perf_counter()
        self._current = event.position()
        box = self._box_image_px()
        assert box is not None  # both corners are set: _origin was checked, _current set just above
        self._origin = self._current = None
        if box[2] < MIN_BOX_PX or box[3] < MIN_BOX_PX:  # a click: the block under it
            self._click(event.position(), released_at)
            return
        self.chosen.emit(self.selection(box, released_at))

    def _click(self, p: QPointF, released_at: float) -> None:
        """A click at widget point `p`: its block read, or a word why not; before the screen's
        blocks are in, it waits for them (`_take_blocks` comes back here)."""
        if self.blocks is None:
            self._waiting_click = (p, released_at)
            self.notice = FINDING
            self.update()
            return
        proposal = self.propose_at(p)
        if proposal is None:
            log.debug("click at %s: no text block there", self._proposal_for)
            self.notice = NOT_FOUND if self._failed else NOTHING_HERE
            self.update()
            return
        self.chosen.emit(self.selection(self._read_box(proposal), released_at, "click"))

    @qt_override
    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.cancelled.emit()
        else:
            super().keyPressEvent(event)

    @qt_override
    def closeEvent(self, event) -> None:
        # Closed from outside (window manager, Alt+F4): the session must still end (a session
        # that closes its windows itself has ended already and ignores this).
        self.cancelled.emit()
        self._closed = True
        self._found_poll.stop()  # blocks still being found are dropped when done
        if self._finding is not None:
            self._finding.cancel()  # and a run not yet started is not started
        super().closeEvent(event)

    # --- painting ------------------------------------------------------------------------------

    @qt_override
    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.drawImage(QRectF(self.rect()), self._image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        box = self._box_widget()
        shade = QPainterPath()
        shade.addRect(QRectF(self.rect()))
        proposal = self._proposal_widget() if box is None else None
        # Never `box or proposal`: a zero-size QRectF (a press before any move) is false.
        highlight = box if box is not None else proposal
        if highlight is not None:
            shade.addRect(highlight)  # odd-even fill leaves the box undimmed
        painter.fillPath(shade, DIM)
        if box is None:
            self._paint_crosshair(painter)
            if proposal is not None:
                self._paint_proposal(painter, proposal)
        else:
            self._paint_box(painter, box)
        self._paint_hint(painter, highlight)
        if self._debug:
            self._paint_geometry(painter)
        painter.end()

    def _paint_crosshair(self, painter: QPainter) -> None:
        if self._mouse is None:
            return
        painter.setPen(QPen(CROSSHAIR, 1))
        x, y = self._mouse.x() + 0.5, self._mouse.y() + 0.5
        painter.drawLine(QPointF(x, 0), QPointF(x, self.height()))
        painter.drawLine(QPointF(0, y), QPointF(self.width(), y))

    def _paint_box(self, painter: QPainter, box: QRectF) -> None:
        painter.setPen(QPen(ACCENT, 2))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(box.adjusted(-1, -1, 1, 1))
        painter.setBrush(ACCENT)
        painter.setPen(Qt.PenStyle.NoPen)
        for corner in (box.topLeft(), box.topRight(), box.bottomLeft(), box.bottomRight()):
            painter.drawEllipse(corner, 3.5, 3.5)
        _, _, w, h = self._box_image_px() or (0, 0, 0, 0)
        label = f"{w} × {h} px"
        # Below the box's bottom-right corner; inside it when the box touches the screen's bottom.
        size = self._pill_size(painter, label, 10)
        x = min(box.right() - size.width(), self.width() - size.width() - 6)
        x = max(6.0, x)
        y = box.bottom() + 8
        if y + size.height() > self.height() - 6:
            y = box.bottom() - size.height() - 8
        self._paint_pill(painter, QRectF(QPointF(x, y), size), label, 10)

    def _paint_proposal(self, painter: QPainter, box: QRectF) -> None:
        pen = QPen(ACCENT, 2, Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(box.adjusted(-1, -1, 1, 1), 4, 4)
        size = self._pill_size(painter, PROPOSAL_HINT, 10)
        x = min(max(6.0, box.left()), self.width() - size.width() - 6)
        y = box.bottom() + 8
        if y + size.height() > self.height() - 6:
            y = box.top() - size.height() - 8
        self._paint_pill(painter, QRectF(QPointF(x, y), size), PROPOSAL_HINT, 10)

    def _paint_hint(self, painter: QPainter, box: QRectF | None) -> None:
        text = self.notice or HINT
        size = self._pill_size(painter, text, 11)
        rect = QRectF(QPointF((self.width() - size.width()) / 2, 28), size)
        if box is None or not rect.adjusted(-12, -12, 12, 12).intersects(box):  # never over the box
            self._paint_pill(painter, rect, text, 11)

    def _paint_geometry(self, painter: QPainter) -> None:
        s = self.capture.screen
        sx, sy = self._scale()
        text = (
            f"{s.name}  logical {s.logical}  physical {s.physical}  dpr {s.dpr:g}  "
            f"image {self._image.width()}x{self._image.height()}  scale {sx:.3f}x{sy:.3f}"
        )
        size = self._pill_size(painter, text, 9)
        self._paint_pill(
            painter, QRectF(QPointF(10, self.height() - size.height() - 10), size), text, 9
        )

    def _font(self, point_size: int) -> QFont:
        font = QFont(self.font())
        font.setPointSize(point_size)
        font.setWeight(QFont.Weight.DemiBold)
        return font

    def _pill_size(self, painter: QPainter, text: str, point_size: int):
        painter.setFont(self._font(point_size))
        metrics = painter.fontMetrics()
        return QRectF(0, 0, metrics.horizontalAdvance(text) + 24, metrics.height() + 12).size()

    def _paint_pill(self, painter: QPainter, rect: QRectF, text: str, point_size: int) -> None:
        painter.setPen(QPen(PILL_EDGE, 1))
        painter.setBrush(PILL)
        painter.drawRoundedRect(rect, rect.height() / 2, rect.height() / 2)
        painter.setFont(self._font(point_size))
        painter.setPen(PILL_TEXT)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)

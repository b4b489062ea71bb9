"""Read the whole screen: the frozen screen with a box over every text block the page read found.

The page is read by the OCR worker (app/engines/worker.py `submit_page`); this window only shows it:
a progress bar while the blocks are read, then one box per block. Hovering a box asks for the
dictionary entry of the character under the pointer (`word_hovered`, as the overlay's text view
does, so the app's one popup serves it); a click on a box emits `block_chosen` and the app opens
the overlay with that block's text (copy, Anki, edit). Esc or a right click closes it.
"""

from __future__ import annotations

import itertools
import logging

from PySide6.QtCore import QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget

from app.capture.models import Capture
from app.hover.text import char_at
from app.page.read import line_boxes
from app.ui import theme
from app.ui.guard import qt_override
from app.ui.text_view import HoverGuard

log = logging.getLogger(__name__)

DIM = QColor(0, 0, 0, 70)
BOX = QColor(255, 176, 0)
HOVER = QColor(255, 176, 0, 60)


def char_index(block: dict, x: float, y: float) -> int:
    """The index in a block's text (its lines joined) of the character at image px (x, y)
    (app/hover/text.py's rule; 0 where it names none)."""
    spot = char_at(line_boxes(block), block["vertical"], block["lines"], x, y)
    return 0 if spot is None else spot.index


class PageView(QWidget):
    block_chosen = Signal(object, QRect)  # the block (a dict of the page record), its logical rect
    word_hovered = Signal(str, int, object)  # text, index, global QPoint (as TextView emits)
    word_left = Signal()
    closed = Signal()

    def __init__(self, capture: Capture):
        super().__init__(None)
        self.capture = capture
        self._image: QImage = capture.image
        self.blocks: list[dict] = []
        self._hovered: int | None = None
        self._pointer = HoverGuard()
        self.setObjectName("page-view")
        self.setWindowTitle("Hayai — the whole screen")
        self.setWindowFlags(Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnTopHint)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.banner = QWidget(self)  # a card of the app's theme over the dimmed screen
        theme.apply(self.banner, "HayaiCard")
        self.banner.setStyleSheet(
            self.banner.styleSheet()
            + f"QWidget#HayaiCard {{ border: 1px solid {theme.BORDER}; border-radius: 10px; }}"
        )
        self.status = QLabel("Finding the text on the screen…", self.banner)
        self.status.setFont(theme.ui_font(11))
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)  # a narrow screen wraps the sentence rather than cutting it
        self.progress = QProgressBar(self.banner)
        self.progress.setRange(0, 0)  # busy until the blocks are counted
        self.progress.setTextVisible(False)
        layout = QVBoxLayout(self.banner)
        layout.addWidget(self.status)
        layout.addWidget(self.progress)

    def show_on_screen(self) -> None:
        self.setGeometry(QRect(*self.capture.screen.logical))
        self.showFullScreen()
        self.activateWindow()
        self.setFocus()

    # --- what the worker says --------------------------------------------------------------------

    def set_progress(self, done: int, total: int) -> None:
        if total == 0:
            return
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        self.status.setText(f"Reading the whole screen… {done} of {total} text blocks")

    def set_record(self, record: dict) -> None:
        self.blocks = [b for b in record["blocks"] if b["text"]]
        self.progress.hide()
        if self.blocks:
            self.status.setText(
                f"{len(self.blocks)} text blocks · hover a word for the dictionary, "
                "click a box to open its text · Esc closes"
            )
        else:
            self.status.setText("No text found on this screen · Esc closes")
        self.banner.adjustSize()
        self.update()

    def set_failed(self, message: str) -> None:
        self.progress.hide()
        self.status.setText(f"{message} · Esc closes")  # the worker's sentence, in GUI words
        self.banner.adjustSize()

    # --- geometry --------------------------------------------------------------------------------

    def _scale(self) -> tuple[float, float]:
        return self._image.width() / max(1, self.width()), self._image.height() / max(
            1, self.height()
        )

    def _widget_rect(self, box) -> QRectF:
        sx, sy = self._scale()
        x0, y0, x1, y1 = box
        return QRectF(x0 / sx, y0 / sy, (x1 - x0) / sx, (y1 - y0) / sy)

    def block_at(self, p: QPointF) -> int | None:
        for i, b in enumerate(self.blocks):
            if self._widget_rect(b["box"]).contains(p):
                return i
        return None

    def logical_rect(self, block: dict) -> QRect:
        r = self._widget_rect(block["box"]).toAlignedRect()
        return r.translated(self.geometry().topLeft())

    # --- Qt overrides (@qt_override: no exception escapes them) ---------------------------------------------

    @qt_override
    def resizeEvent(self, event) -> None:
        self.banner.setFixedWidth(min(self.width() - 24, 900))
        self.banner.adjustSize()
        self.banner.move((self.width() - self.banner.width()) // 2, 12)

    @qt_override
    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.drawImage(QRectF(self.rect()), self._image)
        painter.fillRect(self.rect(), DIM)
        for i, b in enumerate(self.blocks):
            r = self._widget_rect(b["box"]).adjusted(-3, -3, 3, 3)
            if i == self._hovered:
                painter.fillRect(r, HOVER)
            painter.setPen(QPen(BOX, 3 if i == self._hovered else 2))
            painter.drawRect(r)
        painter.end()

    @qt_override
    def mouseMoveEvent(self, event) -> None:
        p = event.position()
        i = self.block_at(p)
        if i != self._hovered:
            self._hovered = i
            self.update()
        if i is None:
            if self._pointer.left():
                self.word_left.emit()
            return
        sx, sy = self._scale()
        block = self.blocks[i]
        index = char_index(block, p.x() * sx, p.y() * sy)
        if self._pointer.moved_to((i, index)):  # the overlay's rule: once per character
            self.word_hovered.emit("".join(block["lines"]), index, event.globalPosition().toPoint())

    @qt_override
    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.RightButton:
            self.close()
            return
        i = self.block_at(event.position())
        if i is not None:
            block = self.blocks[i]
            rect = self.logical_rect(block)
            self.close()
            self.block_chosen.emit(block, rect)

    @qt_override
    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close()

    @qt_override
    def closeEvent(self, event) -> None:
        self.word_left.emit()
        self.closed.emit()
        super().closeEvent(event)

    def line_at(self, index: int) -> tuple[QRect, bool]:
        """The line (column, when vertical) of the hovered block that holds character `index`, on
        the screen, and whether it is a column: the dictionary popup goes beside it, never over it."""
        if self._hovered is None:
            return QRect(), False
        block = self.blocks[self._hovered]
        boxes, lines = line_boxes(block), block["lines"]
        ends = list(itertools.accumulate(len(line) for line in lines))
        k = next((k for k, end in enumerate(ends) if index < end), len(ends) - 1)
        rect = self._widget_rect(boxes[min(max(k, 0), len(boxes) - 1)]).toAlignedRect()
        return rect.translated(self.mapToGlobal(rect.topLeft()) - rect.topLeft()), block["vertical"]

    def highlight(self, start: int, length: int) -> None:
        """The dictionary's highlight of the word it shows (the view interface); boxes stay as they are."""

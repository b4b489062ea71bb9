"""The painted read-only text (`PaintedTextView`): vertical columns, right to left, and furigana;
the overlay shows it for the vertical layout and for readings.

Qt's text widgets lay out horizontally only and know no ruby, so this view places every character
itself. Vertical text is drawn upright, one character per cell, with the OpenType `vert` feature on,
which makes the font substitute its vertical forms (「」 turned, ー as a vertical bar, 。、 moved to the
upper right, small kana shifted); Latin letters and digits are drawn turned 90° clockwise, as in
vertical typesetting. Furigana (surface, reading) pairs add the reading above (horizontal) or to the
right of (vertical) its word. Like the editable view (app/ui/text_view.py) it reports the character
under the mouse, for `WordPointer`.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter
from PySide6.QtWidgets import QWidget

from app.ui import theme
from app.ui.guard import qt_override


def is_sideways(char: str) -> bool:
    """Half-width Latin letters, digits and ASCII punctuation are turned sideways in vertical text."""
    return 0x21 <= ord(char) <= 0x7E


# Kinsoku: these never start a line or column; they hang at the end of the previous one instead.
NO_BREAK_BEFORE = set(
    "、。，．,.!?！？」』）)】〕〉》ー～ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ…‥・：；:;"
)


def vertical_font(font: QFont) -> QFont:
    """A copy of `font` with the OpenType `vert` feature switched on."""
    vert = QFont(font)
    vert.setFeature(QFont.Tag("vert"), 1)
    return vert


@dataclass
class Cell:
    index: int  # position in the text
    char: str
    rect: QRectF  # the cell, in widget coordinates
    sideways: bool = False
    line: int = 0  # line (horizontal) or column (vertical) number


@dataclass
class RubyMark:
    text: str
    rect: QRectF


class PaintedTextView(QWidget):
    """Read-only text painted cell by cell; `index_at(pos)` maps a point to a character index."""

    hovered = Signal(int, QPointF)  # char index (-1 = none), position in widget coordinates
    clicked = Signal(int, QPointF)
    double_clicked = Signal(int)  # char index: the overlay switches to the editable layout there

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMouseTracking(True)
        self._text = ""
        self._vertical = True
        self._ruby: list[tuple[str, str | None]] | None = None
        self._font = theme.cjk_font()
        self._limit = 12  # characters per column (vertical) / max width in px (horizontal)
        self._max_width = 480.0
        self._highlight = (0, 0)
        self._cells: list[Cell] = []
        self._marks: list[RubyMark] = []
        self._size = QSize(10, 10)
        self._margin = 6.0

    # --- configuration ---------------------------------------------------------------------------

    def set_content(self, text: str, vertical: bool, ruby=None) -> None:
        """`ruby` is None, or the dictionary's furigana pairs [(surface, reading or None), ...]."""
        self._text, self._vertical, self._ruby = text, vertical, ruby
        self._highlight = (0, 0)
        self._relayout()

    def set_font(self, font: QFont) -> None:
        self._font = QFont(font)
        self._relayout()

    def set_column_length(self, chars: int) -> None:
        self._limit = max(4, int(chars))
        self._relayout()

    def set_max_width(self, px: float) -> None:
        self._max_width = max(120.0, float(px))
        self._relayout()

    def set_highlight(self, start: int, length: int) -> None:
        self._highlight = (start, max(0, length))
        self.update()

    @property
    def cells(self) -> list[Cell]:
        return list(self._cells)

    @property
    def ruby_marks(self) -> list[RubyMark]:
        return list(self._marks)

    def em(self) -> float:
        """Width of one full-width character in the text font (logical px)."""
        return max(1.0, QFontMetricsF(self._font).horizontalAdvance("国"))

    def column_count(self) -> int:
        return len({c.line for c in self._cells})

    # --- layout ----------------------------------------------------------------------------------

    def _metrics(self):
        fm = QFontMetricsF(self._font)
        em = fm.horizontalAdvance("国")
        ruby_font = QFont(self._font)
        ruby_font.setPointSizeF(max(6.0, self._font.pointSizeF() * 0.5))
        return fm, em, ruby_font, QFontMetricsF(ruby_font)

    def _relayout(self) -> None:
        if self._vertical:
            self._layout_vertical()
        else:
            self._layout_horizontal()
        self._layout_ruby()
        self.updateGeometry()
        self.update()

    def _layout_vertical(self) -> None:
        fm, em, _, ruby_fm = self._metrics()
        ruby_w = ruby_fm.horizontalAdvance("あ") + 2 if self._ruby else 0.0
        column_w = em * 1.45 + ruby_w
        limit_h = self._limit * em
        # index, char, y, advance, sideways, column
        placed: list[tuple[int, str, float, float, bool, int]] = []
        column, y = 0, 0.0
        for index, char in enumerate(self._text):
            if char == "\n":
                column, y = column + 1, 0.0
                continue
            sideways = is_sideways(char)
            advance = fm.horizontalAdvance(char) if sideways else em
            if y > 0 and y + advance > limit_h + 0.5 and char not in NO_BREAK_BEFORE:
                column, y = column + 1, 0.0
            placed.append((index, char, y, advance, sideways, column))
            y += advance
        columns = column + 1 if placed or self._text else 1
        width = columns * column_w + 2 * self._margin
        height = max((p[2] + p[3] for p in placed), default=em) + 2 * self._margin
        # Centred when the card is wider than the columns (its header sets a minimum width).
        right = width + max(0.0, self.width() - width) / 2
        self._cells = []
        for index, char, y, advance, sideways, col in placed:
            # Right to left: column 0 is the rightmost; the ruby lane is on each column's right.
            x = right - self._margin - (col + 1) * column_w + (column_w - ruby_w - em) / 2
            self._cells.append(
                Cell(index, char, QRectF(x, self._margin + y, em, advance), sideways, col)
            )
        self._size = QSize(int(width + 0.999), int(height + 0.999))

    def _layout_horizontal(self) -> None:
        fm, em, _, ruby_fm = self._metrics()
        ruby_h = ruby_fm.height() if self._ruby else 0.0
        line_h = fm.height() * 1.15 + ruby_h
        limit_w = self._max_width - 2 * self._margin
        self._cells = []
        line, x, widest = 0, 0.0, 0.0
        for index, char in enumerate(self._text):
            if char == "\n":
                line, x = line + 1, 0.0
                continue
            advance = fm.horizontalAdvance(char)
            if x > 0 and x + advance > limit_w and char not in NO_BREAK_BEFORE:
                line, x = line + 1, 0.0
            top = self._margin + line * line_h + ruby_h
            self._cells.append(
                Cell(index, char, QRectF(self._margin + x, top, advance, fm.height()), False, line)
            )
            x += advance
            widest = max(widest, x)
        lines = line + 1
        self._size = QSize(
            int(widest + 2 * self._margin + 0.999), int(lines * line_h + 2 * self._margin + 0.999)
        )

    def _layout_ruby(self) -> None:
        self._marks = []
        if not self._ruby:
            return
        by_index = {c.index: c for c in self._cells}
        _, _, _, ruby_fm = self._metrics()
        position = 0
        for surface, reading in self._ruby:
            start = self._text.find(surface, position)
            if start < 0:
                continue  # the text was edited since the furigana was computed
            position = start + len(surface)
            if not reading or reading == surface:
                continue
            cells = [by_index[i] for i in range(start, position) if i in by_index]
            if not cells:
                continue
            # the part on the first line/column
            cells = [c for c in cells if c.line == cells[0].line]
            span = cells[0].rect
            for c in cells[1:]:
                span = span.united(c.rect)
            if self._vertical:
                lane = QRectF(
                    span.right() + 1, span.top(), ruby_fm.horizontalAdvance("あ") + 2, span.height()
                )
            else:
                lane = QRectF(
                    span.left(), span.top() - ruby_fm.height(), span.width(), ruby_fm.height()
                )
            self._marks.append(RubyMark(reading, lane))

    @qt_override
    def sizeHint(self) -> QSize:
        return self._size

    @qt_override
    def resizeEvent(self, event) -> None:
        if self._vertical:
            self._relayout()  # re-centre the columns
        super().resizeEvent(event)

    # --- hit testing -----------------------------------------------------------------------------

    def line_rect(self, index: int) -> QRectF:
        """The line (or, vertical, the column) holding character `index`, in widget coordinates;
        empty when there is no such character."""
        line = next((c.line for c in self._cells if c.index == index), None)
        rect = QRectF()
        for cell in self._cells:
            if cell.line == line:
                rect = rect.united(cell.rect) if not rect.isNull() else QRectF(cell.rect)
        return rect

    def is_vertical(self) -> bool:
        return self._vertical

    def index_at(self, pos: QPointF) -> int:
        for cell in self._cells:
            if cell.rect.contains(pos):
                return cell.index
        return -1

    @qt_override
    def mouseMoveEvent(self, event) -> None:
        self.hovered.emit(self.index_at(event.position()), event.position())
        super().mouseMoveEvent(event)

    @qt_override
    def mouseReleaseEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit(self.index_at(event.position()), event.position())
        super().mouseReleaseEvent(event)

    @qt_override
    def mouseDoubleClickEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.double_clicked.emit(self.index_at(event.position()))
        super().mouseDoubleClickEvent(event)

    @qt_override
    def leaveEvent(self, event) -> None:
        self.hovered.emit(-1, QPointF(-1, -1))
        super().leaveEvent(event)

    # --- painting --------------------------------------------------------------------------------

    @qt_override
    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        start, length = self._highlight
        if length:
            for cell in self._cells:
                if start <= cell.index < start + length:
                    painter.fillRect(cell.rect.adjusted(-1, -1, 1, 1), QColor(theme.HIGHLIGHT))
        painter.setPen(QColor(theme.TEXT))
        font = vertical_font(self._font) if self._vertical else self._font
        painter.setFont(font)
        fm = QFontMetricsF(font)
        em = fm.horizontalAdvance("国")
        for cell in self._cells:
            self._paint_cell(painter, cell, fm, em)
        if self._marks:
            _, _, ruby_font, ruby_fm = self._metrics()
            painter.setFont(vertical_font(ruby_font) if self._vertical else ruby_font)
            painter.setPen(QColor(theme.ACCENT))
            for mark in self._marks:
                self._paint_ruby(painter, mark, ruby_fm)
        painter.end()

    def _paint_cell(self, painter: QPainter, cell: Cell, fm: QFontMetricsF, em: float) -> None:
        r = cell.rect
        if not self._vertical:
            painter.drawText(QPointF(r.left(), r.top() + fm.ascent()), cell.char)
            return
        if cell.sideways:
            # Turned 90° clockwise around the cell: the text's baseline runs down the column.
            painter.save()
            painter.translate(r.left() + r.width() / 2, r.top())
            painter.rotate(90)
            painter.drawText(QPointF(0, (fm.ascent() - fm.descent()) / 2), cell.char)
            painter.restore()
            return
        # CJK fonts put the ideographic em box from 0.88 em above the baseline to 0.12 em below it;
        # the vertical forms are designed inside that box, so baseline = cell top + 0.88 em.
        advance = fm.horizontalAdvance(cell.char)
        painter.drawText(
            QPointF(r.left() + (r.width() - advance) / 2, r.top() + 0.88 * em), cell.char
        )

    def _paint_ruby(self, painter: QPainter, mark: RubyMark, fm: QFontMetricsF) -> None:
        r = mark.rect
        if not self._vertical:
            width = fm.horizontalAdvance(mark.text)
            painter.drawText(QPointF(r.center().x() - width / 2, r.top() + fm.ascent()), mark.text)
            return
        em = fm.horizontalAdvance("あ")
        total = em * len(mark.text)
        y = r.center().y() - total / 2
        for char in mark.text:
            painter.drawText(QPointF(r.left() + 1, y + 0.88 * em), char)
            y += em

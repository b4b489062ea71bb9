"""The reading log's rows (app/ui/reading_log.py): the time, the text wrapped at the width the list
has (anywhere, as Japanese wraps) and how the read came in on the first line's right, always in
view; each row as tall as its wrapped text, so no row leaves a gap and nothing scrolls sideways."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QTextLayout, QTextOption
from PySide6.QtWidgets import QListWidget, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from app.ui import theme
from app.ui.guard import qt_override

PARTS = Qt.ItemDataRole.UserRole + 1  # a row's (time, text, label): reading_log.line_parts
PAD, GAP = 8, 10  # px inside a row, between its parts


class RowDelegate(QStyledItemDelegate):
    """Draws each row of `view` from its PARTS and sizes it to its wrapped text (see above)."""

    def __init__(self, view: QListWidget):
        super().__init__(view)
        self.view = view

    def _columns(self, option, parts) -> tuple[QRectF, QRectF, QRectF]:
        """The time's, the text's and the label's boxes in a row at `option.rect` (the text's
        box the width it may wrap in, one line high)."""
        fm = QFontMetricsF(option.font)
        when, _, label = parts
        rect = QRectF(option.rect).adjusted(PAD, PAD, -PAD, -PAD)
        line = fm.height()
        time_w = fm.horizontalAdvance(when)
        label_w = fm.horizontalAdvance(label) if label else 0.0
        left = rect.left() + time_w + GAP
        right = rect.right() - (label_w + GAP if label else 0.0)
        return (
            QRectF(rect.left(), rect.top(), time_w, line),
            QRectF(left, rect.top(), max(fm.horizontalAdvance("国") * 4, right - left), line),
            QRectF(rect.right() - label_w, rect.top(), label_w, line),
        )

    @staticmethod
    def _wrapped(text: str, font, width: float) -> QTextLayout:
        layout = QTextLayout(text, font)
        wrap = QTextOption()
        wrap.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        layout.setTextOption(wrap)
        step = QFontMetricsF(font).lineSpacing()
        layout.beginLayout()
        while (line := layout.createLine()).isValid():
            line.setLineWidth(width)
            line.setPosition(QPointF(0, line.lineNumber() * step))
        layout.endLayout()
        return layout

    @staticmethod
    def _parts(index) -> tuple[str, str, str]:
        return index.data(PARTS) or ("", index.data() or "", "")

    @qt_override
    def sizeHint(self, option, index) -> QSize:
        """The list's width (the option's rect is not yet the row's), the wrapped text's height."""
        width = self.view.viewport().width()
        opt = QStyleOptionViewItem(option)
        opt.rect = QRect(0, 0, width, 0)
        parts = self._parts(index)
        text_box = self._columns(opt, parts)[1]
        lines = max(1, self._wrapped(parts[1], opt.font, text_box.width()).lineCount())
        height = (lines - 1) * QFontMetricsF(opt.font).lineSpacing() + text_box.height()
        return QSize(width, int(height + 2 * PAD + 1.999))

    def label_rect(self, index) -> QRect:
        """Where the row's source label is drawn, in the viewport (tests: it is in view)."""
        option = QStyleOptionViewItem()
        option.initFrom(self.view)  # its font
        option.rect = self.view.visualRect(index)
        return self._columns(option, self._parts(index))[2].toAlignedRect()

    @qt_override
    def paint(self, painter, option, index) -> None:
        parts = self._parts(index)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        painter.save()
        rect = QRectF(option.rect)
        if selected or hovered:
            painter.fillRect(rect, QColor(theme.ACCENT_DARK if selected else theme.SURFACE_HOVER))
        painter.setPen(QColor(theme.BORDER))
        painter.drawLine(option.rect.bottomLeft(), option.rect.bottomRight())
        time_box, text_box, label_box = self._columns(option, parts)
        fm = QFontMetricsF(option.font)
        painter.setFont(option.font)
        painter.setPen(QColor("white" if selected else theme.MUTED))
        painter.drawText(QPointF(time_box.left(), time_box.top() + fm.ascent()), parts[0])
        if parts[2]:
            painter.drawText(QPointF(label_box.left(), label_box.top() + fm.ascent()), parts[2])
        painter.setPen(QColor("white" if selected else theme.TEXT))
        layout = self._wrapped(parts[1], option.font, text_box.width())
        layout.draw(painter, text_box.topLeft())
        painter.restore()

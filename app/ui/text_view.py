"""The text views shared by the overlay and the reading log: the editable horizontal text
(`EditableTextView`), and `WordPointer`, which turns the mouse over it (or over the painted view,
app/ui/painted_text.py) into dictionary lookups; `HoverGuard`, the one "same character again" rule
of hover; `global_line`, where on the screen a view's line is.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

from app.ui import theme
from app.ui.guard import qt_override


class EditableTextView(QPlainTextEdit):
    """The editable horizontal text (overlay, reading log); reports the character under the mouse."""

    hovered = Signal(int, QPointF)
    clicked = Signal(int, QPointF)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMouseTracking(True)
        self.viewport().setMouseTracking(True)
        self.viewport().installEventFilter(self)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def line_rect(self, index: int) -> QRectF:
        """The visual line holding character `index`, across the viewport (viewport coordinates)."""
        c = QTextCursor(self.document())
        c.setPosition(max(0, min(index, len(self.toPlainText()))))
        caret = self.cursorRect(c)
        return QRectF(0, caret.top(), self.viewport().width(), caret.height())

    def index_at(self, pos: QPointF) -> int:
        """The character under `pos` (viewport coordinates), -1 past a line's end or between lines."""
        cursor = self.cursorForPosition(pos.toPoint())
        index = cursor.position()
        for candidate in (index, index - 1):  # the cursor lands on the nearer edge of the character
            if not 0 <= candidate < len(self.toPlainText()):
                continue
            c = QTextCursor(self.document())
            c.setPosition(candidate)
            left = self.cursorRect(c)
            c.setPosition(candidate + 1)
            right = self.cursorRect(c)
            if (
                left.top() == right.top()
                and left.left() <= pos.x() < right.left()
                and left.top() <= pos.y() <= left.bottom()
            ):
                return candidate
        return -1

    @qt_override
    def eventFilter(self, watched, event) -> bool:
        if watched is self.viewport():
            if event.type() == QEvent.Type.MouseMove:
                self.hovered.emit(self.index_at(event.position()), event.position())
            elif (
                event.type() == QEvent.Type.MouseButtonRelease
                and event.button() == Qt.MouseButton.LeftButton
            ):
                if not self.textCursor().hasSelection():
                    self.clicked.emit(self.index_at(event.position()), event.position())
            elif event.type() == QEvent.Type.Leave:
                self.hovered.emit(-1, QPointF(-1, -1))
        return super().eventFilter(watched, event)

    def set_highlight(self, start: int, length: int) -> None:
        """Mark text[start:start+length] (the dictionary's match); length 0 clears."""
        selections = []
        if length:
            selection = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(theme.HIGHLIGHT))
            selection.format = fmt
            cursor = QTextCursor(self.document())
            cursor.setPosition(start)
            cursor.setPosition(
                min(start + length, len(self.toPlainText())), QTextCursor.MoveMode.KeepAnchor
            )
            selection.cursor = cursor
            selections.append(selection)
        self.setExtraSelections(selections)


def global_line(view, surface, index: int) -> QRect:
    """`view.line_rect(index)` (in `surface` coordinates) on the screen: where the dictionary popup
    must not go."""
    rect = view.line_rect(index)
    return QRect(surface.mapToGlobal(rect.topLeft().toPoint()), rect.size().toSize())


class HoverGuard:
    """The one "same character again" rule of hover, shared by every view the dictionary reads
    (the overlay and the reading log through WordPointer, the whole screen's boxes): a lookup is
    due when the pointer reaches another character, never on each move over the same one, and
    the popup is told once that the pointer left the text."""

    def __init__(self):
        self._at: object = None  # the character under the pointer (any key), None: off the text

    def moved_to(self, at: object) -> bool:
        """The pointer is over character `at`; True when that is another one than before."""
        again = at == self._at
        self._at = at
        return not again

    def left(self) -> bool:
        """The pointer is off the text; True when it was on a character until now."""
        was_on = self._at is not None
        self._at = None
        return was_on


class WordPointer(QObject):
    """The dictionary hook of a text: `word_hovered(text, index, global_pos)` when the mouse rests
    on a character (or clicks it, with the "click" trigger) of any attached view, `word_left()`
    when it leaves the text. The overlay and the reading log each have one, feeding the one popup.
    """

    word_hovered = Signal(str, int, QPoint)
    word_left = Signal()

    def __init__(self, text, trigger, parent=None):
        super().__init__(parent)
        self._text = text  # callable: the current text
        self.trigger = trigger  # callable: "hover" or "click" (Application.lookup_trigger)
        self._hover = HoverGuard()

    def attach(self, view, surface) -> None:
        """`view` emits hovered/clicked(index, pos) in `surface` coordinates."""
        view.hovered.connect(
            lambda i, p, s=surface: self._pointer(i, s.mapToGlobal(p).toPoint(), "hover")
        )
        view.clicked.connect(
            lambda i, p, s=surface: self._pointer(i, s.mapToGlobal(p).toPoint(), "click")
        )

    def _pointer(self, index: int, global_pos: QPoint, kind: str) -> None:
        if kind != self.trigger():
            if kind == "hover" and index < 0 and self._hover.left():
                self.word_left.emit()
            return
        if index < 0:
            if self._hover.left():
                self.word_left.emit()
            return
        if self._hover.moved_to(index) or kind == "click":  # a click looks up even the same one
            self.word_hovered.emit(self._text(), index, global_pos)

"""The overlay's painted text (vertical columns, furigana: app/ui/painted_text.py) in a scroll area
sized to the room it is given: vertical text takes longer columns, up to the room's height, while it
is wider than the room, and only then scrolls, starting at its first column (the rightmost)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QSize
from PySide6.QtWidgets import QFrame, QScrollArea, QSizePolicy

from app.ui.painted_text import PaintedTextView


class PaintedArea(QScrollArea):
    """`view` is the `PaintedTextView`; `show_text` lays it out for a room, `size_in` says how much
    of that room the area takes."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.view = PaintedTextView()
        # at least its text's size, so the area scrolls rather than squeezing it
        self.view.setSizePolicy(QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Minimum)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.setWidget(self.view)
        self.view.setAutoFillBackground(False)  # (setWidget turned it on): the card shows through
        self.viewport().setAutoFillBackground(False)
        self.horizontalScrollBar().rangeChanged.connect(self._to_first_column)

    def show_text(self, text: str, vertical: bool, ruby, column_length: int, room: QSize) -> None:
        """Lay `text` out (`ruby`: furigana pairs or None), columns of `column_length` characters
        or longer, as vertical text needs to fit `room`'s width within its height."""
        view = self.view
        view.set_max_width(room.width())
        view.set_column_length(column_length)
        view.set_content(text, vertical, ruby)
        if vertical and view.sizeHint().width() > room.width():
            bar = self.horizontalScrollBar().sizeHint().height()
            longest = int((room.height() - bar - 12) / view.em())  # 12: the view's margins
            # the shortest columns that fit (the text gets no wider as they lengthen), else the
            # longest, by bisection: a layout of 128 characters takes ~0.4 ms
            short, long = column_length, max(column_length, longest)
            while short < long:
                middle = (short + long) // 2
                view.set_column_length(middle)
                if view.sizeHint().width() > room.width():
                    short = middle + 1
                else:
                    long = middle
            view.set_column_length(long)
        # the scroll bars for the new text now, not at the next turn of the event loop (which a
        # grab or the first paint may come before)
        QCoreApplication.sendEvent(self, QEvent(QEvent.Type.LayoutRequest))
        self._to_first_column()

    def size_in(self, room: QSize) -> QSize:
        """The text's size within `room`, with a scroll bar where the text is larger."""
        text = self.view.sizeHint()
        size = text.boundedTo(room)
        if text.width() > room.width():
            size.setHeight(size.height() + self.horizontalScrollBar().sizeHint().height())
        if text.height() > room.height():
            size.setWidth(size.width() + self.verticalScrollBar().sizeHint().width())
        return size

    def _to_first_column(self, *_range) -> None:
        if self.view.is_vertical():
            bar = self.horizontalScrollBar()
            bar.setValue(bar.maximum())

"""GUI wording for messages written for the terminal: one short sentence in view, the rest behind
a "Details" expander (`DetailsSection`), selectable and wrapped anywhere, so long paths never clip;
open, its box is as tall as its text (the window grows), scrolling only past half the screen."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, Qt, Signal
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import QTextEdit, QToolButton, QVBoxLayout, QWidget

from app.ui.guard import qt_override
from app.ui.screens import screen_area

SUMMARY_MAX = 140  # characters of a first line before it is cut at a sentence end


def split_message(message: str) -> tuple[str, str]:
    """(the first sentence or line, everything after it) of a message that may be many lines."""
    text = (message or "").strip()
    first, _, rest = text.partition("\n")
    if len(first) > SUMMARY_MAX and ". " in first[:SUMMARY_MAX]:
        cut = first.rindex(". ", 0, SUMMARY_MAX) + 1
        first, rest = first[:cut], (first[cut:].strip() + "\n" + rest).strip()
    return first.strip(), rest.strip()


class DetailsSection(QWidget):
    """A "Details" toggle and, when open, a read-only text box below it; hidden while it has no text."""

    toggled = Signal(bool)
    grown = Signal()  # the open box's height changed with its text or width: size the window again

    def __init__(self, parent=None):
        super().__init__(parent)
        self.button = QToolButton()
        self.button.setObjectName("DetailsToggle")
        self.button.setText("Details")
        self.button.setCheckable(True)
        self.button.setArrowType(Qt.ArrowType.RightArrow)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.text = QTextEdit()  # its document knows its height in pixels, for _fit
        self.text.setObjectName("DetailsText")
        self.text.setReadOnly(True)
        self.text.setAcceptRichText(False)
        self.text.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.text.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.text.setVisible(False)
        self.text.viewport().installEventFilter(self)  # a new width wraps it again: _fit
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.text)
        self.button.toggled.connect(self.set_open)
        self.setVisible(False)

    def set_text(self, text: str) -> None:
        self.text.setPlainText(text)
        self.setVisible(bool(text))
        self._fit()

    def _fit(self) -> None:
        """As tall as the wrapped text, up to half the screen (then it scrolls)."""
        doc = self.text.document()
        doc.setTextWidth(self.text.viewport().width())
        chrome = self.text.height() - self.text.viewport().height()  # frame and padding
        most = screen_area(self.mapToGlobal(QPoint(0, 0))).height() // 2
        height = min(most, int(doc.size().height() + 0.999) + chrome)
        if height != self.text.height():
            self.text.setFixedHeight(height)
            if self.text.isVisible():
                self.grown.emit()

    @qt_override
    def eventFilter(self, watched, event) -> bool:
        if watched is self.text.viewport() and event.type() == QEvent.Type.Resize:
            if event.size().width() != event.oldSize().width():
                self._fit()
        return super().eventFilter(watched, event)

    def plain_text(self) -> str:
        return self.text.toPlainText()

    def is_open(self) -> bool:
        return self.button.isChecked()

    def set_open(self, open_: bool) -> None:
        self.button.blockSignals(True)
        self.button.setChecked(open_)
        self.button.blockSignals(False)
        self.button.setArrowType(Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow)
        self.text.setVisible(open_)
        self._fit()
        self.toggled.emit(open_)

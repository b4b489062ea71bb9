"""An error note inside a window (the overlay, the reading log): the whole message, wrapped, in the
error colour, with a ✕; it stays until dismissed (a failed Anki card must be read, not glimpsed)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget


class ErrorNote(QWidget):
    dismissed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.label = QLabel("")
        self.label.setProperty("role", "error")
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # outside text (Anki's messages)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.close_button = QToolButton()
        self.close_button.setObjectName("OverlayClose")
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.setVisible(False)

    def show_text(self, text: str) -> None:
        self.label.setText(text)
        self.setVisible(True)

    def text(self) -> str:
        return self.label.text() if not self.isHidden() else ""

    def dismiss(self) -> None:
        self.setVisible(False)
        self.dismissed.emit()

    def height_for(self, width: int) -> int:
        """The height the whole message needs at `width` (for windows that size themselves)."""
        layout = self.layout()
        assert layout is not None  # set in __init__
        inner = width - self.close_button.sizeHint().width() - layout.spacing()
        return max(self.close_button.sizeHint().height(), self.label.heightForWidth(max(1, inner)))

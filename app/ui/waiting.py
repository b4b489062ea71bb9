"""The small window shown while a capture waits on the desktop (its screenshot portal starting, or
its permission dialog open): what it waits for, in words, and Cancel. Esc, Cancel and closing the
window all cancel (QDialog's own reject), so it needs no event handler of its own.

Not modal: nothing of Hayai is blocked while it is up, and the desktop's dialog stays usable.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from app.ui import theme

TITLE = "Hayai — waiting for your desktop"


class WaitingWindow(QDialog):
    """`rejected` = the user cancelled the capture (Esc, Cancel, or closing the window)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        theme.apply(self)
        self.setWindowTitle(TITLE)
        self.setWindowIcon(theme.app_icon())
        self.setModal(False)
        heading = QLabel("Taking a screenshot…")
        heading.setProperty("role", "title")
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setMinimumWidth(400)
        hint = QLabel("Esc or Cancel stops waiting.")
        hint.setProperty("role", "muted")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addWidget(hint, 1)
        buttons.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(self.label)
        layout.addLayout(buttons)

    def set_text(self, text: str) -> None:
        self.label.setText(text)
        self.adjustSize()

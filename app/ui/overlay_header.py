"""The overlay's header: the status line (engine and file names, server messages; a short word
shown there for a moment by `flash`) and the buttons: Copy, Vertical/Horizontal, ふりがな, Re-scan,
Mine (shown when Anki mining is on) and close. The overlay (app/ui/overlay.py) connects them."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget

from app.ui import theme
from app.ui.rich_text import PlainLabel

FLASH_MS = 1200  # how long a flashed word stays in the status line


class OverlayHeader(QWidget):
    """The status line and the buttons of the overlay's top row."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.status = PlainLabel("")  # engine and file names, server messages
        self.status.setProperty("role", "muted")
        self.status.setFont(theme.ui_font(9))
        self.copy_button = self._button("Copy", "Copy the text (Ctrl+C)")
        self.layout_button = self._button(
            "Vertical", "Switch between horizontal and vertical layout"
        )
        self.furigana_button = self._button("ふりがな", "Show readings above the kanji")
        self.furigana_button.setCheckable(True)
        self.rescan_button = self._button("Re-scan", "Read the same region again")
        self.mine_button = self._button(
            "Mine", "Make an Anki card of this line (of the selected word, when one is selected)"
        )
        self.mine_button.setVisible(False)  # shown when Anki mining is on (set_mining)
        self.close_button = QToolButton()
        self.close_button.setObjectName("OverlayClose")
        self.close_button.setText("✕")
        self.close_button.setToolTip("Close (Esc)")
        self.close_button.setCursor(Qt.CursorShape.PointingHandCursor)

        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.status, 1)
        for button in (
            self.copy_button,
            self.layout_button,
            self.furigana_button,
            self.rescan_button,
            self.mine_button,
        ):
            layout.addWidget(button)
        layout.addWidget(self.close_button)

        # a child: it dies with the header, unlike a singleShot lambda
        self._flash_timer = QTimer(self)
        self._flash_timer.setSingleShot(True)
        self._flash_timer.setInterval(FLASH_MS)
        self._flash_timer.timeout.connect(self._end_flash)
        self._status_before_flash = ""

    @staticmethod
    def _button(text: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setObjectName("OverlayButton")
        button.setText(text)
        button.setToolTip(tip)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        return button

    def show_status(self, text: str) -> None:
        """A new read's status (engine, file name, server message), in the muted colour."""
        self.status.setProperty("role", "muted")
        self.status.setText(text)
        theme.repolish(self.status)

    def set_buttons_enabled(self, enabled: bool) -> None:
        """Copy, layout, furigana and Re-scan: on while there is text to act on."""
        for button in (
            self.copy_button,
            self.layout_button,
            self.furigana_button,
            self.rescan_button,
        ):
            button.setEnabled(enabled)

    def flash(self, text: str) -> None:
        """`text` in the status line for a moment, then the status as it was."""
        if not self._flash_timer.isActive():
            self._status_before_flash = self.status.text()
        self.status.setText(text)
        self._flash_timer.start()

    def _end_flash(self) -> None:
        self.status.setText(self._status_before_flash)

"""The overlay's header: the status line (engine and file names, server messages; a short word
shown there for a moment by `flash`) and the buttons: Copy, Vertical/Horizontal, ふりがな, Re-scan,
Mine (shown when Anki mining is on) and close. The overlay (app/ui/overlay.py) connects them.
On a narrow card (vertical text) the status line is a row of its own above the buttons."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QToolButton, QWidget

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

        # The buttons in a row of their own widget, right-aligned; beside them (column 1 of the
        # grid) the status line, or above them (row 0) when stacked. No layout nested in another:
        # a nested one keeps a stale size hint until activated.
        self._buttons = QWidget()
        row = QHBoxLayout(self._buttons)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        row.addStretch(1)
        for button in (
            self.copy_button,
            self.layout_button,
            self.furigana_button,
            self.rescan_button,
            self.mine_button,
        ):
            row.addWidget(button)
        row.addWidget(self.close_button)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(6)
        self._grid.setVerticalSpacing(4)
        self._grid.setColumnStretch(0, 1)
        self._stacked = True
        self.set_stacked(False)

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

    def set_stacked(self, stacked: bool) -> None:
        """The status line on a row of its own above the buttons (True), or left of them."""
        if stacked != self._stacked:
            self._stacked = stacked
            self._grid.removeWidget(self.status)
            self._grid.removeWidget(self._buttons)
            self._grid.addWidget(self.status, 0 if stacked else 1, 0)
            self._grid.addWidget(self._buttons, 1, 0 if stacked else 1)

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

    def holds_status(self) -> bool:
        """Whether the status line shows its text whole (a flashed word may be longer than the
        status the card was sized for)."""
        return self.status.width() >= self.status.sizeHint().width()

    def _end_flash(self) -> None:
        self.status.setText(self._status_before_flash)

"""The small window that stands in for the tray where there is none (`--no-tray`, or a desktop
without a tray): every tray entry as a button, the model line, and closing it quits Hayai.

A view like the tray (app/ui/tray.py): the same signals and setters, so the application wires both
the same way; it only emits.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.ui import theme
from app.ui.guard import qt_override
from app.ui.rich_text import PlainLabel
from app.ui.views import EntryView


class MainWindow(EntryView, QWidget):
    HOTKEY_GAP = "   "  # buttons have no shortcut column

    def __init__(self, reason: str = "", parent=None):
        """reason: one sentence on why there is no tray (shown above the buttons)."""
        super().__init__(parent)
        theme.apply(self, "HayaiWindow")
        self.setWindowTitle("Hayai")
        self.setWindowIcon(theme.app_icon())
        title = QLabel("Hayai")
        title.setProperty("role", "title")
        self.note = PlainLabel(
            (reason or "There is no tray icon, so Hayai's actions are here.")
            + " Closing this window quits Hayai."
        )
        self.note.setProperty("role", "muted")
        self.note.setWordWrap(True)
        self.hotkey_problem = PlainLabel("")  # a hotkey that does not work as set: why
        self.hotkey_problem.setProperty("role", "error")
        self.hotkey_problem.setWordWrap(True)
        self.model_button = QPushButton("Model: starting…")
        self.model_button.setObjectName("ModelLine")
        self.model_button.setFlat(True)
        self.model_button.setEnabled(False)

        self.capture_button = self._button("Capture region", self.capture_requested, primary=True)
        self.page_button = self._button("Read the whole screen", self.page_requested)
        self.hover_button = QPushButton("Hover to read")
        self.hover_button.setCheckable(True)  # checked by the app (set_hover), from the setting
        self.hover_button.clicked.connect(
            lambda: self.hover_toggled.emit(self.hover_button.isChecked())
        )
        self.rescan_button = self._button("Re-scan last region", self.rescan_requested)
        self.rescan_button.setEnabled(False)
        self.watch_button = self._button("Watch a region…", self.watch_requested)
        self.watch_toggle_button = self._button("Pause watching", self.watch_toggle_requested)
        self.watch_stop_button = self._button("Stop watching", self.watch_stop_requested)
        self.watch_note = PlainLabel("")  # why the watched region is not read now
        self.watch_note.setProperty("role", "muted")
        self.watch_note.setWordWrap(True)
        self.log_button = self._button("Reading log…", self.log_requested)
        self.history_button = self._button("History…", self.history_requested)
        self.settings_button = self._button("Settings…", self.settings_requested)
        self.about_button = self._button("About Hayai", self.about_requested)
        self.quit_button = self._button("Quit", self.quit_requested)
        self.model_button.clicked.connect(self.model_requested.emit)

        grid = QGridLayout()
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(8)
        grid.addWidget(self.capture_button, 0, 0, 1, 2)
        grid.addWidget(self.page_button, 1, 0, 1, 2)
        grid.addWidget(self.hover_button, 2, 0, 1, 2)
        grid.addWidget(self.rescan_button, 3, 0, 1, 2)
        grid.addWidget(self.watch_button, 4, 0, 1, 2)
        grid.addWidget(self.watch_toggle_button, 5, 0)
        grid.addWidget(self.watch_stop_button, 5, 1)
        grid.addWidget(self.watch_note, 6, 0, 1, 2)
        grid.addWidget(self.log_button, 7, 0)
        grid.addWidget(self.history_button, 7, 1)
        grid.addWidget(self.settings_button, 8, 0)
        grid.addWidget(self.about_button, 8, 1)
        grid.addWidget(self.quit_button, 9, 0, 1, 2)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 14, 18, 16)
        layout.setSpacing(10)
        layout.addWidget(title)
        layout.addWidget(self.note)
        layout.addWidget(self.hotkey_problem)
        layout.addLayout(grid)
        self.folder_waiting = PlainLabel("")
        self.folder_waiting.setProperty("role", "muted")
        layout.addWidget(self.folder_waiting)
        layout.addWidget(self.model_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.setFixedWidth(340)
        self._busy = False
        self._quitting = False
        self.entries = {
            "capture": self.capture_button,
            "rescan": self.rescan_button,
            "hover": self.hover_button,
            "watch_toggle": self.watch_toggle_button,
            "watch_stop": self.watch_stop_button,
            "folder_waiting": self.folder_waiting,
            "hotkey_problem": self.hotkey_problem,
            "watch_note": self.watch_note,
        }
        self.set_watch_state("stopped")
        self.set_folder_waiting(0)
        self.set_hotkey_problem("")

    def _button(self, text: str, signal, primary: bool = False) -> QPushButton:
        button = QPushButton(text)
        if primary:
            button.setProperty("role", "primary")
        button.clicked.connect(signal.emit)
        return button

    # --- the tray's setters ----------------------------------------------------------------------

    def set_model_state(self, text: str, actionable: bool = False) -> None:
        self.model_button.setText(text)
        self.model_button.setEnabled(actionable)
        self.model_button.setCursor(
            Qt.CursorShape.PointingHandCursor if actionable else Qt.CursorShape.ArrowCursor
        )

    def set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.setWindowIcon(theme.app_icon(busy))

    def is_busy(self) -> bool:
        return self._busy

    def close_for_quit(self) -> None:
        """Close without asking to quit again (the application is already quitting)."""
        self._quitting = True
        self.close()

    @qt_override
    def closeEvent(self, event) -> None:
        if not self._quitting:
            self.quit_requested.emit()  # the only way back to the app is gone: quit
        super().closeEvent(event)

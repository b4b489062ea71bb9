"""The app's own windows (Settings, History, the reading log, Model, About, a question): one of
each, raised when asked again, and the overlay stepping aside while any is open."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal

if TYPE_CHECKING:
    from app.engines.worker import OcrWorker
    from app.flows.capture import CaptureFlow
    from app.history import History
    from app.settings import Settings
    from app.ui.overlay import Overlay

log = logging.getLogger(__name__)


class Windows(QObject):
    """Below every flow but the capture's: what its windows ask of the others it tells by its
    signals (application.py connects them)."""

    notice = Signal(str, str, bool)  # title, message, error: for the user
    stepped_aside = Signal()  # the overlay stepped aside for a window of ours: its popup goes too
    hotkey_recording = Signal(bool)  # Settings records a combo (True) or stopped (False)
    log_opened = Signal(object)  # the reading log, new: a text view for the popup and Mine
    folder_chosen = Signal(str)  # the model dialog's chosen folder

    def __init__(
        self,
        settings: Settings,
        overlay: Overlay,
        worker: OcrWorker,
        capture: CaptureFlow,
        *,
        history: Callable[[], History | None],
        trigger: Callable[[], str],
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.settings = settings
        self.overlay = overlay
        self.worker = worker
        self.capture = capture  # a question waits while its selection or capture is open
        self.history = history  # the history now (made or dropped when the setting changes)
        self.trigger = trigger  # "hover" or "click", for the reading log's words
        self.session_started = time.time()  # the reading log lists the reads from here on
        self._closing = False  # close_all(): the app quits, the overlay stays away
        self.open: dict[str, Any] = {}  # by name: the window now open
        self._overlay_aside = False  # hidden while a window of ours is open (_overlay_steps_aside)
        # a question kept back while a selection or capture is open
        self._kept_question: tuple | None = None

    def show(self, name: str, build):
        window = self.open.get(name)
        if window is None or not window.isVisible():
            window = build()
            window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
            window.destroyed.connect(lambda *_, n=name: self._closed(n))
            self.open[name] = window
        self._overlay_steps_aside()
        window.show()
        window.raise_()
        window.activateWindow()
        return window

    def visible(self, name: str):
        window = self.open.get(name)
        return window if window is not None and window.isVisible() else None

    def overlay_back(self) -> None:
        """A new read (or a capture) places the overlay again: it no longer waits aside."""
        self._overlay_aside = False

    def _overlay_steps_aside(self) -> None:
        """The overlay stays on top of everything, so it would cover a window of ours (Settings,
        History, …): it steps aside while one is open and comes back, text and all, when the last
        one closes (unless a new read showed it meanwhile)."""
        overlay = self.overlay
        if overlay.isVisible():
            overlay.hide()
            self.stepped_aside.emit()
            self._overlay_aside = True

    def _closed(self, name: str) -> None:
        self.open.pop(name, None)
        if self._overlay_aside and not self._closing:
            if not any(w.isVisible() for w in self.open.values()):
                self._overlay_aside = False
                self.overlay.restore()

    def history_added(self, entry) -> None:
        """A new history row (saved or not yet): the History window and the reading log show it."""
        window = self.visible("history")
        if window is not None:
            window.refresh()
        log_window = self.visible("log")
        if log_window is not None:
            log_window.add(entry)

    def history_edited(self, entry_id: int, text: str) -> None:
        window = self.visible("history")
        if window is not None:
            window.refresh()
        log_window = self.open.get("log")
        if log_window is not None:
            log_window.update_entry(entry_id, text)

    def history_changed(self) -> None:
        """The history file opened (late: it was locked; or afresh): the windows ask again."""
        for name in ("history", "log"):
            window = self.visible(name)
            if window is not None:
                window.refresh()

    def close_all(self) -> None:
        """At quit (Application.quit): every window closes, and none brings the overlay back."""
        self._closing = True
        for window in list(self.open.values()):
            window.close()

    def ask(self, title: str, question: str, buttons: tuple[str, str], answered) -> None:
        """A question in a window that blocks nothing (never application-modal: a selection or
        capture opened meanwhile must take its drag and Esc), shown once no selection or capture
        is open. `answered(True/False)` on a button (Esc or closing it = the second)."""
        if self.capture.is_open():
            self._kept_question = (title, question, buttons, answered)
            return
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(
            QMessageBox.Icon.Question,
            title,
            question,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        )
        box.setWindowModality(Qt.WindowModality.NonModal)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.button(QMessageBox.StandardButton.Yes).setText(buttons[0])
        box.button(QMessageBox.StandardButton.No).setText(buttons[1])
        box.buttonClicked.connect(
            lambda button: answered(box.standardButton(button) == QMessageBox.StandardButton.Yes)
        )
        self.show("shortcuts", lambda: box)

    def ask_kept_question(self) -> None:
        """The selection or capture closed: a question kept back meanwhile is asked now."""
        kept, self._kept_question = self._kept_question, None
        if kept is not None:
            QTimer.singleShot(0, self, lambda: self.ask(*kept))

    # --- the windows -----------------------------------------------------------------------------

    def show_settings(self):
        from app.ui.settings_dialog import SettingsDialog

        def build():
            dialog = SettingsDialog(self.settings)
            # The keys pressed in a hotkey field are a new combo, never a capture.
            dialog.hotkey_recording.connect(self.hotkey_recording.emit)
            dialog.finished.connect(lambda *_: self.hotkey_recording.emit(False))
            return dialog

        return self.show("settings", build)

    def show_history(self):
        history = self.history()
        if history is None:
            self.notice.emit(
                "History is off",
                "Turn on “Keep a history” in Settings to keep past captures.",
                False,
            )
            return None
        from app.ui.history_window import HistoryWindow

        return self.show("history", lambda: HistoryWindow(history))

    def show_log(self):
        history = self.history()
        if history is None:
            self.notice.emit(
                "History is off",
                "The reading log keeps its lines in the history: turn on “Keep a history” in Settings.",
                False,
            )
            return None
        from app.ui.reading_log import ReadingLog

        def build():
            window = ReadingLog(history, self.session_started, trigger=self.trigger)
            self.log_opened.emit(window)  # the popup dictionary and Mine over its lines
            return window

        return self.show("log", build)

    def show_about(self):
        from app.ui.about import AboutDialog

        return self.show("about", AboutDialog)

    def show_model_dialog(self, message: str = ""):
        from app import engines
        from app.ui.model_dialog import ModelDialog

        settings, worker = self.settings, self.worker

        def build():
            dialog = ModelDialog(
                settings.get("model/variant"), message, folder=settings.get("model/folder")
            )
            dialog.downloaded.connect(lambda folder: worker.reload(engines.options(settings)))
            dialog.folder_chosen.connect(self.folder_chosen.emit)
            return dialog

        return self.show("model", build)

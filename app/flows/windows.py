"""The app's own windows (Settings, History, the reading log, Model, About, a question): one of
each, raised when asked again, and the overlay stepping aside while any is open."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer

if TYPE_CHECKING:
    from app.application import Application

log = logging.getLogger(__name__)


class Windows:
    def __init__(self, app: Application):
        self.app = app
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
        overlay = self.app.overlay
        if overlay.isVisible():
            overlay.hide()
            self.app.dictionary_hook.hide()
            self._overlay_aside = True

    def _closed(self, name: str) -> None:
        self.open.pop(name, None)
        if self._overlay_aside and not self.app.quitting:
            if not any(w.isVisible() for w in self.open.values()):
                self._overlay_aside = False
                self.app.overlay.restore()

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
        for window in list(self.open.values()):
            window.close()

    def ask(self, title: str, question: str, buttons: tuple[str, str], answered) -> None:
        """A question in a window that blocks nothing (never application-modal: a selection or
        capture opened meanwhile must take its drag and Esc), shown once no selection or capture
        is open. `answered(True/False)` on a button (Esc or closing it = the second)."""
        if self.app.capture.is_open():
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
            QTimer.singleShot(0, self.app, lambda: self.ask(*kept))

    # --- the windows -----------------------------------------------------------------------------

    def show_settings(self):
        from app.ui.settings_dialog import SettingsDialog

        def build():
            dialog = SettingsDialog(self.app.settings)
            # The keys pressed in a hotkey field are a new combo, never a capture.
            dialog.hotkey_recording.connect(self.app.hotkey_control.suspend)
            dialog.finished.connect(lambda *_: self.app.hotkey_control.suspend(False))
            return dialog

        return self.show("settings", build)

    def show_history(self):
        app = self.app
        if app.history is None:
            app.notify(
                "History is off", "Turn on “Keep a history” in Settings to keep past captures."
            )
            return None
        from app.ui.history_window import HistoryWindow

        return self.show("history", lambda: HistoryWindow(app.history))

    def show_log(self):
        app = self.app
        if app.history is None:
            app.notify(
                "History is off",
                "The reading log keeps its lines in the history: turn on “Keep a history” in Settings.",
            )
            return None
        from app.ui.reading_log import ReadingLog

        def build():
            window = ReadingLog(app.history, app.session_started, trigger=app.lookup_trigger)
            app.dictionary_hook.hook(window)
            app.mining.offer_in(window)
            return window

        return self.show("log", build)

    def show_about(self):
        from app.ui.about import AboutDialog

        return self.show("about", AboutDialog)

    def show_model_dialog(self, message: str = ""):
        from app import engines
        from app.ui.model_dialog import ModelDialog

        settings, worker = self.app.settings, self.app.worker

        def build():
            dialog = ModelDialog(
                settings.get("model/variant"), message, folder=settings.get("model/folder")
            )
            dialog.downloaded.connect(lambda folder: worker.reload(engines.options(settings)))
            dialog.folder_chosen.connect(self.app.status.use_folder)
            return dialog

        return self.show("model", build)

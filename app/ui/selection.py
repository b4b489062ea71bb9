"""Region selection over frozen screenshots: one frameless window per screen
(app/ui/selection_window.py), all of them one session.

Every session ends with exactly one of `selected(Selection)` or `cancelled()`; its windows are
closed and deleted first. Starting a session while another is open cancels the old one.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QCursor, QGuiApplication
from PySide6.QtWidgets import QWidget

from app.capture.models import Capture
from app.ui.selection_window import Selection, SelectionWindow

log = logging.getLogger(__name__)


class SelectionSession(QObject):
    """`SelectionSession(captures).start()`; then `selected(Selection)` or `cancelled()`."""

    selected = Signal(object)
    cancelled = Signal()

    _active: SelectionSession | None = None  # at most one session has windows open

    def __init__(
        self, captures: dict[str, Capture], parent: QObject | None = None, debug: bool = False
    ):
        super().__init__(parent)
        if not captures:
            raise ValueError("a selection needs at least one captured screen")
        self._captures = dict(captures)
        self._debug = debug
        self._windows: list[SelectionWindow] = []
        self._finished = False

    @property
    def is_open(self) -> bool:
        return bool(self._windows) and not self._finished

    @property
    def windows(self) -> list[QWidget]:
        return list(self._windows)

    def start(self) -> None:
        if self._windows or self._finished:
            raise RuntimeError(
                "a SelectionSession starts once; make a new one for the next capture"
            )
        qscreens = {s.name(): s for s in QGuiApplication.screens()}
        for capture in self._captures.values():
            window = SelectionWindow(capture, qscreens.get(capture.screen.name), self._debug)
            window.chosen.connect(self._finish)
            window.cancelled.connect(self.cancel)
            self._windows.append(window)
        cursor = QCursor.pos()
        for window in self._windows:
            window.show_on_screen()
        # The new windows are up before the old ones go: no flash of the live desktop in between.
        previous, SelectionSession._active = SelectionSession._active, self
        if previous is not None and previous is not self:
            previous.cancel()
        # The window under the mouse takes the keyboard, so Esc works at once.
        target = next((w for w in self._windows if w.geometry().contains(cursor)), self._windows[0])
        if (
            QGuiApplication.platformName() != "offscreen"
        ):  # which cannot raise windows (and says so)
            target.raise_()
        target.activateWindow()
        target.setFocus()

    def cancel(self) -> None:
        self._finish(None)

    def _finish(self, selection: Selection | None) -> None:
        if self._finished:
            return
        self._finished = True
        windows, self._windows = self._windows, []
        for window in windows:
            window.close()  # WA_DeleteOnClose: deleted by the event loop
        if SelectionSession._active is self:
            SelectionSession._active = None
        if selection is None:
            self.cancelled.emit()
        else:
            log.info(
                "selected %s on %s (desktop %s)",
                selection.box_image_px,
                selection.screen_name,
                selection.box_desktop_px,
            )
            self.selected.emit(selection)

"""The controller between the text views and the dictionary popup: a hovered character → a lookup
→ the word highlighted in its view and the popup beside the line; Esc in a watched view closes the
popup first; the index is built off the GUI thread the first time.

Wiring (app/flows/dictionary_hook.py):
    controller = DictionaryPopupController(Dictionary(han_language=...))
    overlay.word_hovered.connect(controller.on_hover)
    overlay.word_left.connect(controller.on_left)
    controller.highlight.connect(overlay.highlight)
    controller.watch(overlay)                     # Esc closes the popup first, then the overlay
    controller.prepare_in_background()            # index (first run ~20 s) + analyser, off the GUI thread
    overlay.furigana_provider = controller.dictionary.furigana
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt, QTimer, Signal
from PySide6.QtWidgets import QWidget

from app.ui.dictionary_popup import DictionaryPopup
from app.ui.guard import qt_override
from app.ui.screens import screen_area
from model.progress import fraction

HIDE_DELAY_MS = 350  # time to move the mouse from the word into the popup


class DictionaryPopupController(QObject):
    """Runs the lookup for a hovered character, asks the overlay to highlight it, shows the popup.

    Lookups are a few ms whatever the text (they read only the text around the pointer) and run on
    the GUI thread; building the index (first run only, ~20 s) runs on a worker thread while the
    popup says so.
    """

    highlight = Signal(int, int)  # start, length in the overlay's text (length 0: clear)
    copied = Signal(str)
    _prepared = Signal(str)  # from the build thread: "" on success, else the error
    _progress = Signal(str, float)

    def __init__(
        self, dictionary, popup: DictionaryPopup | None = None, language: str = "auto", parent=None
    ):
        super().__init__(parent)
        self.dictionary = dictionary
        # auto | ja | zh | ko (the CLI's --lang; Han-only text uses the dictionary's)
        self.language = language
        self.popup = popup or DictionaryPopup()
        self.popup.copied.connect(self.copied)
        self.popup.pointer_entered.connect(self._cancel_hide)
        self.popup.pointer_left.connect(self.on_left)
        self._hide_timer = QTimer(self)
        self._hide_timer.setSingleShot(True)
        self._hide_timer.setInterval(HIDE_DELAY_MS)
        self._hide_timer.timeout.connect(self.hide)
        self._building = False
        self._prepared_once = False
        self._pending: tuple | None = None  # on_hover's arguments, waiting for the index
        self._last: tuple[str, int] | None = None
        self._prepared.connect(self._on_prepared)
        self._progress.connect(self._on_progress)

    # --- slots for the overlay -------------------------------------------------------------------

    def on_hover(
        self, text: str, index: int, global_pos: QPoint, line: QRect | None = None, vertical=False
    ) -> None:
        """`line`: the hovered line (a column when `vertical`) on the screen; the popup goes
        beside it, never over it."""
        if index < 0:
            self.on_left()
            return
        self._cancel_hide()
        if self._last == (text, index) and self.popup.isVisible():
            return
        if not self._building and not self.dictionary.is_ready():
            self.prepare_in_background()
        beside = (self._screen_rect(global_pos), line, vertical)
        if self._building:
            self._pending = (text, index, QPoint(global_pos), line, vertical)
            self.popup.set_message("Preparing the dictionary for its first use (about 20 seconds)…")
            self.popup.show_at(global_pos, *beside)
            return
        try:
            result = self.dictionary.lookup(text, index, self.language)
        # data missing or broken: say so in the popup, keep the app running
        except Exception as exc:
            self.popup.set_message(f"Dictionary unavailable: {exc}")
            self.popup.show_at(global_pos, *beside)
            return
        self._last = (text, index)
        if not result.entries and not result.message:
            self.highlight.emit(index, 0)
            self.popup.hide()
            return
        self.highlight.emit(index, result.match_len)
        self.popup.sentence = text
        self.popup.show_result(result, global_pos, *beside)

    def on_left(self) -> None:
        """The mouse left the word (or the popup): hide soon unless it comes back."""
        self._hide_timer.start()

    def hide(self) -> None:
        self._hide_timer.stop()
        self._last = None
        self._pending = None  # a lookup waiting for the index is about text that may be gone
        if self.popup.isVisible():
            self.popup.hide()
        self.highlight.emit(0, 0)

    def watch(self, widget: QWidget) -> None:
        """Let Esc in `widget` (the overlay) close the popup first."""
        widget.installEventFilter(self)

    @qt_override
    def eventFilter(self, watched, event) -> bool:
        if (
            event.type() == QEvent.Type.KeyPress
            and event.key() == Qt.Key.Key_Escape
            and self.popup.isVisible()
        ):
            self.hide()
            return True
        return False

    # --- internals -------------------------------------------------------------------------------

    def _cancel_hide(self) -> None:
        self._hide_timer.stop()

    @staticmethod
    def _screen_rect(point: QPoint) -> QRect:
        return screen_area(point)

    def prepare_in_background(self) -> None:
        """Build/open the index and load the analyser on a worker thread (call once at start-up)."""
        if self._building or self._prepared_once:
            return
        self._building = True

        def work() -> None:
            try:
                self.dictionary.prepare(
                    lambda stage, done, total: self._progress.emit(stage, fraction(done, total))
                )
                self._prepared.emit("")
            except Exception as exc:  # reported in the popup
                self._prepared.emit(str(exc))

        threading.Thread(target=work, name="hayai-dictionary-index", daemon=True).start()

    def _on_progress(self, stage: str, fraction: float) -> None:
        if self.popup.isVisible() and self.popup.result is None:
            self.popup.set_message(
                f"Preparing the dictionary for its first use: {int(fraction * 100)}% ({stage})…"
            )

    def _on_prepared(self, error: str) -> None:
        self._building = False
        self._prepared_once = not error
        if error:
            self.popup.set_message(f"Dictionary unavailable: {error}")
            return
        pending, self._pending = self._pending, None
        if pending and self.popup.isVisible():
            self.on_hover(*pending)

"""The popup dictionary wired to every text view of the app (the overlay, the reading log, the
whole screen's boxes): a hover (or click) there → a lookup → the popup beside the line and the
word highlighted in the view it came from. One popup for all of them (app/ui/dictionary_popup.py,
run by app/ui/dictionary_popup_controller.py)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

if TYPE_CHECKING:
    from app.flows.model_status import ModelStatus
    from app.flows.windows import Windows
    from app.settings import Settings
    from app.ui.dictionary_popup_controller import DictionaryPopupController
    from app.ui.overlay import Overlay

log = logging.getLogger(__name__)


class DictionaryHook(QObject):
    attached = Signal(object)  # the popup (DictionaryPopup), made: Mine and the overlay's furigana

    def __init__(
        self,
        settings: Settings,
        overlay: Overlay,
        windows: Windows,
        status: ModelStatus,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.settings = settings
        self.overlay = overlay
        self.windows = windows  # a reading log already open is hooked too
        self.status = status  # the index is built once the model is ready
        # made right after the tray shows (its imports take ~0.2 s): attach()
        self.controller: DictionaryPopupController | None = None
        self.view = None  # the view whose word the popup shows
        self._prepared = False

    def attach(self) -> None:
        """Make the popup and wire it to the overlay (and a reading log already open);
        furigana for the overlay's toggle."""
        d = self.controller = self.make_controller()
        if d is None:
            return
        o = self.overlay
        self.hook(o)
        o.closed.connect(d.hide)
        o.text_edited.connect(lambda _text: d.hide())  # the entry is about text that changed
        o.text_replaced.connect(d.hide)
        d.highlight.connect(self._highlight_word)
        d.watch(o)  # Esc closes the popup first, then the overlay
        log_window = self.windows.open.get("log")
        if log_window is not None:
            self.hook(log_window)
        self.attached.emit(d.popup)
        if self.status.state == "ready":
            self.prepare()

    def hook(self, view) -> None:
        """A text view's hover → a lookup there (nothing while there is no popup)."""
        d = self.controller
        if d is None:
            return
        view.word_hovered.connect(lambda text, i, pos, v=view: self._look_up(v, text, i, pos))
        view.word_left.connect(d.on_left)
        view.destroyed.connect(lambda *_, v=view: self._forget(v))

    def furigana(self):
        """The overlay's furigana provider, or None without a dictionary."""
        if self.controller is None:
            return None
        return getattr(self.controller.dictionary, "furigana", None)

    def set_han_language(self, language: str) -> None:
        if self.controller is not None:
            self.controller.dictionary.han_language = language

    def hide(self) -> None:
        if self.controller is not None:
            self.controller.hide()

    def _look_up(self, view, text: str, index: int, pos) -> None:
        if self.controller is None:
            return
        if self.view is not None and self.view is not view:
            self.view.highlight(0, 0)
        self.view = view
        line, vertical = view.line_at(index)  # the popup goes beside this line, never over it
        self.controller.on_hover(text, index, pos, line, vertical)

    def _highlight_word(self, start: int, length: int) -> None:
        if self.view is not None:
            self.view.highlight(start, length)

    def _forget(self, view) -> None:
        if self.view is view:
            self.view = None

    def prepare(self) -> None:
        if self.controller is not None and not self._prepared:
            self._prepared = True
            # After the model, not beside it: the first run builds the dictionary index (~20 s of CPU).
            QTimer.singleShot(1000, self.controller.prepare_in_background)

    def make_controller(self):
        """The popup dictionary's controller; None when the dictionary part is not installed."""
        try:
            from app.dictionary import Dictionary
            from app.ui.dictionary_popup_controller import DictionaryPopupController
        except ImportError as exc:
            log.info("no popup dictionary: %s", exc)
            return None
        try:
            return DictionaryPopupController(
                Dictionary(han_language=self.settings.get("dictionary/han_language"))
            )
        except Exception as exc:  # a broken dictionary must not stop the OCR app
            log.warning("popup dictionary unavailable: %s", exc)
            return None

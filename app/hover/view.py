"""Hover to read as the popup dictionary sees it: a text view (`DictionaryHook.hook`) whose text is
the block under the pointer and whose line is that block, so the one popup goes beside it, never
over it, shows the whole text read with the word marked, and Mine gets the block's picture."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QPoint, QRect, Signal

from app.hover.find import Found, to_logical
from app.ui.screens import screen_area

if TYPE_CHECKING:
    from app.flows.dictionary_hook import DictionaryHook


class HoverView(QObject):
    """`show_word(found, index, pos)` looks the word up through the app's popup dictionary;
    `say(found, text, pos)` puts a sentence in the popup beside the block."""

    word_hovered = Signal(str, int, QPoint)
    word_left = Signal()

    def __init__(self, hook: DictionaryHook, parent: QObject | None = None):
        super().__init__(parent)
        self.dictionary = hook  # the app's one popup dictionary
        self.text = ""  # the text read in the block under the pointer (its lines joined)
        self.rect = QRect()  # that block's crop, logical
        self.vertical = False
        self.shown: Found | None = None  # the block whose word the popup shows
        self._hooked = False

    # --- what DictionaryHook asks of a text view ---------------------------------------------------

    def line_at(self, index: int) -> tuple[QRect, bool]:
        return QRect(self.rect), self.vertical

    def highlight(self, start: int, length: int) -> None:
        """The word looked up: the popup shows the whole text with it marked."""
        popup = self.popup()
        if popup is not None:
            popup.set_read(self.text if length else "", start, length)

    # --- the popup -------------------------------------------------------------------------------

    def popup(self):
        controller = self.dictionary.controller
        return None if controller is None else controller.popup

    def hook(self) -> None:
        """The popup dictionary reads this view's words (once the dictionary is attached)."""
        hook = self.dictionary
        if not self._hooked and hook.controller is not None:
            hook.hook(self)
            self._hooked = True

    def show_word(self, found: Found, index: int, pos: QPoint) -> None:
        """The entry of the word at `index` of the block's text (the lookup runs now)."""
        self.shown = found
        self.text = "".join(found.lines)
        self._place(found)
        self.hook()
        self.word_hovered.emit(self.text, index, pos)

    def say(self, found: Found, text: str, pos: QPoint) -> None:
        """A sentence in the popup beside the block ("Reading…", why it was not read)."""
        controller = self.dictionary.controller
        if controller is None:
            return
        controller.hide()  # its last word is forgotten: the next one is shown, even the same
        self._place(found)
        controller.popup.set_message(text)
        controller.popup.show_at(pos, screen_area(pos), self.rect, self.vertical)

    def hide(self) -> None:
        self.dictionary.hide()

    def _place(self, found: Found) -> None:
        x0, y0, x1, y1 = to_logical(found.crop, found.screen)
        self.rect = QRect(x0, y0, x1 - x0, y1 - y0)
        self.vertical = found.block.vertical

    def mining_context(self, max_side: int) -> tuple[bytes | None, str]:
        """Mine from the popup: the picture of the block the word was read in, and where."""
        from app.flows.reads import png_bytes

        found = self.shown
        if found is None or found.image is None:
            return None, "Hayai · hover"
        return png_bytes(found.image, max_side) or None, f"Hayai · hover · {found.screen.name}"

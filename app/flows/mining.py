"""Mine from the app: the overlay's or the reading log's Mine, the popup's "+ Anki". The note gets
the word, its line and the crop the text came from; the view it came from shows what Anki did.
Every AnkiConnect call runs on the Anki thread of `AnkiActions` (app/ui/anki_action.py)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from app.anki.note import Mined
from app.ui.anki_action import FAILED, AnkiActions

if TYPE_CHECKING:
    from PySide6.QtCore import QObject

    from app.flows.dictionary_hook import DictionaryHook
    from app.flows.reads import Reads
    from app.flows.windows import Windows
    from app.hover.view import HoverView
    from app.settings import Settings
    from app.ui.overlay import Overlay

ANKI_IMAGE_SIDE = 1280  # the crop on a card: sharp enough to read, small enough to sync


class Mining:
    """`anki` is None while Anki is off."""

    def __init__(
        self,
        settings: Settings,
        overlay: Overlay,
        reads: Reads,
        hook: DictionaryHook,
        hover_view: HoverView,
        windows: Windows,
        parent: QObject | None = None,  # of its AnkiActions (Mining itself is no QObject)
    ):
        self.settings = settings
        self.overlay = overlay
        self.reads = reads  # the read on screen in the overlay: its crop
        self.hook = hook  # the view whose word the popup shows; the dictionary, for a lookup
        self.hover_view = hover_view  # Hover to read: the block's picture
        self.windows = windows  # the reading log: its current line's picture
        self.anki = self._make_actions(parent) if settings.get("anki/enabled") else None
        self._view = overlay  # where the last Mine came from: it shows what Anki did
        self.offer_in(overlay)

    def _make_actions(self, parent: QObject | None) -> AnkiActions:
        from app.dictionary.furigana import furigana

        actions = AnkiActions(self.settings, furigana=furigana, parent=parent)
        actions.line_done.connect(
            lambda state, message: self._view.show_note(message, error=state == FAILED)
        )
        return actions

    def offer_in(self, view) -> None:
        """A text view (the overlay, the reading log) with a Mine action while Anki is on."""
        view.set_mining(self.anki is not None)
        view.mine_requested.connect(
            lambda line, selected, v=view: self.mine_line(line, selected, v)
        )

    def attach_popup(self, popup) -> None:
        if self.anki is not None:
            popup.attach_anki(self.anki)
            popup.mining_context = self.context

    def context(self, view=None) -> tuple[bytes | None, str]:
        """The crop of the text the note is made from (PNG) and where it came from: the reading
        log's current line (its history thumbnail) when the word or line is from the log, the
        block read under the pointer for Hover to read, else the read on screen in the overlay."""
        from app.flows.reads import png_bytes
        from app.platform.qt_images import pil_to_qimage

        view = view or self.hook.view
        if view is not None and view is self.hover_view:  # Hover to read: the block's picture
            return self.hover_view.mining_context(ANKI_IMAGE_SIDE)
        log_window = self.windows.open.get("log")
        if view is not None and view is log_window:
            entry = log_window.current_entry()
            if entry is None:
                return None, "Hayai · reading log"
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.created))
            return entry.thumbnail, f"Hayai · {entry.source or 'read'} · {when}"
        pending = self.reads.shown
        if pending is None or pending.result.image is None:
            return None, "Hayai"
        png = png_bytes(pil_to_qimage(pending.result.image), max_side=ANKI_IMAGE_SIDE)
        return png or None, f"Hayai · {pending.source} · {pending.region.screen_name}"

    def mine_line(self, line: str, selected: str, view=None) -> None:
        """Mine: a card for the selected word (looked up), else for the whole line."""
        if self.anki is None or not line.strip():
            return
        self._view = view or self.overlay
        image, source = self.context(self._view)
        mined = Mined(
            word=selected or line.strip(),
            sentence=line,
            match=selected,
            image_png=image,
            source=source,
        )
        d = self.hook.controller
        if selected and d is not None and d.dictionary.is_ready():
            try:
                result = d.dictionary.lookup(selected, 0)
            except Exception:  # the note still gets the word and the line
                result = None
            if result and result.entries and result.match_len == len(selected):
                mined = Mined.from_entry(result.entries[0], line, image_png=image, source=source)
                mined.match = selected
        self._view.show_note("Adding to Anki…")
        self.anki.mine_line(mined)

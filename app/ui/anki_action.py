"""Anki from the GUI: every AnkiConnect call on one worker thread, results back on the GUI thread.

`AnkiActions` keeps a state per word (key = headword + reading) that the dictionary popup draws
as its "+ Anki" / "in deck" link, and runs the one code path of app/anki/miner.py. A failed add is
shown once, in the popup where it was asked (`forget`); while AnkiConnect does not answer
(`unreachable`, its sentence) the links are unavailable, and each new popup asks again (`check`).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal

from app.anki.connect import AnkiError, AnkiUnreachable
from app.anki.miner import AnkiConfig, Miner
from app.anki.note import Mined

log = logging.getLogger(__name__)

NEW, CHECKING, ADDING, ADDED, IN_DECK, FAILED = (
    "new",
    "checking",
    "adding",
    "added",
    "in_deck",
    "error",
)


@dataclass
class WordState:
    state: str = NEW
    message: str = ""  # the error, or what happened
    notes: list[int] = field(default_factory=list)  # the notes that hold the word


def word_key(word: str, reading: str = "") -> str:
    return f"{word}\t{reading}"


def _where(settings) -> str:
    """Where a duplicate was looked for (the anki/duplicates setting), in words."""
    return "your collection" if settings.get("anki/duplicates") == "collection" else "the deck"


class AnkiActions(QObject):
    changed = Signal(str)  # a word's key: its state changed
    reach_changed = Signal()  # AnkiConnect answers again, or stopped answering: `unreachable`
    line_done = Signal(str, str)  # state (added / in_deck / error), message: "Mine this line"
    _finished = Signal(object)  # from the worker: a callable to run on the GUI thread

    def __init__(self, settings, furigana=None, parent=None):
        super().__init__(parent)
        self.settings = settings
        self.furigana = furigana  # (text) -> [(surface, reading|None)], for the sentence field
        self.states: dict[str, WordState] = {}
        self.reachable: bool | None = None  # unknown until a call answers
        self.unreachable = ""  # while nothing answers: the sentence that says so (a tooltip)
        self._probing = False  # one "does AnkiConnect answer now?" at a time
        self._closed = False  # shut down: nothing more is asked
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hayai-anki")
        self._finished.connect(lambda apply: apply())

    def state(self, key: str) -> WordState:
        return self.states.get(key) or WordState()

    def miner(self) -> Miner:
        return Miner(AnkiConfig.from_settings(self.settings))

    # --- the popup's link ------------------------------------------------------------------------

    def check(self, key: str, mined: Mined) -> None:
        """Find out quietly whether the word is in the deck already (once per word); while
        AnkiConnect does not answer, ask it again instead (the popup's links come back when it
        does: `reach_changed`)."""
        if self.reachable is False:
            self._probe()
            return
        if key in self.states:
            return
        self._set(key, WordState(CHECKING))

        def work():
            try:
                found = self.miner().existing(mined, self.furigana)
            except AnkiUnreachable as exc:
                return None, str(exc)  # not known: asked again once AnkiConnect answers
            except AnkiError:
                return WordState(NEW), ""
            return (WordState(IN_DECK, notes=found) if found else WordState(NEW)), ""

        self._run(key, work)

    def forget(self, keys) -> None:
        """The errors of `keys` were shown: the next popup shows those words afresh."""
        for key in keys:
            if self.state(key).state == FAILED:
                del self.states[key]

    def _probe(self) -> None:
        if self._probing:
            return
        self._probing = True

        def job():
            try:
                self.miner().client.version()
                why = ""
            except AnkiUnreachable as exc:
                why = str(exc)
            except AnkiError:  # it answers, if not as wished: the link says what on a click
                why = ""
            except Exception:  # never lose the link to a bug: unchanged
                log.exception("asking AnkiConnect whether it answers failed")
                why = self.unreachable
            self._finished.emit(lambda: self._probed(why))

        self._submit(job)

    def _probed(self, why: str) -> None:
        self._probing = False
        self._reached(why)

    def add(self, key: str, mined: Mined) -> None:
        """The link was clicked: add the note, or open the notes when the word is in the deck."""
        current = self.state(key)
        if current.state in (ADDING,):
            return
        if current.state in (IN_DECK, ADDED) and current.notes:
            self.browse(current.notes)
            return
        self._set(key, WordState(ADDING))

        def work():
            try:
                added = self.miner().add(mined, self.furigana)
            except AnkiUnreachable as exc:
                return WordState(FAILED, str(exc)), str(exc)
            except AnkiError as exc:
                return WordState(FAILED, str(exc)), ""
            if added.duplicate:
                return WordState(
                    IN_DECK, f"Already in {_where(self.settings)}.", added.existing
                ), ""
            assert added.note_id is not None  # added.duplicate is its absence
            return WordState(ADDED, f"Added to {added.deck}.", [added.note_id]), ""

        self._run(key, work)

    def browse(self, note_ids: list[int]) -> None:
        def work():
            try:
                self.miner().browse(note_ids)
            except AnkiError:
                pass  # nothing to show it on; the next click will say what is wrong

        self._submit(work)

    # --- the overlay's "Mine this line" ------------------------------------------------------------

    def mine_line(self, mined: Mined) -> None:
        def work():
            try:
                added = self.miner().add(mined, self.furigana)
            except AnkiError as exc:
                message, down = str(exc), isinstance(exc, AnkiUnreachable)

                def failed() -> None:
                    self._reached(message if down else "")
                    self.line_done.emit(FAILED, message)

                return failed
            if added.duplicate:
                message = f"This line is in {_where(self.settings)} already."
                return lambda: self.line_done.emit(IN_DECK, message)
            return lambda: self.line_done.emit(ADDED, f"Added to {added.deck}.")

        self._submit(lambda: self._finished.emit(work()))

    # --- internals -------------------------------------------------------------------------------

    def _set(self, key: str, state: WordState) -> None:
        self.states[key] = state
        self.changed.emit(key)

    def _run(self, key: str, work) -> None:
        """`work()` -> (the word's state (None: not known), "" when AnkiConnect answered, else
        why not)."""

        def job():
            why: str | None
            try:
                state, why = work()
            except Exception as exc:  # never lose the link's state to a bug: show it
                state, why = WordState(FAILED, f"Could not make the note: {exc}"), None
            self._finished.emit(lambda: self._done(key, state, why))

        self._submit(job)

    def _done(self, key: str, state: WordState | None, why: str | None) -> None:
        if why is not None:
            self._reached(why)
        if state is None:
            self.states.pop(key, None)
            self.changed.emit(key)
        else:
            self._set(key, state)

    def _reached(self, why: str) -> None:
        """AnkiConnect answered (`why` empty) or nothing did (`why` says so)."""
        was_down = self.reachable is False
        self.reachable, self.unreachable = not why, why
        if was_down != bool(why):
            self.reach_changed.emit()

    def _submit(self, job) -> None:
        """Run `job` on the Anki thread; after `shutdown` (the app quits) a late answer's
        follow-up (a popup asking again) is dropped."""
        if not self._closed:
            self._pool.submit(job)

    def shutdown(self) -> None:
        self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)

"""The Anki page of the settings window: where AnkiConnect is, which deck and note type, and which
note-type field gets what. Anki is asked on a worker thread; the window never waits on it."""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.anki.miner import AnkiConfig, Miner, parse_mapping
from app.anki.note import HAYAI_FIELDS, HAYAI_NOTE_TYPE, MARKERS, NONE
from app.settings.table import BY_KEY
from app.ui import theme
from app.ui.rich_text import PlainLabel

if TYPE_CHECKING:
    from app.settings import Settings

DEFAULT_DECK_TEXT = "Hayai (made when missing)"


class _Relay(QObject):
    done = Signal(object)  # a callable to run on the GUI thread


class AnkiSettingsPage(QWidget):
    """Edits the `anki/*` settings; `values()` returns them by key for the dialog to save."""

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self._relay = _Relay(self)
        self._relay.done.connect(lambda apply: apply())
        self._fields: list[str] = []  # the chosen note type's fields, as Anki last said
        self._mapping = parse_mapping(settings.stored("anki/fields"))

        self.enabled = QCheckBox(
            "Make Anki cards (“+ Anki” in the dictionary, Mine in the overlay)"
        )
        self.enabled.setChecked(bool(settings.stored("anki/enabled")))
        self.url = QLineEdit(str(settings.stored("anki/url")))
        self.key = QLineEdit(str(settings.stored("anki/key")))
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText("only when AnkiConnect's settings set one")
        self.connect_button = QPushButton("Connect")
        self.connect_button.setToolTip("Ask Anki for its decks and note types")
        self.status = PlainLabel("Not connected yet: press Connect with Anki open.")  # Anki's words
        self.status.setProperty("role", "muted")
        self.status.setWordWrap(True)
        self.deck = QComboBox()
        self.deck.setEditable(True)
        deck_text = self.deck.lineEdit()
        assert deck_text is not None  # setEditable made it
        deck_text.setPlaceholderText(DEFAULT_DECK_TEXT)
        self.deck.setEditText(str(settings.stored("anki/deck")))
        self.duplicates = QComboBox()
        scope = BY_KEY["anki/duplicates"]
        for value, label in zip(scope.choices, scope.choice_labels, strict=True):
            self.duplicates.addItem(label, value)
        self.duplicates.setCurrentIndex(
            max(0, self.duplicates.findData(settings.stored("anki/duplicates")))
        )
        self.duplicates.setToolTip(scope.help)
        self.note_type = QComboBox()
        self.note_type.addItem(HAYAI_NOTE_TYPE)
        current = str(settings.stored("anki/note_type")) or HAYAI_NOTE_TYPE
        if current != HAYAI_NOTE_TYPE:
            self.note_type.addItem(current)
        self.note_type.setCurrentText(current)
        self.create_button = QPushButton("Create Hayai note type")
        self.create_button.setToolTip("A note type with a field for everything Hayai can fill")
        self.tags = QLineEdit(str(settings.stored("anki/tags")))
        self.tags.setPlaceholderText("separated by spaces")
        self.field_combos: dict[str, QComboBox] = {}

        address = QHBoxLayout()
        address.setContentsMargins(0, 0, 0, 0)
        address.addWidget(self.url, 1)
        address.addWidget(self.connect_button)
        note_type = QHBoxLayout()
        note_type.setContentsMargins(0, 0, 0, 0)
        note_type.addWidget(self.note_type, 1)
        note_type.addWidget(self.create_button)
        form = QFormLayout()
        form.setHorizontalSpacing(16)
        form.setVerticalSpacing(8)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        form.addRow(self.enabled)
        form.addRow("AnkiConnect address", address)
        form.addRow("API key", self.key)
        form.addRow("", self.status)
        form.addRow("Deck", self.deck)
        form.addRow(scope.label, self.duplicates)
        form.addRow("Note type", note_type)
        form.addRow("Tags", self.tags)
        fields_label = QLabel("Which field of the note type gets what:")
        fields_label.setProperty("role", "muted")
        form.addRow(fields_label)
        self.form = form
        self._first_field_row = form.rowCount()  # the field rows follow, one per note-type field
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(form)
        layout.addStretch(1)

        self.connect_button.clicked.connect(self.refresh)
        self.create_button.clicked.connect(self.create_note_type)
        self.note_type.currentTextChanged.connect(self._load_fields)
        self._show_fields(list(HAYAI_FIELDS) if current == HAYAI_NOTE_TYPE else list(self._mapping))

    # --- what the dialog saves -------------------------------------------------------------------

    def values(self) -> dict[str, object]:
        deck = self.deck.currentText().strip()
        note_type = self.note_type.currentText().strip()
        mapping = {name: combo.currentData() for name, combo in self.field_combos.items()}
        if note_type == HAYAI_NOTE_TYPE and mapping == {
            name: m for name, m in HAYAI_FIELDS.items() if name in mapping
        }:
            mapping = {}  # Hayai's own fields: nothing to store
        return {
            "anki/enabled": self.enabled.isChecked(),
            "anki/url": self.url.text().strip(),
            "anki/key": self.key.text().strip(),
            "anki/deck": "" if deck == DEFAULT_DECK_TEXT else deck,
            "anki/duplicates": self.duplicates.currentData(),
            "anki/note_type": "" if note_type == HAYAI_NOTE_TYPE else note_type,
            "anki/fields": json.dumps(mapping, ensure_ascii=False) if mapping else "",
            "anki/tags": " ".join(self.tags.text().split()),
        }

    def problem(self) -> str:
        """Why these values cannot be saved, or ""."""
        values = self.values()
        if values["anki/note_type"] and not values["anki/fields"]:
            return "Anki: choose which field gets what for the note type."
        return ""

    # --- talking to Anki (on a worker thread) ----------------------------------------------------

    def _miner(self) -> Miner:
        return Miner(AnkiConfig(url=self.url.text().strip(), key=self.key.text().strip()))

    def _call(self, work, done) -> None:
        """Run `work()` on a thread; `done(result, error)` on the GUI thread."""
        self.connect_button.setEnabled(False)
        self.create_button.setEnabled(False)

        def job():
            try:
                result, error = work(), ""
            except Exception as exc:  # AnkiError has the sentence; anything else is shown too
                result, error = None, str(exc)
            self._relay.done.emit(lambda: self._finish(done, result, error))

        threading.Thread(target=job, name="hayai-anki-settings", daemon=True).start()

    def _finish(self, done, result, error) -> None:
        self.connect_button.setEnabled(True)
        self.create_button.setEnabled(True)
        done(result, error)

    def refresh(self) -> None:
        self.status.setText("Asking Anki…")
        miner = self._miner()

        def work():
            version = miner.client.version()
            return version, miner.deck_names(), miner.note_type_names()

        self._call(work, self._on_refreshed)

    def _on_refreshed(self, result, error: str) -> None:
        if error:
            self._say(error, error=True)
            return
        version, decks, note_types = result
        deck, note_type = self.deck.currentText(), self.note_type.currentText()
        self.deck.clear()
        self.deck.addItems(decks)
        self.deck.setEditText(deck)
        self.note_type.blockSignals(True)
        self.note_type.clear()
        self.note_type.addItems(sorted(set(note_types) | {HAYAI_NOTE_TYPE}))
        self.note_type.setCurrentText(note_type)
        self.note_type.blockSignals(False)
        has_hayai = HAYAI_NOTE_TYPE in note_types
        self.create_button.setVisible(not has_hayai)
        self._say(
            f"Connected: AnkiConnect {version}, {len(decks)} decks, {len(note_types)} note types."
        )
        self._load_fields(self.note_type.currentText())

    def create_note_type(self) -> None:
        miner = self._miner()
        self._call(miner.create_note_type, self._on_created)

    def _on_created(self, result, error: str) -> None:
        if error:
            self._say(error, error=True)
            return
        self._say("Made the Hayai note type in Anki.")
        self.create_button.setVisible(False)
        self.note_type.setCurrentText(HAYAI_NOTE_TYPE)
        self._show_fields(list(HAYAI_FIELDS))

    def _load_fields(self, note_type: str) -> None:
        note_type = note_type.strip()
        if not note_type:
            return
        miner = self._miner()
        self._call(lambda: miner.field_names(note_type), self._on_fields)

    def _on_fields(self, fields, error: str) -> None:
        if error:
            if self.note_type.currentText() == HAYAI_NOTE_TYPE:
                self._show_fields(list(HAYAI_FIELDS))  # made on the first card
            return
        self._show_fields(fields)

    # --- the field mapping -----------------------------------------------------------------------

    def _show_fields(self, fields: list[str]) -> None:
        """One row per note-type field, each a choice of what Hayai puts there."""
        chosen = {name: combo.currentData() for name, combo in self.field_combos.items()}
        while self.form.rowCount() > self._first_field_row:
            self.form.removeRow(self._first_field_row)
        self.field_combos = {}
        self._fields = list(fields)
        hayai = self.note_type.currentText() == HAYAI_NOTE_TYPE
        for name in fields:
            combo = QComboBox()
            combo.addItem("(nothing)", NONE)
            for value, label in MARKERS.items():
                combo.addItem(label, value)
            marker = chosen.get(name) or self._mapping.get(name)
            if marker is None and hayai:
                marker = HAYAI_FIELDS.get(name, NONE)
            combo.setCurrentIndex(max(0, combo.findData(marker or NONE)))
            self.field_combos[name] = combo
            self.form.addRow(PlainLabel(name), combo)  # Anki's field names are outside text

    def _say(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setProperty("role", "error" if error else "muted")
        theme.repolish(self.status)

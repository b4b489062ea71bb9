"""The one code path that makes a note: the popup's "+ Anki", "Mine this line" and `hayai anki`.

Every method talks to Anki over the network and may take seconds, so the app calls them from a
worker thread (app/ui/anki_action.py); the CLI calls them directly.
"""

from __future__ import annotations

import base64
import html
import json
import re
from dataclasses import dataclass, field

from app.anki import note as notes
from app.anki.connect import DEFAULT_URL, AnkiConnect, AnkiError, AnkiUnreachable

DEFAULT_DECK = "Hayai"
DEFAULT_TAGS = ("hayai",)


@dataclass
class AnkiConfig:
    """The user's Anki settings (Settings → Anki). Empty deck/note type: Hayai's own, made when
    missing; an empty mapping with the Hayai note type: its own fields."""

    url: str = DEFAULT_URL
    key: str = ""
    deck: str = ""
    note_type: str = ""
    mapping: dict[str, str] = field(default_factory=dict)  # note-type field -> marker
    tags: tuple[str, ...] = DEFAULT_TAGS

    @classmethod
    def from_settings(cls, settings) -> AnkiConfig:
        return cls(
            url=settings.get("anki/url"),
            key=settings.get("anki/key"),
            deck=settings.get("anki/deck"),
            note_type=settings.get("anki/note_type"),
            mapping=parse_mapping(settings.get("anki/fields")),
            tags=tuple(settings.get("anki/tags").split()),
        )

    @property
    def deck_name(self) -> str:
        return self.deck or DEFAULT_DECK

    @property
    def note_type_name(self) -> str:
        return self.note_type or notes.HAYAI_NOTE_TYPE


def parse_mapping(text: str) -> dict[str, str]:
    """The `anki/fields` setting: a JSON object field -> marker; anything else reads as empty."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items() if str(v) in notes.MARKERS or v == ""}


@dataclass
class Status:
    reachable: bool
    version: int | None = None
    deck: str = ""
    deck_found: bool = False
    note_type: str = ""
    note_type_found: bool = False
    message: str = ""  # the problem, in a sentence; empty when all is well

    def to_json(self) -> dict:
        return {
            "reachable": self.reachable,
            "version": self.version,
            "deck": self.deck,
            "deck_found": self.deck_found,
            "note_type": self.note_type,
            "note_type_found": self.note_type_found,
            "message": self.message,
        }


@dataclass
class Added:
    """What `Miner.add` did: a new note, or the notes that already hold the word."""

    note_id: int | None
    existing: list[int]
    deck: str
    note_type: str
    fields: dict[str, str]

    @property
    def duplicate(self) -> bool:
        return self.note_id is None

    def to_json(self) -> dict:
        return {
            "note_id": self.note_id,
            "duplicate": self.duplicate,
            "existing": self.existing,
            "deck": self.deck,
            "note_type": self.note_type,
            "fields": self.fields,
        }


def search_value(text: str) -> str:
    """Text as a literal inside an Anki search term (its wildcards and quotes escaped)."""
    return re.sub(r'([\\"*_:])', r"\\\1", text)


class Miner:
    def __init__(self, config: AnkiConfig | None = None, client: AnkiConnect | None = None):
        self.config = config or AnkiConfig()
        self.client = client or AnkiConnect(self.config.url, self.config.key)

    # --- what Anki has ---------------------------------------------------------------------------

    def status(self) -> Status:
        cfg = self.config
        status = Status(reachable=False, deck=cfg.deck_name, note_type=cfg.note_type_name)
        try:
            status.version = self.client.version()
            status.reachable = True
            self._require_version(status.version)
            status.deck_found = cfg.deck_name in self.client.invoke("deckNames")
            status.note_type_found = cfg.note_type_name in self.client.invoke("modelNames")
            if status.note_type_found:
                self._mapping()  # a stale mapping is a problem worth saying now
        except AnkiError as exc:
            status.message = str(exc)
        return status

    def deck_names(self) -> list[str]:
        return sorted(self.client.invoke("deckNames"))

    def note_type_names(self) -> list[str]:
        return sorted(self.client.invoke("modelNames"))

    def field_names(self, note_type: str) -> list[str]:
        return list(self.client.invoke("modelFieldNames", modelName=note_type))

    def create_note_type(self) -> str:
        """Make the Hayai note type (fields for every marker, a front and a back card)."""
        self.client.invoke(
            "createModel",
            modelName=notes.HAYAI_NOTE_TYPE,
            inOrderFields=list(notes.HAYAI_FIELDS),
            css=notes.HAYAI_CSS,
            isCloze=False,
            cardTemplates=[
                {"Name": "Recognition", "Front": notes.HAYAI_FRONT, "Back": notes.HAYAI_BACK}
            ],
        )
        return notes.HAYAI_NOTE_TYPE

    # --- making notes ----------------------------------------------------------------------------

    def existing(self, mined: notes.Mined) -> list[int]:
        """Notes in the deck whose first field holds this word (Anki's own duplicate rule)."""
        first_field, value = self._first_field(mined)
        if not value:
            return []
        query = (
            f'"deck:{search_value(self.config.deck_name)}" "{first_field}:{search_value(value)}"'
        )
        return list(self.client.invoke("findNotes", query=query))

    def add(self, mined: notes.Mined, furigana=None) -> Added:
        """Add one note, or, when the word is already in the deck, say which notes hold it."""
        cfg = self.config
        self._require_version(self.client.version())
        self._ensure_deck()
        self._ensure_note_type()
        mapping = self._mapping()
        values = notes.fields(notes.fill(mined, furigana), mapping)
        note = {
            "deckName": cfg.deck_name,
            "modelName": cfg.note_type_name,
            "fields": values,
            "tags": list(cfg.tags),
            "options": {"allowDuplicate": False, "duplicateScope": "deck"},
        }
        result = dict(note_id=None, deck=cfg.deck_name, note_type=cfg.note_type_name, fields=values)
        (check,) = self.client.invoke("canAddNotesWithErrorDetail", notes=[note])
        if not check.get("canAdd"):
            error = str(check.get("error") or "")
            if "duplicate" in error:
                return Added(existing=self.existing(mined), **result)
            if "empty" in error:
                raise AnkiError(
                    f"The note would be empty: the first field of “{cfg.note_type_name}” gets "
                    "nothing. Map it to the word in Hayai's Anki settings."
                )
            raise AnkiError(f"Anki would refuse the note: {error}")
        if mined.image_png:
            self.client.invoke(
                "storeMediaFile",
                filename=mined.image_filename,
                data=base64.b64encode(mined.image_png).decode(),
            )
        result["note_id"] = int(self.client.invoke("addNote", note=note))
        return Added(existing=[], **result)

    def browse(self, note_ids: list[int]) -> None:
        """Open Anki's browser on these notes."""
        self.client.invoke("guiBrowse", query="nid:" + ",".join(str(n) for n in note_ids))

    # --- checks ----------------------------------------------------------------------------------

    @staticmethod
    def _require_version(version: int) -> None:
        if version < 6:
            raise AnkiError(
                f"AnkiConnect speaks API version {version}; Hayai needs 6 or newer. Update it "
                "(Anki → Tools → Add-ons → Check for Updates)."
            )

    def _ensure_deck(self) -> None:
        name = self.config.deck_name
        if name in self.client.invoke("deckNames"):
            return
        if self.config.deck:
            raise AnkiError(f"Anki has no deck “{name}”: choose one in Hayai's Anki settings.")
        self.client.invoke("createDeck", deck=name)

    def _ensure_note_type(self) -> None:
        name = self.config.note_type_name
        if name in self.client.invoke("modelNames"):
            return
        if name != notes.HAYAI_NOTE_TYPE:
            raise AnkiError(f"Anki has no note type “{name}”: choose one in Hayai's Anki settings.")
        self.create_note_type()

    def _mapping(self) -> dict[str, str]:
        """The field mapping, checked against the note type's fields as Anki has them now."""
        cfg = self.config
        have = self.field_names(cfg.note_type_name)
        mapping = cfg.mapping
        if not mapping:
            if cfg.note_type_name != notes.HAYAI_NOTE_TYPE:
                raise AnkiError(
                    f"Choose which field of “{cfg.note_type_name}” gets the word, the sentence and "
                    "the rest in Hayai's Anki settings."
                )
            mapping = {name: marker for name, marker in notes.HAYAI_FIELDS.items() if name in have}
        missing = [name for name in mapping if name not in have]
        if missing:
            raise AnkiError(
                f"The note type “{cfg.note_type_name}” has no field “{missing[0]}” any more: "
                "update the field mapping in Hayai's Anki settings."
            )
        return mapping

    def _first_field(self, mined: notes.Mined) -> tuple[str, str]:
        """The note type's first field and what this word puts in it (plain text)."""
        names = self.field_names(self.config.note_type_name)
        if not names:
            return "", ""
        mapping = self.config.mapping or notes.HAYAI_FIELDS
        marker = mapping.get(names[0], "")
        value = notes.fill(mined).get(marker, "") if marker else ""
        return names[0], html.unescape(re.sub(r"<[^>]+>", "", value)).strip()


__all__ = ["AnkiConfig", "AnkiError", "AnkiUnreachable", "Added", "Miner", "Status"]

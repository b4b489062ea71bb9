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
from app.anki.connect import (
    DEFAULT_URL,
    AnkiConnect,
    AnkiError,
    AnkiUnreachable,
    AnkiUnsupported,
)

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
    duplicates: str = "deck"  # where a word already there refuses the note: deck | collection

    @classmethod
    def from_settings(cls, settings) -> AnkiConfig:
        return cls(
            url=settings.get("anki/url"),
            key=settings.get("anki/key"),
            deck=settings.get("anki/deck"),
            note_type=settings.get("anki/note_type"),
            mapping=parse_mapping(settings.get("anki/fields")),
            tags=tuple(settings.get("anki/tags").split()),
            duplicates=settings.get("anki/duplicates"),
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
    deck_found: bool | None = None  # None: not known (Anki was not reached, or refused us)
    note_type: str = ""
    note_type_found: bool | None = None
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
        """What Anki has; `message` names what would make adding fail (empty when it would work)."""
        cfg = self.config
        status = Status(reachable=False, deck=cfg.deck_name, note_type=cfg.note_type_name)
        try:
            status.version = self.client.version()
            status.reachable = True
            self._require_version(status.version)
            status.deck_found = cfg.deck_name in self.client.invoke("deckNames")
            status.note_type_found = cfg.note_type_name in self.client.invoke("modelNames")
            if not status.deck_found and cfg.deck:
                raise _no_deck(cfg.deck_name)
            if status.note_type_found:
                self._mapping(self.field_names(cfg.note_type_name))  # a stale mapping: say it now
            elif cfg.note_type_name != notes.HAYAI_NOTE_TYPE:
                raise _no_note_type(cfg.note_type_name)
        except AnkiError as exc:
            status.reachable = not isinstance(exc, AnkiUnreachable)  # a refused key: it is there
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

    def existing(self, mined: notes.Mined, furigana=None) -> list[int]:
        """Notes that already hold this word: the note type's first field as we would store it,
        within the duplicate scope (the deck and its subdecks, or the whole collection)."""
        name = self.config.note_type_name
        if name not in self.client.invoke("modelNames"):
            return []
        field_names = self.field_names(name)
        values = notes.fields(notes.fill(mined, furigana), self._mapping(field_names))
        return self._holding(field_names[0], values.get(field_names[0], ""))

    def add(self, mined: notes.Mined, furigana=None) -> Added:
        """Add one note, or, when the word is in the deck (or collection) already, say which notes
        hold it. Nothing in Anki changes until we know the note can be added."""
        cfg = self.config
        self._require_version(self.client.version())
        have_deck = cfg.deck_name in self.client.invoke("deckNames")
        if not have_deck and cfg.deck:
            raise _no_deck(cfg.deck_name)
        have_note_type = cfg.note_type_name in self.client.invoke("modelNames")
        if not have_note_type and cfg.note_type_name != notes.HAYAI_NOTE_TYPE:
            raise _no_note_type(cfg.note_type_name)
        field_names = (
            self.field_names(cfg.note_type_name) if have_note_type else list(notes.HAYAI_FIELDS)
        )
        mapping = self._mapping(field_names)
        values = notes.fields(notes.fill(mined, furigana), mapping)
        first = field_names[0] if field_names else ""
        if not _plain(values.get(first, "")):
            raise self._empty()
        note = {
            "deckName": cfg.deck_name,
            "modelName": cfg.note_type_name,
            "fields": values,
            "tags": list(cfg.tags),
            "options": self._duplicate_options(),
        }
        if have_deck and have_note_type:
            duplicates = self._duplicates(note, first)
        else:  # Anki cannot judge a note for a deck or note type it lacks: our own query
            duplicates = (self._holding(first, values[first]) if have_note_type else []) or None
        if duplicates is not None:
            return Added(
                note_id=None,
                existing=duplicates,
                deck=cfg.deck_name,
                note_type=cfg.note_type_name,
                fields=values,
            )
        if not have_deck:
            self.client.invoke("createDeck", deck=cfg.deck_name)
        if not have_note_type:
            self.create_note_type()
        note_id = self._invoke_add(note)
        if mined.image_png and "image" in mapping.values():  # only when a field shows it
            self.client.invoke(
                "storeMediaFile",
                filename=mined.image_filename,
                data=base64.b64encode(mined.image_png).decode(),
            )
        return Added(
            note_id=note_id,
            existing=[],
            deck=self._file_cards(note_id),
            note_type=cfg.note_type_name,
            fields=values,
        )

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

    def _duplicate_options(self) -> dict:
        """AnkiConnect's duplicate rule, the same scope as `_holding` searches."""
        if self.config.duplicates == "collection":
            return {"allowDuplicate": False, "duplicateScope": "collection"}
        return {
            "allowDuplicate": False,
            "duplicateScope": "deck",
            "duplicateScopeOptions": {"deckName": self.config.deck_name, "checkChildren": True},
        }

    def _holding(self, first_field: str, stored: str) -> list[int]:
        """Notes of the note type whose first field is `stored`, exactly (Anki's field search
        matches the field's HTML as stored), in the duplicate scope."""
        if not first_field or not stored:
            return []
        query = (
            f'"note:{search_value(self.config.note_type_name)}" '
            f'"{search_value(first_field)}:{search_value(stored)}"'
        )
        if self.config.duplicates != "collection":
            query += f' "deck:{search_value(self.config.deck_name)}"'  # subdecks too
        return list(self.client.invoke("findNotes", query=query))

    def _duplicates(self, note: dict, first_field: str) -> list[int] | None:
        """Ask Anki whether the note can be added: None when it can, the notes that hold the word
        when it is a duplicate (found by our query; Anki does not name them); AnkiError for
        anything else. An AnkiConnect without
        canAddNotesWithErrorDetail (the GitHub releases) says only yes or no: then our own
        duplicate query says why."""
        stored = note["fields"][first_field]
        try:
            (check,) = self.client.invoke("canAddNotesWithErrorDetail", notes=[note])
        except AnkiUnsupported:
            (can_add,) = self.client.invoke("canAddNotes", notes=[note])
            if can_add:
                return None
            holding = self._holding(first_field, stored)
            if holding:
                return holding
            raise AnkiError(
                f"Anki would refuse the note (this AnkiConnect does not say why): check the "
                f"deck “{self.config.deck_name}” and the note type “{self.config.note_type_name}”."
            ) from None
        if check.get("canAdd"):
            return None
        error = str(check.get("error") or "")
        if "duplicate" in error:
            return self._holding(first_field, stored)
        if "empty" in error:
            raise self._empty()
        raise AnkiError(f"Anki would refuse the note: {error}")

    def _empty(self) -> AnkiError:
        return AnkiError(
            f"The note would be empty: the first field of “{self.config.note_type_name}” gets "
            "nothing. Map it to the word in Hayai's Anki settings."
        )

    def _invoke_add(self, note: dict) -> int:
        try:
            return int(self.client.invoke("addNote", note=note))
        except AnkiError as exc:
            if "empty question" not in str(exc):
                raise
            raise AnkiError(
                f"Anki made no card: the fields on the front of “{self.config.note_type_name}” "
                "get nothing. Map the word or the sentence to one in Hayai's Anki settings."
            ) from None

    def _file_cards(self, note_id: int) -> str:
        """Move the note's cards into the deck where AnkiConnect left them elsewhere (since Anki
        25.9 its addNote puts them in the current deck); the deck they are in now."""
        deck = self.config.deck_name
        cards = self.client.invoke("findCards", query=f"nid:{note_id}")
        info = self.client.invoke("cardsInfo", cards=cards)
        astray = [c["cardId"] for c in info if not _in_deck(c.get("deckName", ""), deck)]
        if astray:
            try:
                self.client.invoke("changeDeck", cards=astray, deck=deck)
            except AnkiError:
                pass  # the note is in: say truly where its cards are rather than fail
            info = self.client.invoke("cardsInfo", cards=cards)
        return ", ".join(sorted({c.get("deckName", "") for c in info})) or deck

    def _mapping(self, have: list[str]) -> dict[str, str]:
        """The field mapping, checked against the note type's fields as Anki has them now."""
        cfg = self.config
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


def _plain(html_text: str) -> str:
    """A field's text without its tags (Anki's own test for an empty first field)."""
    return html.unescape(re.sub(r"<[^>]+>", "", html_text)).strip()


def _in_deck(name: str, deck: str) -> bool:
    return name == deck or name.startswith(deck + "::")


def _no_deck(name: str) -> AnkiError:
    return AnkiError(f"Anki has no deck “{name}”: choose one in Hayai's Anki settings.")


def _no_note_type(name: str) -> AnkiError:
    return AnkiError(f"Anki has no note type “{name}”: choose one in Hayai's Anki settings.")


__all__ = ["AnkiConfig", "AnkiError", "AnkiUnreachable", "Added", "Miner", "Status"]

"""A stand-in for AnkiConnect that serves the actions Hayai uses on Anki's own collection code.

`anki` (PyPI) is Anki's backend, the Rust core Anki desktop runs: this stand-in opens a real
`anki.collection.Collection` in a temporary folder and answers AnkiConnect's HTTP API on top of it
(the HTTP side, modes and error strings are `fake_ankiconnect.StandIn`'s). So decks and subdecks,
note types, Anki's first-field duplicate rule, its search syntax (field searches, escapes, `deck:`
with children, `nid:`), card generation, media and the rendered card come from Anki itself; only
the add-on's glue is ours, written from its documented behaviour:

- mode "new" (Anki 25.9 or newer): `addNote` loses the deck, the cards go to the current deck;
- mode "old": `addNote` puts the cards in `deckName`; no `canAddNotesWithErrorDetail`.

One Anki call at a time (the lock in `StandIn.handle`), as in Anki, whose add-on runs them on the
GUI thread.
"""

from __future__ import annotations

import base64
import tempfile
from pathlib import Path

import anki.lang
from anki.collection import Collection
from anki.notes import NoteFieldsCheckResult
from anki.utils import field_checksum, strip_html_media
from fake_ankiconnect import StandIn


class CollectionAnki(StandIn):
    def __init__(self, mode: str = "new", **options):
        super().__init__(mode, **options)
        anki.lang.set_lang("en")  # Anki's text helpers (strip_html) live in its i18n backend
        self._dir = tempfile.TemporaryDirectory(prefix="hayai-anki-")
        self.col = Collection(str(Path(self._dir.name) / "collection.anki2"))

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        self.col.close()
        self._dir.cleanup()

    # --- inspection, the same as the fake's ------------------------------------------------------

    def note(self, note_id: int) -> dict:
        note = self.col.get_note(note_id)
        decks = sorted({self.col.decks.name(card.did) for card in note.cards()})
        return {
            "model": note.note_type()["name"],
            "deck": ", ".join(decks),
            "fields": dict(note.items()),
            "tags": list(note.tags),
        }

    def note_ids(self) -> list[int]:
        return list(self.col.find_notes(""))

    def deck_names(self) -> list[str]:
        return self.a_deckNames()

    def model_fields(self, name: str) -> list[str] | None:
        model = self.col.models.by_name(name)
        return [f["name"] for f in model["flds"]] if model else None

    def media(self) -> dict[str, bytes]:
        folder = Path(self.col.media.dir())
        return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}

    def add_deck(self, name: str) -> None:
        self.col.decks.id(name)

    def select_deck(self, name: str) -> None:
        self.col.decks.select(self.col.decks.id(name))

    def add_model(self, name: str, fields: list[str], front: str = "") -> None:
        front = front or "{{" + fields[0] + "}}"
        self.a_createModel(name, fields, [{"Front": front, "Back": "{{FrontSide}}"}])

    def card_html(self, note_id: int) -> tuple[str, str]:
        """The first card's question and answer as Anki renders them."""
        card = self.col.get_note(note_id).cards()[0]
        return card.question(), card.answer()

    # --- actions ---------------------------------------------------------------------------------

    def a_deckNames(self):
        return [d.name for d in self.col.decks.all_names_and_ids()]

    def a_createDeck(self, deck):
        return self.col.decks.id(deck)

    def a_modelNames(self):
        return [m.name for m in self.col.models.all_names_and_ids()]

    def _model(self, name):
        model = self.col.models.by_name(name)
        if model is None:
            raise ValueError(f"model was not found: {name}")
        return model

    def a_modelFieldNames(self, modelName):
        return [f["name"] for f in self._model(modelName)["flds"]]

    def a_createModel(self, modelName, inOrderFields, cardTemplates, css=None, isCloze=False):
        if not inOrderFields:
            raise ValueError("Must provide at least one field for inOrderFields")
        if not cardTemplates:
            raise ValueError("Must provide at least one card for cardTemplates")
        if self.col.models.by_name(modelName):
            raise ValueError("Model name already exists")
        models = self.col.models
        model = models.new(modelName)
        if isCloze:
            model["type"] = 1
        for name in inOrderFields:
            models.add_field(model, models.new_field(name))
        if css is not None:
            model["css"] = css
        for i, card in enumerate(cardTemplates):
            template = models.new_template(card.get("Name", f"Card {i + 1}"))
            template["qfmt"], template["afmt"] = card["Front"], card["Back"]
            models.add_template(model, template)
        models.add(model)
        return self.col.models.by_name(modelName)  # the whole note type

    def _note(self, note: dict):
        """(Anki note, deck id) as the add-on builds them, or its refusal."""
        model = self._model(note.get("modelName"))
        deck = self.col.decks.by_name(note.get("deckName") or "")
        if deck is None:
            raise ValueError(f"deck was not found: {note.get('deckName')}")
        anki_note = self.col.new_note(model)
        anki_note.tags = list(note.get("tags", []))
        for given, value in (note.get("fields") or {}).items():
            for name in anki_note.keys():  # case-insensitive, unknown names ignored
                if name.lower() == given.lower():
                    anki_note[name] = value
                    break
        state = anki_note.fields_check()  # Anki's own rule: first field, same note type
        if state == NoteFieldsCheckResult.EMPTY:
            raise ValueError("cannot create note because it is empty")
        allow = (note.get("options") or {}).get("allowDuplicate", False)
        if state == NoteFieldsCheckResult.DUPLICATE and not allow:
            scope = self._duplicate_scope(note, deck["name"])
            if scope is None or self._in_decks(anki_note, *scope):
                raise ValueError("cannot create note because it is a duplicate")
        return anki_note, deck["id"]

    def _in_decks(self, anki_note, deck_name: str, children: bool) -> bool:
        """Does a note with the same first field have a card in the deck (or its children)?"""
        deck = self.col.decks.by_name(deck_name)
        if deck is None:
            return False
        dids = set(self.col.decks.deck_and_child_ids(deck["id"])) if children else {deck["id"]}
        first = strip_html_media(anki_note.fields[0])
        for nid in self.col.db.list(
            "select id from notes where mid = ? and csum = ?",
            anki_note.mid,
            field_checksum(anki_note.fields[0]),
        ):
            other = self.col.get_note(nid)
            if strip_html_media(other.fields[0]) != first:
                continue
            if any(card.did in dids for card in other.cards()):
                return True
        return False

    def a_canAddNotesWithErrorDetail(self, notes):
        out = []
        for note in notes:
            try:
                self._note(note)
                out.append({"canAdd": True})
            except ValueError as exc:
                out.append({"canAdd": False, "error": str(exc)})
        return out

    def a_addNote(self, note):
        anki_note, deck_id = self._note(note)
        if self.mode == "new":
            deck_id = self.col.decks.get_current_id()  # the note type's cached deck is lost
        self.col.add_note(anki_note, deck_id)
        return anki_note.id

    def a_storeMediaFile(self, filename, data=None, path=None, url=None, deleteExisting=True):
        if not data:
            raise ValueError('You must provide a "data", "path", or "url" field.')
        return self.col.media.write_data(filename, base64.b64decode(data))

    def a_findNotes(self, query=None):
        return [int(n) for n in self.col.find_notes(query)] if query is not None else []

    def a_findCards(self, query=None):
        return [int(c) for c in self.col.find_cards(query)] if query is not None else []

    def a_cardsInfo(self, cards):
        out = []
        for cid in cards:
            try:
                card = self.col.get_card(cid)
            except Exception:  # Anki's NotFoundError: the add-on answers {} in its place
                out.append({})
                continue
            note, model = card.note(), card.note_type()
            out.append(
                {
                    "cardId": card.id,
                    "note": card.nid,
                    "deckName": self.col.decks.name(card.did),
                    "modelName": model["name"],
                    "ord": card.ord,
                    "question": card.question(),
                    "answer": card.answer(),
                    "fields": {
                        f["name"]: {"value": note.fields[f["ord"]], "order": f["ord"]}
                        for f in model["flds"]
                    },
                }
            )
        return out

    def a_changeDeck(self, cards, deck):
        self.col.set_deck(cards, self.col.decks.id(deck))
        return None

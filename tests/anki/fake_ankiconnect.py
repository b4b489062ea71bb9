"""A stand-in for AnkiConnect (the add-on's HTTP API inside Anki), modelled on the add-on's source.

Two modes, the two AnkiConnects users run:

- ``"new"``: Anki 25.9 or newer with AnkiConnect as AnkiWeb ships it. Its ``addNote`` sets the
  deck on the cached note type, which Anki now drops before saving: the cards land in the
  *current* deck (Default), whatever ``deckName`` said. It has ``canAddNotesWithErrorDetail``;
  an empty request body (what a browser's GET sends) is answered ``{"apiVersion": "AnkiConnect
  v.6"}``. Anki's backend always makes at least one card, so no "empty question" error.
- ``"old"``: an older Anki with AnkiConnect 23.10.29.0 from GitHub: ``deckName`` is honoured; no
  ``canAddNotesWithErrorDetail`` ("unsupported action"), only ``canAddNotes`` (yes/no); a GET is
  answered with the plain text ``AnkiConnect v.6``; a note whose card fronts would all be empty
  is refused by ``addNote`` with "The field values you have provided would make an empty question
  on all cards."

In both: ``{"result", "error"}`` replies with the add-on's own error strings ("deck was not found:
X", "model was not found: X", "cannot create note because it is a duplicate" / "... empty",
"valid api key must be provided" for a missing and a wrong key alike, "unsupported action",
"collection is not available" while no profile is open); malformed JSON answered with HTTP 200 and
an error; field names matched case-insensitively, unknown ones ignored; duplicates judged on the
note type's first field (tags stripped) by the decks its *cards* are in (scope "deck", with
``duplicateScopeOptions`` deckName/checkChildren) or in the whole collection; ``findNotes`` field
searches matching the field's stored HTML exactly (``&amp;`` is not ``&``); ``createModel``
answering with the whole note type. Loopback only.

`StandIn` is the HTTP side, shared with the stand-in on Anki's real collection
(collection_ankiconnect.py); both offer the same inspection methods to tests (`note`, `note_ids`,
`deck_names`, `media`, `add_deck`, `add_model`, `select_deck`, `close_profile`, `quit`).
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = ("new", "old")
EMPTY_QUESTION = "The field values you have provided would make an empty question on all cards."


def _plain(text: str) -> str:
    return re.sub(r"<[^>]+>", "", text).strip()


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


class StandIn:
    """The add-on's HTTP side and its dispatch: key check, action lookup, error replies."""

    def __init__(
        self, mode: str = "new", key: str | None = None, unsupported: tuple = (), version: int = 6
    ):
        if mode not in MODES:
            raise ValueError(f"mode is one of {MODES}")
        self.mode = mode
        self.version = version
        self.key = key
        self.unsupported = set(unsupported)
        if mode == "old":
            self.unsupported.add("canAddNotesWithErrorDetail")
        self.profile_open = True
        self.browsed: list[str] = []
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.quit()

    def quit(self) -> None:
        """As when Anki is closed: nothing answers at the address any more."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def actions(self) -> list[str]:
        return [r.get("action") for r in self.requests]

    def close_profile(self) -> None:
        """As when Anki shows its profile chooser: the add-on answers, the collection is gone."""
        self.profile_open = False

    def _handler(self):
        anki = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # a browser at the address: an empty body to the add-on
                self._reply(b"")

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                self._reply(self.rfile.read(length))

            def _reply(self, body: bytes):
                if not body:
                    if anki.mode == "new":
                        self._send(json.dumps({"apiVersion": "AnkiConnect v.6"}).encode())
                    else:
                        self._send(b"AnkiConnect v.6")
                    return
                try:
                    request = json.loads(body)
                    if not isinstance(request, dict) or not isinstance(request.get("action"), str):
                        raise ValueError(f"{request!r} is not valid under the request schema")
                except ValueError as exc:  # the add-on: HTTP 200 and the parser's message
                    self._send(json.dumps({"result": None, "error": str(exc)}).encode())
                    return
                self._send(json.dumps(anki.handle(request)).encode())

            def _send(self, body: bytes):
                self.send_response(200)  # the add-on answers 200 to everything it parses
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        return Handler

    def handle(self, request: dict) -> dict:
        with self._lock:
            self.requests.append(request)
            try:
                if request.get("key") != self.key:  # the add-on compares, missing or wrong alike
                    raise ValueError("valid api key must be provided")
                action = request.get("action", "")
                method = getattr(self, "a_" + action, None)
                if method is None or action in self.unsupported:
                    raise ValueError("unsupported action")
                if action != "version" and not self.profile_open:
                    raise ValueError("collection is not available")
                return {"result": method(**request.get("params", {})), "error": None}
            except Exception as exc:  # AnkiConnect turns every exception into its error string
                return {"result": None, "error": str(exc)}

    def a_version(self):
        return self.version

    def a_canAddNotes(self, notes):
        return [bool(r["canAdd"]) for r in self.a_canAddNotesWithErrorDetail(notes)]

    def a_guiBrowse(self, query=None):
        self.browsed.append(query or "")
        return self.a_findCards(query or "")

    def _duplicate_scope(self, note: dict, deck: str) -> tuple[str, bool] | None:
        """(deck name, with its children) for scope "deck"; None for the whole collection."""
        options = note.get("options") or {}
        if options.get("duplicateScope") != "deck":
            return None
        scope = options.get("duplicateScopeOptions") or {}
        return scope.get("deckName") or deck, bool(scope.get("checkChildren", False))


class FakeAnki(StandIn):
    """Decks, note types, notes, cards and media in memory."""

    def __init__(self, mode: str = "new", **options):
        super().__init__(mode, **options)
        self.decks = {"Default": 1}
        self.current_deck = "Default"
        self.models: dict[str, list[str]] = {"Basic": ["Front", "Back"]}
        self.templates: dict[str, list[dict]] = {
            "Basic": [{"Name": "Card 1", "Front": "{{Front}}", "Back": "{{Back}}"}]
        }
        self.notes: dict[int, dict] = {}
        self.cards: dict[int, dict] = {}  # card id -> {"nid", "deck", "ord"}
        self.media_files: dict[str, bytes] = {}
        self._ids = itertools.count(1_700_000_000_000)

    # --- inspection, the same on the real collection's stand-in ----------------------------------

    def note(self, note_id: int) -> dict:
        stored = self.notes[note_id]
        decks = sorted({c["deck"] for c in self.cards.values() if c["nid"] == note_id})
        return dict(stored, deck=", ".join(decks))

    def note_ids(self) -> list[int]:
        return list(self.notes)

    def deck_names(self) -> list[str]:
        return list(self.decks)

    def model_fields(self, name: str) -> list[str] | None:
        return self.models.get(name)

    def media(self) -> dict[str, bytes]:
        return dict(self.media_files)

    def add_deck(self, name: str) -> None:
        self.a_createDeck(name)

    def select_deck(self, name: str) -> None:
        self.current_deck = name

    def add_model(self, name: str, fields: list[str], front: str = "") -> None:
        front = front or "{{" + fields[0] + "}}"
        self.a_createModel(name, fields, [{"Front": front, "Back": "{{FrontSide}}"}])

    # --- actions ---------------------------------------------------------------------------------

    def a_deckNames(self):
        return list(self.decks)

    def a_createDeck(self, deck):
        parts = deck.split("::")
        for depth in range(1, len(parts) + 1):  # Anki makes the parents of "A::B" too
            self.decks.setdefault("::".join(parts[:depth]), len(self.decks) + 1)
        return self.decks[deck]

    def a_modelNames(self):
        return list(self.models)

    def a_modelFieldNames(self, modelName):
        if modelName not in self.models:
            raise ValueError(f"model was not found: {modelName}")
        return list(self.models[modelName])

    def a_createModel(self, modelName, inOrderFields, cardTemplates, css=None, isCloze=False):
        if not inOrderFields:
            raise ValueError("Must provide at least one field for inOrderFields")
        if not cardTemplates:
            raise ValueError("Must provide at least one card for cardTemplates")
        if modelName in self.models:
            raise ValueError("Model name already exists")
        self.models[modelName] = list(inOrderFields)
        self.templates[modelName] = list(cardTemplates)
        # the add-on answers with the whole note type, as Anki stores it
        return {
            "id": next(self._ids),
            "name": modelName,
            "type": 1 if isCloze else 0,
            "flds": [{"name": f, "ord": i} for i, f in enumerate(inOrderFields)],
            "tmpls": [
                {
                    "name": t.get("Name", f"Card {i + 1}"),
                    "ord": i,
                    "qfmt": t["Front"],
                    "afmt": t["Back"],
                }
                for i, t in enumerate(cardTemplates)
            ],
            "css": css or "",
            "did": None,
            "sortf": 0,
        }

    def _note(self, note: dict) -> dict:
        """The note the add-on would make, or its refusal (createNote's checks)."""
        model = note.get("modelName")
        if model not in self.models:
            raise ValueError(f"model was not found: {model}")
        deck = note.get("deckName")
        if deck not in self.decks:
            raise ValueError(f"deck was not found: {deck}")
        fields = {name: "" for name in self.models[model]}
        for given, value in (note.get("fields") or {}).items():
            for name in fields:  # AnkiConnect: case-insensitive, unknown names ignored
                if name.lower() == given.lower():
                    fields[name] = value
                    break
        first = _plain(fields[self.models[model][0]])
        if not first:
            raise ValueError("cannot create note because it is empty")
        if not (note.get("options") or {}).get("allowDuplicate", False):
            scope = self._duplicate_scope(note, deck)
            for note_id, other in self.notes.items():
                if (
                    other["model"] != model
                    or _plain(other["fields"][self.models[model][0]]) != first
                ):
                    continue
                if scope is None or any(
                    c["nid"] == note_id
                    and (
                        c["deck"] == scope[0]
                        or (scope[1] and c["deck"].startswith(scope[0] + "::"))
                    )
                    for c in self.cards.values()
                ):
                    raise ValueError("cannot create note because it is a duplicate")
        return {"deck": deck, "model": model, "fields": fields, "tags": list(note.get("tags", []))}

    def a_canAddNotesWithErrorDetail(self, notes):
        out = []
        for note in notes:
            try:
                self._note(note)
                out.append({"canAdd": True})
            except ValueError as exc:
                out.append({"canAdd": False, "error": str(exc)})
        return out

    def _fronts(self, model: str, fields: dict) -> list[int]:
        """The card ordinals whose front shows a non-empty field (Anki's card generation)."""
        out = []
        for ord_, template in enumerate(self.templates.get(model, [])):
            names = re.findall(r"{{(?:[^}:]*:)?([^}]+)}}", template["Front"])
            if any(_plain(fields.get(n, "")) for n in names):
                out.append(ord_)
        return out

    def a_addNote(self, note):
        stored = self._note(note)
        deck = stored.pop("deck")
        ords = self._fronts(stored["model"], stored["fields"])
        if not ords:
            if self.mode == "old":
                raise ValueError(EMPTY_QUESTION)
            ords = [0]  # today's Anki makes the first card anyway
        if self.mode == "new":
            deck = self.current_deck  # the deck set on the cached note type is lost
        note_id = next(self._ids)
        self.notes[note_id] = stored
        for ord_ in ords:
            self.cards[next(self._ids)] = {"nid": note_id, "deck": deck, "ord": ord_}
        return note_id

    def a_storeMediaFile(self, filename, data=None, path=None, url=None, deleteExisting=True):
        if not data:
            raise ValueError('You must provide a "data", "path", or "url" field.')
        self.media_files[filename] = base64.b64decode(data)
        return filename

    def _matches(self, query: str):
        """(note id, card) pairs that match every term of a search (the terms we use)."""
        terms = [_unescape(a or b) for a, b in re.findall(r'"((?:[^"\\]|\\.)*)"|(\S+)', query)]
        for card_id, card in self.cards.items():
            stored = self.notes[card["nid"]]
            ok = True
            for term in terms:
                key, _, value = term.partition(":")
                if key == "deck":  # a deck and its children, as Anki's search does
                    ok &= card["deck"] == value or card["deck"].startswith(value + "::")
                elif key == "nid":
                    ok &= str(card["nid"]) in value.split(",")
                elif key == "note":
                    ok &= stored["model"] == value
                else:  # a field: its stored HTML, exactly
                    names = {n.lower(): n for n in stored["fields"]}
                    ok &= key.lower() in names and stored["fields"][names[key.lower()]] == value
            if ok:
                yield card["nid"], card_id

    def a_findNotes(self, query=None):
        return list(dict.fromkeys(nid for nid, _ in self._matches(query or "")))

    def a_findCards(self, query=None):
        return [cid for _, cid in self._matches(query or "")]

    def a_cardsInfo(self, cards):
        out = []
        for cid in cards:
            card = self.cards.get(cid)
            if card is None:
                out.append({})
                continue
            stored = self.notes[card["nid"]]
            out.append(
                {
                    "cardId": cid,
                    "note": card["nid"],
                    "deckName": card["deck"],
                    "modelName": stored["model"],
                    "ord": card["ord"],
                    "fields": {
                        name: {"value": value, "order": i}
                        for i, (name, value) in enumerate(stored["fields"].items())
                    },
                }
            )
        return out

    def a_changeDeck(self, cards, deck):
        self.a_createDeck(deck)  # the add-on makes the deck when it is missing
        for cid in cards:
            self.cards[cid]["deck"] = deck
        return None


STAND_INS = ("fake-new", "fake-old", "collection-new", "collection-old")


def stand_in(name: str, **options) -> StandIn:
    """A stand-in by name ("fake-new", "collection-old", ...), not started yet."""
    kind, mode = name.split("-")
    if kind == "collection":
        from collection_ankiconnect import CollectionAnki  # imports the anki package: only then

        return CollectionAnki(mode, **options)
    return FakeAnki(mode, **options)

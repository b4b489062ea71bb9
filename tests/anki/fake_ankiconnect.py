"""A stand-in for AnkiConnect (the add-on's HTTP API inside Anki), written from its documentation.

It keeps decks, note types, notes and media in memory and answers the actions Hayai uses the way
AnkiConnect 6 does: `{"result", "error"}` replies, its own error strings ("deck was not found: X",
"model was not found: X", "cannot create note because it is a duplicate", "cannot create note
because it is empty", "valid api key must be provided", "unsupported action"), field names matched
case-insensitively and unknown field names ignored on `addNote`, duplicates judged on the note
type's first field within the deck. Loopback only.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _plain(text: str) -> str:
    return re.sub(r"<[^>]+>", "", text).strip()


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


class FakeAnki:
    def __init__(self, key: str | None = None, version: int = 6, unsupported: tuple = ()):
        self.key = key
        self.version = version
        self.unsupported = set(unsupported)
        self.decks = {"Default": 1}
        self.models: dict[str, list[str]] = {"Basic": ["Front", "Back"]}
        self.templates: dict[str, list[dict]] = {}
        self.notes: dict[int, dict] = {}
        self.media: dict[str, bytes] = {}
        self.browsed: list[str] = []
        self.requests: list[dict] = []
        self._ids = itertools.count(1_700_000_000_000)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeAnki:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def actions(self) -> list[str]:
        return [r.get("action") for r in self.requests]

    # --- HTTP ------------------------------------------------------------------------------------

    def _handler(self):
        anki = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # what a browser sees at the address
                self._send(200, b"AnkiConnect v.6", "text/plain")

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    request = json.loads(self.rfile.read(length))
                except ValueError:
                    self._send(400, b"bad json", "text/plain")
                    return
                reply = anki.handle(request)
                self._send(200, json.dumps(reply).encode(), "application/json")

            def _send(self, code, body, kind):
                self.send_response(code)
                self.send_header("Content-Type", kind)
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
                if self.key is not None and request.get("key") != self.key:
                    raise ValueError("valid api key must be provided")
                action = request.get("action", "")
                method = getattr(self, "a_" + action, None)
                if method is None or action in self.unsupported:
                    raise ValueError("unsupported action")
                return {"result": method(**request.get("params", {})), "error": None}
            except Exception as exc:  # AnkiConnect turns every exception into its error string
                return {"result": None, "error": str(exc)}

    # --- actions ---------------------------------------------------------------------------------

    def a_version(self):
        return self.version

    def a_deckNames(self):
        return list(self.decks)

    def a_createDeck(self, deck):
        self.decks.setdefault(deck, len(self.decks) + 1)
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
        return {"name": modelName, "flds": [{"name": f} for f in inOrderFields], "css": css}

    def _note(self, note: dict) -> dict:
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
        first = _plain(fields[self.models[model][0]])
        if not first:
            raise ValueError("cannot create note because it is empty")
        allow = (note.get("options") or {}).get("allowDuplicate", False)
        if not allow:
            for other in self.notes.values():
                if (
                    other["model"] == model
                    and other["deck"] == deck
                    and _plain(other["fields"][self.models[model][0]]) == first
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

    def a_addNote(self, note):
        stored = self._note(note)
        note_id = next(self._ids)
        self.notes[note_id] = stored
        return note_id

    def a_storeMediaFile(self, filename, data=None, path=None, url=None, deleteExisting=True):
        if data is None:
            raise ValueError('You must provide a "data", "path", or "url" field.')
        self.media[filename] = base64.b64decode(data)
        return filename

    def a_findNotes(self, query=""):
        terms = re.findall(r'"((?:[^"\\]|\\.)*)"|(\S+)', query)
        wanted = [_unescape(a or b) for a, b in terms]
        out = []
        for note_id, stored in self.notes.items():
            ok = True
            for term in wanted:
                key, _, value = term.partition(":")
                if key == "deck":
                    ok &= stored["deck"] == value
                elif key == "nid":
                    ok &= str(note_id) in value.split(",")
                elif key in stored["fields"]:
                    ok &= _plain(stored["fields"][key]) == value
                else:
                    ok = False
            if ok:
                out.append(note_id)
        return out

    def a_guiBrowse(self, query=None):
        self.browsed.append(query or "")
        return [n for n in self.a_findNotes(query or "")]

"""The one path that makes notes, against a fake AnkiConnect that behaves as documented."""

from __future__ import annotations

import json
import socket

import pytest

from app.anki.connect import AnkiConnect, AnkiError, AnkiUnreachable
from app.anki.miner import AnkiConfig, Miner, parse_mapping, search_value
from app.anki.note import HAYAI_FIELDS, HAYAI_NOTE_TYPE, Mined, anki_furigana, fill, pitch_html
from app.dictionary.models import Entry, Sense


def taberu(**extra) -> Mined:
    entry = Entry(
        headword="食べる",
        reading="たべる",
        readings=["たべる"],
        pos=["v1", "vt"],
        senses=[Sense(["to eat"], ["v1", "vt"]), Sense(["to live on (e.g. a salary)"], ["v1"])],
        source="jmdict",
        match="食べられなかった",
    )
    entry.pitch = [{"dictionary": "NHK", "reading": "たべる", "positions": [2]}]
    entry.frequencies = [{"dictionary": "JPDB", "value": 1200, "display": "1200"}]
    return Mined.from_entry(entry, "ケーキを食べられなかった。", source="capture", **extra)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the note's content --------------------------------------------------------------------------


def test_every_marker_is_filled_from_the_entry_and_the_line():
    values = fill(taberu(image_png=b"\x89PNG fake"), furigana=lambda s: [(s, None)])
    assert values["word"] == "食べる"
    assert values["reading"] == "たべる"
    assert values["word_furigana"] == "食[た]べる"
    assert values["glossary"].startswith("<ol><li><i>(v1, vt)</i> to eat</li>")
    assert values["glossary"].count("<li>") == 2
    assert values["sentence"] == "ケーキを<b>食べられなかった</b>。"
    assert values["pitch"] == "たべꜜる [2]"
    assert values["frequency"] == "JPDB: 1200"
    assert values["image"].startswith('<img src="hayai_') and values["image"].endswith('.png">')
    assert values["source"] == "capture"
    assert values["pos"] == "v1, vt"


def test_furigana_and_pitch_formats():
    assert anki_furigana(
        "取り扱い", [("取", "と"), ("り", None), ("扱", "あつか"), ("い", None)]
    ) == ("取[と]り 扱[あつか]い")
    assert pitch_html("きょう", [1]) == "きょꜜう [1]"
    assert pitch_html("はし", [0]) == "はし [0] 平板"


def test_html_in_the_line_is_escaped():
    mined = Mined(word="<b>", sentence="a <script> b", match="<script>")
    assert fill(mined)["sentence"] == "a <b>&lt;script&gt;</b> b"


def test_search_values_escape_ankis_wildcards():
    assert search_value('a_b*c"d:e') == 'a\\_b\\*c\\"d\\:e'


def test_a_broken_mapping_setting_reads_as_empty():
    assert parse_mapping("not json") == {}
    assert parse_mapping("[1, 2]") == {}
    assert parse_mapping(json.dumps({"Front": "word", "Back": "bogus"})) == {"Front": "word"}


# --- adding ----------------------------------------------------------------------------------------


def test_with_nothing_configured_the_hayai_deck_and_note_type_are_made(fake_anki, miner_for):
    miner = miner_for(fake_anki)
    added = miner.add(taberu(image_png=b"png bytes"))
    assert not added.duplicate and added.note_id in fake_anki.notes
    assert "Hayai" in fake_anki.decks and fake_anki.models[HAYAI_NOTE_TYPE] == list(HAYAI_FIELDS)
    stored = fake_anki.notes[added.note_id]
    assert stored["deck"] == "Hayai" and stored["tags"] == ["hayai"]
    assert stored["fields"]["Word"] == "食べる"
    assert stored["fields"]["Sentence"] == "ケーキを<b>食べられなかった</b>。"
    (name,) = fake_anki.media
    assert fake_anki.media[name] == b"png bytes" and name in stored["fields"]["Picture"]
    # the check came first, then the media, then the note
    actions = fake_anki.actions()
    assert (
        actions.index("canAddNotesWithErrorDetail")
        < actions.index("storeMediaFile")
        < actions.index("addNote")
    )


def test_the_same_word_again_is_reported_in_deck_with_its_note(fake_anki, miner_for):
    miner = miner_for(fake_anki)
    first = miner.add(taberu())
    again = miner.add(taberu())
    assert again.duplicate and again.existing == [first.note_id]
    assert len(fake_anki.notes) == 1
    assert miner.existing(taberu()) == [first.note_id]
    miner.browse(again.existing)
    assert fake_anki.browsed == [f"nid:{first.note_id}"]


def test_a_users_note_type_with_a_mapping(fake_anki, miner_for):
    fake_anki.models["Japanese"] = ["Expression", "Meaning", "Context"]
    fake_anki.a_createDeck("Mining")
    mapping = {"Expression": "word", "Meaning": "glossary", "Context": "sentence"}
    miner = miner_for(
        fake_anki, deck="Mining", note_type="Japanese", mapping=mapping, tags=("a", "b")
    )
    added = miner.add(taberu())
    stored = fake_anki.notes[added.note_id]
    assert (
        stored["model"] == "Japanese"
        and stored["deck"] == "Mining"
        and stored["tags"] == ["a", "b"]
    )
    assert stored["fields"]["Context"] == "ケーキを<b>食べられなかった</b>。"
    assert "to eat" in stored["fields"]["Meaning"]


def test_a_mapping_naming_a_field_the_note_type_lost_is_said_plainly(fake_anki, miner_for):
    fake_anki.models["Japanese"] = ["Expression", "Meaning"]
    miner = miner_for(
        fake_anki, note_type="Japanese", mapping={"Expression": "word", "Audio": "pitch"}
    )
    with pytest.raises(AnkiError, match="has no field “Audio” any more"):
        miner.add(taberu())
    assert not fake_anki.notes


def test_a_configured_deck_or_note_type_that_is_missing_is_not_made(fake_anki, miner_for):
    with pytest.raises(AnkiError, match="no deck “Gone”"):
        miner_for(fake_anki, deck="Gone").add(taberu())
    with pytest.raises(AnkiError, match="no note type “Gone”"):
        miner_for(fake_anki, note_type="Gone", mapping={"Front": "word"}).add(taberu())
    assert "Gone" not in fake_anki.decks and "Gone" not in fake_anki.models


def test_an_empty_first_field_is_a_mapping_problem(fake_anki, miner_for):
    miner = miner_for(fake_anki, note_type="Basic", mapping={"Front": "pitch", "Back": "word"})
    with pytest.raises(AnkiError, match="first field"):
        miner.add(Mined(word="猫"))


def test_a_note_type_without_a_mapping_asks_for_one(fake_anki, miner_for):
    with pytest.raises(AnkiError, match="Choose which field"):
        miner_for(fake_anki, note_type="Basic").add(taberu())


# --- errors in words ------------------------------------------------------------------------------


def test_anki_not_running():
    miner = Miner(AnkiConfig(url=f"http://127.0.0.1:{free_port()}"))
    with pytest.raises(AnkiUnreachable, match="Anki is not running"):
        miner.add(taberu())
    status = miner.status()
    assert not status.reachable and "Anki is not running" in status.message


def test_ankiconnect_too_old(miner_for):
    from fake_ankiconnect import FakeAnki

    with FakeAnki(version=5) as old:
        with pytest.raises(AnkiError, match="needs 6 or newer"):
            miner_for(old).add(taberu())
    with FakeAnki(unsupported={"canAddNotesWithErrorDetail"}) as old:
        with pytest.raises(AnkiError, match="too old"):
            miner_for(old).add(taberu())


def test_a_wrong_key_and_the_right_key(miner_for):
    from fake_ankiconnect import FakeAnki

    with FakeAnki(key="s3cret") as anki:
        with pytest.raises(AnkiError, match="asks for an API key"):
            miner_for(anki, key="wrong").add(taberu())
        assert miner_for(anki, key="s3cret").add(taberu()).note_id


def test_something_else_on_the_port_is_not_ankiconnect():
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class NotAnki(BaseHTTPRequestHandler):
        def do_POST(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"<html>hello</html>")

        def log_message(self, *a):
            pass

    server = HTTPServer(("127.0.0.1", 0), NotAnki)
    threading.Thread(target=server.handle_request, daemon=True).start()
    with pytest.raises(AnkiError, match="not AnkiConnect"):
        AnkiConnect(f"http://127.0.0.1:{server.server_address[1]}").version()
    server.server_close()


def test_status_names_what_is_there(fake_anki, miner_for):
    status = miner_for(fake_anki).status()
    assert status.reachable and status.version == 6
    assert not status.deck_found and not status.note_type_found and status.message == ""
    miner_for(fake_anki).add(taberu())
    status = miner_for(fake_anki).status()
    assert status.deck_found and status.note_type_found

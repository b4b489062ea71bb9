"""The one path that makes notes, against AnkiConnect stand-ins: the fake and the one on Anki's real
collection, each as the new add-on on Anki 25.9+ and as the old one from GitHub (conftest.py)."""

from __future__ import annotations

import json
import socket

import pytest
from fake_ankiconnect import FakeAnki, stand_in

from app.anki.connect import AnkiConnect, AnkiError, AnkiUnreachable
from app.anki.miner import AnkiConfig, Miner, parse_mapping, search_value
from app.anki.note import (
    HAYAI_FIELDS,
    HAYAI_NOTE_TYPE,
    Mined,
    anki_furigana,
    fill,
    form_in_sentence,
    pitch_html,
)
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


def test_the_word_is_bold_in_the_form_the_sentence_has():
    def bold(word, sentence, reading="", pos=()):
        mined = Mined(word=word, reading=reading, pos=list(pos), sentence=sentence, match=word)
        return fill(mined)["sentence"]

    assert bold("食べる", "昨日パンを食べた", pos=["v1"]) == "昨日パンを<b>食べた</b>"
    assert bold("する", "勉強をしなかった。", pos=["vs-i"]) == "勉強を<b>しなかった</b>。"
    assert bold("食べる", "もうたべました", reading="たべる") == "もう<b>たべました</b>"
    assert bold("猫", "犬がいる") == "犬がいる"  # not there: nothing bold
    assert form_in_sentence(Mined(word="", sentence="a whole line")) == ""
    # the form the popup matched wins over any guess
    assert bold("食べる", "食べられなかった", pos=["v1"]) == "<b>食べられなかった</b>"


# --- adding ----------------------------------------------------------------------------------------


def test_with_nothing_configured_the_hayai_deck_and_note_type_are_made(anki, miner_for):
    anki.select_deck("Default")
    added = miner_for(anki).add(taberu(image_png=b"png bytes"))
    assert not added.duplicate and added.note_id in anki.note_ids()
    assert "Hayai" in anki.deck_names() and anki.model_fields(HAYAI_NOTE_TYPE) == list(HAYAI_FIELDS)
    stored = anki.note(added.note_id)
    assert stored["deck"] == "Hayai" == added.deck  # where the cards really are
    assert stored["tags"] == ["hayai"]
    assert stored["fields"]["Word"] == "食べる"
    assert stored["fields"]["Sentence"] == "ケーキを<b>食べられなかった</b>。"
    ((name, data),) = anki.media().items()
    assert data == b"png bytes" and name in stored["fields"]["Picture"]
    actions = anki.actions()
    # the deck and note type are made once we know the note can go in; media once it is in
    assert actions.index("createDeck") < actions.index("addNote") < actions.index("storeMediaFile")
    # Anki 25.9+: AnkiConnect left the cards in the current deck; we moved them
    assert ("changeDeck" in actions) == (anki.mode == "new")


def test_cards_left_in_another_current_deck_are_moved_and_the_real_deck_reported(anki, miner_for):
    anki.add_deck("Mining")
    anki.add_deck("Reading")
    anki.select_deck("Reading")  # the deck the user last studied
    added = miner_for(anki, deck="Mining").add(taberu())
    assert anki.note(added.note_id)["deck"] == "Mining" == added.deck
    # Anki renders the card from the note as stored
    if hasattr(anki, "card_html"):
        question, _ = anki.card_html(added.note_id)
        assert "<b>食べられなかった</b>" in question


def test_when_the_cards_cannot_be_moved_the_deck_they_are_in_is_reported(miner_for):
    with FakeAnki("new", unsupported={"changeDeck"}) as anki:
        added = miner_for(anki).add(taberu())
        assert added.deck == "Default" == anki.note(added.note_id)["deck"]


def test_the_same_word_again_is_reported_in_deck_with_its_note(anki, miner_for):
    miner = miner_for(anki)
    first = miner.add(taberu())
    again = miner.add(taberu())
    assert again.duplicate and again.existing == [first.note_id]
    assert anki.note_ids() == [first.note_id]
    assert miner.existing(taberu()) == [first.note_id]
    miner.browse(again.existing)
    assert anki.browsed == [f"nid:{first.note_id}"]
    if anki.mode == "old":  # no canAddNotesWithErrorDetail: canAddNotes, then our own query
        assert "canAddNotes" in anki.actions()


@pytest.mark.parametrize("name", ["fake-new", "collection-new"])
def test_new_anki_with_the_github_addon(miner_for, name):
    """AnkiConnect 23.10.29.0 installed from GitHub on Anki 25.9+: both quirks at once."""
    with stand_in(name, unsupported={"canAddNotesWithErrorDetail"}) as anki:
        first = miner_for(anki).add(taberu())
        assert anki.note(first.note_id)["deck"] == "Hayai"
        assert miner_for(anki).add(taberu()).existing == [first.note_id]
        assert "changeDeck" in anki.actions() and "canAddNotes" in anki.actions()


def test_duplicates_in_the_deck_or_in_the_whole_collection(anki, miner_for):
    anki.add_deck("Mining")
    elsewhere = miner_for(anki, deck="Mining").add(taberu())
    # scope "deck" (the default): a word in another deck is no duplicate here
    in_hayai = miner_for(anki).add(taberu())
    assert not in_hayai.duplicate and anki.note(in_hayai.note_id)["deck"] == "Hayai"
    # a subdeck is part of the deck
    anki.add_deck("Mining::Anime")
    sub = miner_for(anki, deck="Mining::Anime").add(Mined(word="猫"))
    assert miner_for(anki, deck="Mining").add(Mined(word="猫")).existing == [sub.note_id]
    # scope "collection": anywhere
    again = miner_for(anki, duplicates="collection").add(taberu())
    assert again.duplicate and sorted(again.existing) == sorted(
        [elsewhere.note_id, in_hayai.note_id]
    )
    assert len(anki.note_ids()) == 3


def test_a_word_already_in_the_collection_makes_no_deck(anki, miner_for):
    anki.add_deck("Mining")
    first = miner_for(anki, deck="Mining").add(taberu())
    before = list(anki.actions())
    again = miner_for(anki, duplicates="collection").add(taberu())
    assert again.existing == [first.note_id]
    assert "Hayai" not in anki.deck_names()  # refused before anything was made
    assert "createDeck" not in anki.actions()[len(before) :]


def test_words_with_html_characters_are_found_as_stored(anki, miner_for):
    miner = miner_for(anki)
    word = Mined(word='A&B "<x>"', sentence="")
    first = miner.add(word)
    assert anki.note(first.note_id)["fields"]["Word"] == "A&amp;B &quot;&lt;x&gt;&quot;"
    assert miner.existing(word) == [first.note_id]
    assert miner.add(word).existing == [first.note_id]
    wild = Mined(word="a_b*c:d")  # Anki's wildcards and the field separator, taken literally
    second = miner.add(wild)
    assert miner.existing(wild) == [second.note_id]
    assert miner.existing(Mined(word="aXb*c:d")) == []
    for text in ("-猫", "(犬)", "a\\b", "x y", "nc:x", "re:.*"):  # search syntax, taken literally
        added = miner.add(Mined(word=text))
        assert miner.add(Mined(word=text)).existing == [added.note_id], text


def test_media_is_stored_only_when_a_field_shows_it(anki, miner_for):
    mapping = {"Front": "word", "Back": "glossary"}
    added = miner_for(anki, note_type="Basic", mapping=mapping).add(taberu(image_png=b"png"))
    assert added.note_id and anki.media() == {}
    assert "storeMediaFile" not in anki.actions()
    with_picture = {"Front": "reading", "Back": "image"}
    miner_for(anki, note_type="Basic", mapping=with_picture).add(taberu(image_png=b"png"))
    assert list(anki.media().values()) == [b"png"]


def test_a_users_note_type_with_a_mapping(anki, miner_for):
    anki.add_model("Japanese", ["Expression", "Meaning", "Context"])
    anki.add_deck("Mining")
    mapping = {"Expression": "word", "Meaning": "glossary", "Context": "sentence"}
    miner = miner_for(anki, deck="Mining", note_type="Japanese", mapping=mapping, tags=("a", "b"))
    added = miner.add(taberu())
    stored = anki.note(added.note_id)
    assert stored["model"] == "Japanese" and stored["deck"] == "Mining"
    assert stored["tags"] == ["a", "b"]
    assert stored["fields"]["Context"] == "ケーキを<b>食べられなかった</b>。"
    assert "to eat" in stored["fields"]["Meaning"]


def test_a_front_that_would_be_empty(anki, miner_for):
    """Old Anki refuses a note whose card fronts all come out empty (AnkiConnect's "empty
    question"); today's Anki makes the first card anyway. Either way nothing else is left."""
    anki.add_model("Vocab", ["Word", "Sentence", "Picture"], front="{{Sentence}}")
    mapping = {"Word": "word", "Sentence": "sentence", "Picture": "image"}
    miner = miner_for(anki, note_type="Vocab", mapping=mapping)
    mined = Mined(word="猫", image_png=b"png")
    if isinstance(anki, FakeAnki) and anki.mode == "old":
        with pytest.raises(AnkiError, match="Anki made no card"):
            miner.add(mined)
        assert anki.note_ids() == [] and anki.media() == {}
    else:
        assert miner.add(mined).note_id in anki.note_ids()


def test_a_mapping_naming_a_field_the_note_type_lost_is_said_plainly(anki, miner_for):
    anki.add_model("Japanese", ["Expression", "Meaning"])
    miner = miner_for(anki, note_type="Japanese", mapping={"Expression": "word", "Audio": "pitch"})
    with pytest.raises(AnkiError, match="has no field “Audio” any more"):
        miner.add(taberu())
    assert not anki.note_ids()


def test_a_configured_deck_or_note_type_that_is_missing_is_not_made(anki, miner_for):
    with pytest.raises(AnkiError, match="no deck “Gone”"):
        miner_for(anki, deck="Gone").add(taberu())
    with pytest.raises(AnkiError, match="no note type “Gone”"):
        miner_for(anki, note_type="Gone", mapping={"Front": "word"}).add(taberu())
    assert "Gone" not in anki.deck_names() and anki.model_fields("Gone") is None
    status = miner_for(anki, deck="Gone").status()
    assert status.reachable and "no deck “Gone”" in status.message


def test_an_empty_first_field_is_a_mapping_problem_and_changes_nothing(anki, miner_for):
    miner = miner_for(anki, note_type="Basic", mapping={"Front": "pitch", "Back": "word"})
    with pytest.raises(AnkiError, match="first field"):
        miner.add(Mined(word="猫"))
    assert "Hayai" not in anki.deck_names() and not anki.note_ids()


def test_a_note_type_without_a_mapping_asks_for_one(anki, miner_for):
    with pytest.raises(AnkiError, match="Choose which field"):
        miner_for(anki, note_type="Basic").add(taberu())


# --- errors in words ------------------------------------------------------------------------------


def test_anki_not_running():
    miner = Miner(AnkiConfig(url=f"http://127.0.0.1:{free_port()}"))
    with pytest.raises(AnkiUnreachable, match="Anki is not running"):
        miner.add(taberu())
    status = miner.status()
    assert not status.reachable and "Anki is not running" in status.message
    # the deck and the note type were never asked about: not known, not "not found"
    assert status.deck_found is None and status.note_type_found is None


def test_no_profile_open(anki, miner_for):
    anki.close_profile()
    status = miner_for(anki).status()
    assert status.reachable and "no profile is loaded" in status.message
    with pytest.raises(AnkiError, match="no profile is loaded"):
        miner_for(anki).add(taberu())


def test_ankiconnect_too_old(miner_for):
    with FakeAnki(version=5) as old:
        with pytest.raises(AnkiError, match="needs 6 or newer"):
            miner_for(old).add(taberu())
        assert "needs 6 or newer" in miner_for(old).status().message


def test_old_ankiconnect_without_error_detail_says_why_it_cannot_add(miner_for):
    """canAddNotes says only no: a refusal that is no duplicate is said as such."""
    with stand_in("fake-old") as old:
        old.add_deck("Hayai")
        old.add_model("Hayai", list(HAYAI_FIELDS))
        old.unsupported.add("canAddNotes")
        with pytest.raises(AnkiError, match="does not know “canAddNotes”"):
            miner_for(old).add(taberu())
        old.unsupported.discard("canAddNotes")
        old.add_deck("Hayai::x")
        old.a_canAddNotesWithErrorDetail = lambda notes: [{"canAdd": False, "error": "?"}]
        with pytest.raises(AnkiError, match="does not say why"):
            miner_for(old).add(taberu())
        assert not old.note_ids()


@pytest.mark.parametrize("name", ["fake-new", "collection-old"])
def test_a_missing_key_and_a_wrong_key_are_told_apart(miner_for, name):
    with stand_in(name, key="s3cret") as anki:
        with pytest.raises(AnkiError, match="asks for an API key"):
            miner_for(anki).add(taberu())
        with pytest.raises(AnkiError, match="refused the API key"):
            miner_for(anki, key="wrong").add(taberu())
        status = miner_for(anki, key="wrong").status()
        assert status.reachable and "refused the API key" in status.message
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


def test_status_names_what_is_there(anki, miner_for):
    status = miner_for(anki).status()
    assert status.reachable and status.version == 6
    assert not status.deck_found and not status.note_type_found and status.message == ""
    miner_for(anki).add(taberu())
    status = miner_for(anki).status()
    assert status.deck_found and status.note_type_found

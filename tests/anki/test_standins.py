"""The AnkiConnect stand-ins behave as the add-on does, in both modes; the fake and the stand-in on
Anki's real collection agree on every behaviour Hayai relies on (docs/anki.md lists them)."""

from __future__ import annotations

import json
import urllib.request

import pytest
from fake_ankiconnect import EMPTY_QUESTION, FakeAnki


def post(anki, body: bytes):
    request = urllib.request.Request(anki.url, data=body, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read()


def call(anki, action, **params):
    status, body = post(
        anki, json.dumps({"action": action, "version": 6, "params": params}).encode()
    )
    assert status == 200
    return json.loads(body)


def result(anki, action, **params):
    reply = call(anki, action, **params)
    assert reply["error"] is None, reply
    return reply["result"]


def basic(deck="Default", front="猫", **options):
    note = {"deckName": deck, "modelName": "Basic", "fields": {"Front": front, "Back": ""}}
    if options:
        note["options"] = options
    return note


def deck_of(anki, note_id):
    (card,) = result(anki, "findCards", query=f"nid:{note_id}")
    (info,) = result(anki, "cardsInfo", cards=[card])
    return info["deckName"]


def test_a_browser_at_the_address(anki):
    with urllib.request.urlopen(anki.url, timeout=10) as response:
        body = response.read()
    assert response.status == 200
    if anki.mode == "new":
        assert json.loads(body) == {"apiVersion": "AnkiConnect v.6"}
    else:
        assert body == b"AnkiConnect v.6"


def test_bad_json_is_answered_200_with_an_error(anki):
    status, body = post(anki, b"{not json")
    reply = json.loads(body)
    assert status == 200 and reply["result"] is None and reply["error"]


def test_the_deck_of_added_cards(anki):
    """Anki 25.9+: the add-on's deck is lost, the cards go to the current deck."""
    result(anki, "createDeck", deck="Hayai")
    anki.select_deck("Default")
    note_id = result(anki, "addNote", note=basic("Hayai"))
    assert deck_of(anki, note_id) == ("Default" if anki.mode == "new" else "Hayai")
    (card,) = result(anki, "findCards", query=f"nid:{note_id}")
    assert result(anki, "changeDeck", cards=[card], deck="Hayai") is None
    assert deck_of(anki, note_id) == "Hayai"


def test_duplicates_are_judged_by_where_the_cards_are(anki):
    result(anki, "createDeck", deck="Hayai")
    anki.select_deck("Default")
    result(anki, "addNote", note=basic("Hayai"))
    in_hayai = basic("Hayai", duplicateScope="deck")
    (check,) = result(anki, "canAddNotes", notes=[in_hayai])
    # new Anki: the card went to Default, so "Hayai" has no duplicate (the bug of issue 22)
    assert check is (anki.mode == "new")
    assert result(anki, "canAddNotes", notes=[basic("Hayai")]) == [False]  # collection-wide
    assert result(anki, "canAddNotes", notes=[basic("Hayai", front="<b>猫</b>")]) == [False]
    with_children = basic(
        "Default",
        duplicateScope="deck",
        duplicateScopeOptions={"deckName": "Hayai" if anki.mode == "old" else "Default"},
    )
    assert result(anki, "canAddNotes", notes=[with_children]) == [False]


def test_error_detail_only_in_the_new_addon(anki):
    reply = call(anki, "canAddNotesWithErrorDetail", notes=[basic(front="")])
    if anki.mode == "old":
        assert reply == {"result": None, "error": "unsupported action"}
        return
    assert reply["result"] == [{"canAdd": False, "error": "cannot create note because it is empty"}]
    result(anki, "addNote", note=basic())
    (dup,) = result(anki, "canAddNotesWithErrorDetail", notes=[basic()])
    assert dup == {"canAdd": False, "error": "cannot create note because it is a duplicate"}
    (gone,) = result(anki, "canAddNotesWithErrorDetail", notes=[basic("Gone")])
    assert gone == {"canAdd": False, "error": "deck was not found: Gone"}


def test_find_notes_matches_the_field_as_stored(anki):
    note_id = result(anki, "addNote", note=basic(front="A&amp;B"))
    assert result(anki, "findNotes", query='"Front:A&amp;B"') == [note_id]
    assert result(anki, "findNotes", query='"Front:A&B"') == []
    assert result(anki, "findNotes", query='"note:Basic" "deck:Default"') == [note_id]


def test_create_model_answers_with_the_whole_note_type(anki):
    model = result(
        anki,
        "createModel",
        modelName="Hayai",
        inOrderFields=["Word", "Sentence"],
        cardTemplates=[{"Name": "Recognition", "Front": "{{Word}}", "Back": "{{Sentence}}"}],
        css=".card {}",
    )
    assert model["name"] == "Hayai" and [f["name"] for f in model["flds"]] == ["Word", "Sentence"]
    assert model["tmpls"][0]["name"] == "Recognition" and model["css"] == ".card {}"
    assert (
        call(anki, "createModel", modelName="Hayai", inOrderFields=["x"], cardTemplates=[{}])[
            "error"
        ]
        == "Model name already exists"
    )


def test_no_profile_open(anki):
    anki.close_profile()
    assert result(anki, "version") == 6
    assert call(anki, "deckNames") == {"result": None, "error": "collection is not available"}


def test_a_missing_and_a_wrong_key_get_the_same_error():
    with FakeAnki(key="s3cret") as anki:
        missing = call(anki, "version")
        body = json.dumps({"action": "version", "version": 6, "key": "nope"}).encode()
        wrong = json.loads(post(anki, body)[1])
    assert missing == wrong == {"result": None, "error": "valid api key must be provided"}


def test_a_front_left_empty():
    """The old add-on on old Anki: no card, no note. New Anki makes the first card anyway (the
    real collection does so in both modes: its backend is today's)."""
    for mode, refused in (("old", True), ("new", False)):
        with FakeAnki(mode) as anki:
            anki.add_model("Vocab", ["Word", "Sentence"], front="{{Sentence}}")
            note = {"deckName": "Default", "modelName": "Vocab", "fields": {"Word": "猫"}}
            reply = call(anki, "addNote", note=note)
            assert (reply["error"] == EMPTY_QUESTION) is refused


@pytest.mark.parametrize("mode", ["new", "old"])
def test_the_fake_and_the_real_collection_agree(mode):
    """The same requests to both: the same answers, ids aside."""
    from collection_ankiconnect import CollectionAnki

    def script(anki):
        out = []
        out.append(result(anki, "deckNames"))
        result(anki, "createDeck", deck="Hayai::Sub")
        out.append(sorted(result(anki, "deckNames")))
        first = result(anki, "addNote", note=basic("Hayai::Sub", front="犬 &amp; 猫"))
        out.append(deck_of(anki, first))
        out.append(result(anki, "canAddNotes", notes=[basic("Hayai", front="犬 &amp; 猫")]))
        scoped = basic(
            "Hayai",
            front="犬 &amp; 猫",
            duplicateScope="deck",
            duplicateScopeOptions={"deckName": "Hayai::Sub" if mode == "old" else "Default"},
        )
        out.append(result(anki, "canAddNotes", notes=[scoped]))
        out.append(len(result(anki, "findNotes", query='"Front:犬 &amp; 猫"')))
        out.append(len(result(anki, "findNotes", query='"deck:Hayai"')))
        out.append(call(anki, "modelFieldNames", modelName="Nope"))
        out.append(call(anki, "addNote", note=basic("Nope")))
        return out

    with FakeAnki(mode) as fake, CollectionAnki(mode) as real:
        assert script(fake) == script(real)

"""Anki in the GUI: the popup's "+ Anki" link, the overlay's Mine button and the settings page,
clicked with pytest-qt (offscreen) against the fake AnkiConnect."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QPoint, QRect, Qt
from PySide6.QtGui import QHelpEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QToolTip

from app.dictionary.models import Entry, LookupResult, Sense
from app.settings import Settings
from app.ui.anki_action import ADDED, FAILED, IN_DECK, NEW, AnkiActions, word_key
from app.ui.dictionary_popup import DictionaryPopup

pytestmark = pytest.mark.gui
SCREEN = QRect(0, 0, 1280, 720)
LINE = "ケーキを食べられなかった。"
SHOTS = os.environ.get("HAYAI_SCREENSHOT_DIR")  # set to keep the pictures (see CONTRIBUTING)


def taberu() -> Entry:
    return Entry(
        headword="食べる",
        reading="たべる",
        readings=["たべる"],
        pos=["v1", "vt"],
        senses=[Sense(["to eat"], ["v1", "vt"]), Sense(["to live on (e.g. a salary)"], ["v1"])],
        source="jmdict",
        match="食べられなかった",
        deinflection=["passive/potential", "negative", "past"],
    )


def neko() -> Entry:
    return Entry("猫", "ねこ", ["ねこ"], ["n"], [Sense(["cat"], ["n"])], "jmdict", "猫")


@pytest.fixture
def settings(tmp_path):
    return Settings(path=tmp_path / "settings.ini")


@pytest.fixture
def popup_with_anki(qtbot, settings, fake_anki):
    settings.set("anki/url", fake_anki.url)
    actions = AnkiActions(settings)
    popup = DictionaryPopup()
    qtbot.addWidget(popup)
    popup.attach_anki(actions)
    popup.mining_context = lambda: (b"\x89PNG crop", "Hayai · test")
    yield popup, actions
    actions.shutdown()


def show(popup, *entries):
    popup.sentence = LINE
    popup.show_result(
        LookupResult(len(entries[0].match), list(entries), "ja"), QPoint(100, 100), SCREEN
    )


def click_link(qtbot, popup, href: str) -> None:
    """A real mouse click on the anchor `href` in the popup's text."""
    doc = popup.browser.document()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.charFormat().anchorHref() == href:
                cursor = QTextCursor(doc)
                cursor.setPosition(fragment.position() + 1)
                rect = popup.browser.cursorRect(cursor)
                qtbot.mouseClick(
                    popup.browser.viewport(), Qt.MouseButton.LeftButton, pos=rect.center()
                )
                return
            it += 1
        block = block.next()
    raise AssertionError(f"no link {href} in {popup.browser.toHtml()[:300]}")


def link_text(popup, href: str) -> str:
    doc = popup.browser.document()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            if it.fragment().charFormat().anchorHref() == href:
                return it.fragment().text()
            it += 1
        block = block.next()
    return ""


def test_the_link_adds_the_note_then_opens_it_in_ankis_browser(qtbot, popup_with_anki, fake_anki):
    popup, actions = popup_with_anki
    show(popup, taberu())
    key = word_key("食べる", "たべる")
    qtbot.waitUntil(lambda: actions.state(key).state == NEW)  # the quiet check found nothing
    assert link_text(popup, "anki:0") == "+ Anki"
    if SHOTS:
        popup.grab().save(str(Path(SHOTS) / "anki-popup-new.png"))
    click_link(qtbot, popup, "anki:0")
    qtbot.waitUntil(lambda: actions.state(key).state == ADDED, timeout=10_000)
    (note_id,) = fake_anki.note_ids()
    note = fake_anki.note(note_id)
    assert note["fields"]["Sentence"] == "ケーキを<b>食べられなかった</b>。"
    assert note["fields"]["Source"] == "Hayai · test"
    assert note["deck"] == "Hayai"  # moved out of the current deck where AnkiConnect left it
    assert list(fake_anki.media().values()) == [b"\x89PNG crop"]
    assert link_text(popup, "anki:0") == "✓ in deck"
    if SHOTS:
        popup.grab().save(str(Path(SHOTS) / "anki-popup-added.png"))
    click_link(qtbot, popup, "anki:0")  # in the deck now: the click opens it in Anki
    qtbot.waitUntil(lambda: fake_anki.browsed == [f"nid:{note_id}"])
    assert fake_anki.note_ids() == [note_id]


def test_a_word_already_in_the_deck_shows_in_deck_before_any_click(
    qtbot, popup_with_anki, fake_anki, miner_for
):
    from app.anki.note import Mined

    miner_for(fake_anki).add(Mined(word="猫", reading="ねこ"))
    popup, actions = popup_with_anki
    show(popup, neko(), taberu())
    qtbot.waitUntil(lambda: actions.state(word_key("猫", "ねこ")).state == IN_DECK)
    qtbot.waitUntil(lambda: link_text(popup, "anki:0") == "in deck")
    assert link_text(popup, "anki:1") == "+ Anki"
    if SHOTS:
        # the picture once the second word's quiet check is done: its link active, not greyed
        qtbot.waitUntil(lambda: actions.state(word_key("食べる", "たべる")).state == NEW)
        popup.grab().save(str(Path(SHOTS) / "anki-popup-in-deck.png"))


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tooltip_at(qtbot, popup, text: str) -> str:
    """The tooltip Qt shows with the pointer resting on `text` in the popup."""
    cursor = popup.browser.document().find(text)
    assert not cursor.isNull(), text
    cursor.setPosition(cursor.selectionStart() + 1)
    pos = popup.browser.cursorRect(cursor).center()
    viewport = popup.browser.viewport()
    QToolTip.hideText()
    QApplication.sendEvent(
        viewport, QHelpEvent(QEvent.Type.ToolTip, pos, viewport.mapToGlobal(pos))
    )
    return QToolTip.text() if QToolTip.isVisible() else ""


def tip_of(popup, text: str) -> str:
    cursor = popup.browser.document().find(text)
    cursor.setPosition(cursor.selectionStart() + 1)
    return cursor.charFormat().toolTip()


def href_of(popup, text: str) -> str:
    cursor = popup.browser.document().find(text)
    cursor.setPosition(cursor.selectionStart() + 1)
    return cursor.charFormat().anchorHref()


def test_while_anki_does_not_answer_the_link_is_greyed_and_says_why_until_it_answers(
    qtbot, settings, fake_anki
):
    settings.set("anki/url", f"http://127.0.0.1:{closed_port()}")
    actions = AnkiActions(settings)
    popup = DictionaryPopup()
    qtbot.addWidget(popup)
    popup.attach_anki(actions)
    show(popup, taberu())
    qtbot.waitUntil(lambda: actions.reachable is False, timeout=10_000)
    qtbot.waitUntil(lambda: "anki:0" not in popup.browser.toHtml())  # no link to click
    assert "+ Anki" in popup.browser.toPlainText()  # greyed, in its place
    assert "Anki is not running" in tooltip_at(qtbot, popup, "+ Anki")
    assert "Anki is not running" not in popup.browser.toPlainText()  # no red line under it
    show(popup, neko())  # the next popup asks again; still nothing answers
    qtbot.waitUntil(lambda: not actions._probing, timeout=10_000)
    assert "anki:0" not in popup.browser.toHtml()
    settings.set("anki/url", fake_anki.url)  # Anki started
    show(popup, taberu())
    qtbot.waitUntil(lambda: actions.reachable is True, timeout=10_000)
    qtbot.waitUntil(lambda: link_text(popup, "anki:0") == "+ Anki")
    assert "anki:0" in href_of(popup, "+ Anki") and tip_of(popup, "+ Anki") == ""
    click_link(qtbot, popup, "anki:0")
    qtbot.waitUntil(lambda: fake_anki.note_ids() != [], timeout=10_000)
    actions.shutdown()


def test_a_failed_add_says_so_once_where_it_was_asked(qtbot, popup_with_anki, fake_anki):
    popup, actions = popup_with_anki
    key = word_key("食べる", "たべる")
    show(popup, taberu())
    qtbot.waitUntil(lambda: actions.state(key).state == NEW)
    fake_anki.close_profile()  # Anki answers, but cannot add
    click_link(qtbot, popup, "anki:0")
    qtbot.waitUntil(lambda: actions.state(key).state == FAILED, timeout=10_000)
    qtbot.waitUntil(lambda: "no profile is loaded" in popup.browser.toPlainText())
    show(popup, neko())  # later popups stay clean: another word
    assert "no profile" not in popup.browser.toPlainText()
    show(popup, taberu())  # and the word itself
    assert "no profile" not in popup.browser.toHtml()
    assert link_text(popup, "anki:0") == "+ Anki"


def test_anki_closed_after_the_popup_opened_is_said_once_then_the_link_is_greyed(
    qtbot, popup_with_anki, fake_anki
):
    popup, actions = popup_with_anki
    key = word_key("食べる", "たべる")
    show(popup, taberu())
    qtbot.waitUntil(lambda: actions.state(key).state == NEW)
    assert link_text(popup, "anki:0") == "+ Anki"
    fake_anki.quit()
    click_link(qtbot, popup, "anki:0")
    qtbot.waitUntil(lambda: actions.state(key).state == FAILED, timeout=10_000)
    assert "Anki is not running" in popup.browser.toPlainText()  # said where it was asked
    assert "anki:0" not in popup.browser.toHtml()  # and the link greyed
    if SHOTS:
        popup.grab().save(str(Path(SHOTS) / "anki-popup-error.png"))
    show(popup, neko())  # still working: the next word shows as usual, without the error
    assert "cat" in popup.browser.toPlainText()
    assert "Anki is not running" not in popup.browser.toPlainText()
    assert "Anki is not running" in tooltip_at(qtbot, popup, "+ Anki")


def test_the_overlays_mine_button_makes_a_card_of_the_line(qtbot, settings, fake_anki):
    from app.anki.note import Mined
    from app.ui.overlay import Overlay

    settings.set("anki/url", fake_anki.url)
    actions = AnkiActions(settings)
    overlay = Overlay()
    qtbot.addWidget(overlay)
    overlay.set_mining(True)
    overlay.set_anchor(QRect(100, 100, 300, 60), SCREEN)
    overlay.show_result(LINE, "0.42 s · v2.1 · cpu")
    notes = []
    actions.line_done.connect(
        lambda state, message: (notes.append((state, message)), overlay.show_note(message))
    )
    overlay.mine_requested.connect(
        lambda line, selected: actions.mine_line(
            Mined(word=selected or line, sentence=line, match=selected)
        )
    )
    assert overlay.mine_button.isVisible()
    qtbot.mouseClick(overlay.mine_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(notes), timeout=10_000)
    assert notes == [(ADDED, "Added to Hayai.")]
    (note,) = fake_anki.notes.values()
    assert note["fields"]["Word"] == LINE and note["fields"]["Sentence"] == LINE
    assert overlay.status.text() == "Added to Hayai."
    actions.shutdown()


def test_settings_page_reads_decks_note_types_and_fields_and_saves_a_mapping(
    qtbot, settings, fake_anki
):
    from app.ui.settings_dialog import SettingsDialog

    fake_anki.add_model("Japanese", ["Expression", "Meaning", "Context"])
    fake_anki.add_deck("Mining")
    settings.set("anki/url", fake_anki.url)
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.open_tab("Anki")
    page = dialog.anki_page
    qtbot.mouseClick(page.connect_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.status.text().startswith("Connected"), timeout=10_000)
    assert [page.deck.itemText(i) for i in range(page.deck.count())] == ["Default", "Mining"]
    assert page.create_button.isVisible()  # no Hayai note type in Anki yet
    page.deck.setEditText("Mining")
    page.note_type.setCurrentText("Japanese")
    qtbot.waitUntil(
        lambda: list(page.field_combos) == ["Expression", "Meaning", "Context"], timeout=10_000
    )
    for name, marker in (("Expression", "word"), ("Meaning", "glossary"), ("Context", "sentence")):
        combo = page.field_combos[name]
        combo.setCurrentIndex(combo.findData(marker))
    assert page.duplicates.currentData() == "deck"
    page.duplicates.setCurrentIndex(page.duplicates.findData("collection"))
    if SHOTS:
        qtbot.wait(200)  # the new field rows laid out in the scrolling page
        dialog.grab().save(str(Path(SHOTS) / "anki-settings.png"))
    assert dialog.save()
    assert settings.get("anki/deck") == "Mining" and settings.get("anki/note_type") == "Japanese"
    assert settings.get("anki/duplicates") == "collection"
    assert json.loads(settings.get("anki/fields")) == {
        "Expression": "word",
        "Meaning": "glossary",
        "Context": "sentence",
    }
    # the one-click note type
    qtbot.mouseClick(page.create_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Hayai" in fake_anki.models, timeout=10_000)
    # the page's answer, not the button's visibility: save() hid the whole dialog already
    qtbot.waitUntil(lambda: page.status.text() == "Made the Hayai note type in Anki.")
    assert page.create_button.isHidden()
    assert page.note_type.currentText() == "Hayai" and "Word" in page.field_combos


def test_settings_page_says_when_anki_cannot_be_reached(qtbot, settings):
    from app.ui.settings_dialog import SettingsDialog

    settings.set("anki/url", "http://127.0.0.1:9")
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    qtbot.mouseClick(dialog.anki_page.connect_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Anki is not running" in dialog.anki_page.status.text(), timeout=10_000)

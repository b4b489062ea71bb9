"""The dictionary popup (offscreen) and its controller: entries shown, scrolling, on screen, Esc, copy."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QCursor, QGuiApplication
from PySide6.QtWidgets import QWidget

from app.dictionary.models import Entry, KanjiInfo, LookupResult, Sense
from app.ui.dictionary_popup import MAX_HEIGHT, POPUP_WIDTH, DictionaryPopup, popup_position
from app.ui.dictionary_popup_controller import DictionaryPopupController

pytestmark = pytest.mark.gui
SCREEN = QRect(0, 0, 1280, 720)


def taberu(match="食べられなかった") -> Entry:
    return Entry(
        headword="食べる",
        reading="たべる",
        readings=["たべる"],
        pos=["v1", "vt"],
        senses=[
            Sense(["to eat"], ["v1", "vt"]),
            Sense(["to live on (e.g. a salary)", "to live off", "to subsist on"], ["v1", "vt"]),
        ],
        source="jmdict",
        match=match,
        deinflection=["passive/potential", "negative", "past"],
        kanji=[KanjiInfo("食", ["eat", "food"], ["ショク", "ジキ"], ["く.う", "た.べる"], 4, 2, 9)],
    )


def result_of(*entries: Entry) -> LookupResult:
    return LookupResult(max(len(e.match) for e in entries), list(entries), "ja")


@pytest.fixture
def popup(qtbot):
    widget = DictionaryPopup()
    qtbot.addWidget(widget)
    return widget


def test_popup_shows_headword_reading_chain_senses_and_kanji(popup):
    popup.set_result(result_of(taberu()))
    text = popup.browser.toPlainText()
    assert "食べる" in text and "たべる" in text
    assert "食べられなかった ← 食べる: passive/potential · negative · past" in text
    assert "to eat" in text and "to live on (e.g. a salary); to live off; to subsist on" in text
    assert "ichidan verb" in text and "transitive" in text
    assert "ショク、ジキ" in text and "9 strokes · grade 2 · JLPT 4" in text
    assert popup.width() == POPUP_WIDTH


def test_senses_are_numbered_and_stacked(popup):
    popup.set_result(result_of(taberu()))
    doc = popup.browser.document()
    blocks = [doc.findBlockByNumber(i) for i in range(doc.blockCount())]
    items = [b for b in blocks if b.textList() is not None]
    assert "to eat" in items[0].text() and "to subsist on" in items[1].text()
    assert len(items) == 2 and items[0].textList() is items[1].textList()  # one numbered list
    assert items[0].textList().itemText(items[1]) == "2."


def test_many_entries_scroll(popup):
    many = [taberu() for _ in range(12)]
    popup.set_result(result_of(*many))
    assert popup.height() == MAX_HEIGHT
    popup.show()
    assert popup.browser.verticalScrollBar().maximum() > 0


def test_short_result_is_short(popup):
    popup.set_result(
        result_of(
            Entry("に", "に", ["に"], ["prt"], [Sense(["at"], ["prt"])], "jmdict", "に", [], [])
        )
    )
    assert popup.height() < 200


def test_escape_closes_the_popup(popup, qtbot):
    popup.show_result(result_of(taberu()), QPoint(100, 100), SCREEN)
    qtbot.waitExposed(popup)
    assert popup.isVisible()
    qtbot.keyClick(popup, Qt.Key.Key_Escape)
    assert not popup.isVisible()


def test_copy_button_copies_headword_and_reading(popup, qtbot):
    popup.set_result(result_of(taberu()))
    with qtbot.waitSignal(popup.copied) as blocker:
        qtbot.mouseClick(popup.copy_button, Qt.MouseButton.LeftButton)
    assert blocker.args == ["食べる【たべる】"]
    assert QGuiApplication.clipboard().text() == "食べる【たべる】"


def test_copy_link_of_a_later_entry(popup):
    other = Entry(
        "行く",
        "いく",
        ["いく", "ゆく"],
        ["v5k-s"],
        [Sense(["to go"], ["v5k-s"])],
        "jmdict",
        "行った",
        ["past"],
        [],
    )
    popup.set_result(result_of(taberu(), other))
    from PySide6.QtCore import QUrl

    popup.browser.anchorClicked.emit(QUrl("copy:1"))
    assert QGuiApplication.clipboard().text() == "行く【いく】"


def test_message_when_nothing_is_found(popup):
    popup.set_result(LookupResult(0, [], "ko", "Korean lookups are not supported yet."))
    assert "Korean lookups are not supported yet." in popup.browser.toPlainText()
    assert not popup.copy_button.isVisibleTo(popup)


@pytest.mark.parametrize(
    "anchor",
    [QPoint(10, 10), QPoint(1270, 10), QPoint(10, 710), QPoint(1279, 719), QPoint(640, 360)],
)
def test_popup_stays_on_screen(anchor):
    size = QSize(POPUP_WIDTH, MAX_HEIGHT)
    top_left = popup_position(anchor, size, SCREEN)
    assert SCREEN.contains(QRect(top_left, size))


def test_popup_goes_above_the_pointer_near_the_bottom():
    top_left = popup_position(QPoint(300, 650), QSize(POPUP_WIDTH, 300), SCREEN)
    assert top_left.y() + 300 <= 650  # does not cover the hovered word
    below = popup_position(QPoint(300, 100), QSize(POPUP_WIDTH, 300), SCREEN)
    assert below.y() > 100


def test_popup_respects_a_screen_with_an_offset():
    right_screen = QRect(1920, -200, 1280, 1024)
    top_left = popup_position(QPoint(3190, 800), QSize(POPUP_WIDTH, MAX_HEIGHT), right_screen)
    assert right_screen.contains(QRect(top_left, QSize(POPUP_WIDTH, MAX_HEIGHT)))


def test_real_results_render_and_screenshot(popup, dictionary, qtbot, tmp_path):
    # GIVEN real results, WHEN each is rendered in turn, THEN the popup shows that one's headword
    # (how long rendering takes is `hayai bench --dictionary`'s business, never a test's)
    lines = ["食べられなかった", "昨日学校に行ったけど", "本を読んでいた", "きれいじゃなかった"]
    results = [dictionary.lookup(line, 0) for line in lines]
    for result in results:
        popup.set_result(result)
        assert result.entries[0].headword in popup.browser.toPlainText()
    popup.show_result(results[0], QPoint(40, 40), SCREEN)
    qtbot.waitExposed(popup)
    # HAYAI_SCREENSHOT_DIR keeps the picture for a look (README); otherwise it goes to tmp_path
    folder = Path(os.environ.get("HAYAI_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "dictionary_popup.png"
    assert popup.grab().save(str(path))
    assert path.stat().st_size > 10_000  # a real picture, not an empty grab


# ------------------------------------------------------------------------------------------ controller


def test_controller_highlights_and_shows(dictionary, qtbot):
    # the pointer away from where the popup opens: an earlier test may have left the offscreen
    # cursor there, and a pointer inside the popup keeps it open (the user is reading it)
    QCursor.setPos(QPoint(0, 0))
    controller = DictionaryPopupController(dictionary)
    qtbot.addWidget(controller.popup)
    line = "昨日学校に行ったけど"
    with qtbot.waitSignal(controller.highlight) as blocker:
        controller.on_hover(line, line.index("行"), QPoint(200, 200))
    assert blocker.args == [line.index("行"), 3]
    assert controller.popup.isVisible()
    assert controller.popup.result.entries[0].headword == "行く"
    # THEN moving away hides it after a short delay and clears the highlight
    with qtbot.waitSignal(controller.highlight) as cleared:
        controller.on_hover(line, -1, QPoint(-1, -1))
    assert cleared.args == [0, 0]
    assert not controller.popup.isVisible()


def test_controller_esc_in_the_overlay_closes_the_popup_first(dictionary, qtbot):
    overlay = QWidget()
    qtbot.addWidget(overlay)
    controller = DictionaryPopupController(dictionary)
    qtbot.addWidget(controller.popup)
    controller.watch(overlay)
    overlay.show()
    controller.on_hover("本を読む", 0, QPoint(100, 100))
    assert controller.popup.isVisible()
    qtbot.keyClick(overlay, Qt.Key.Key_Escape)
    assert not controller.popup.isVisible()


def test_controller_mouse_into_the_popup_keeps_it_open(dictionary, qtbot):
    controller = DictionaryPopupController(dictionary)
    qtbot.addWidget(controller.popup)
    controller.on_hover("本を読む", 0, QPoint(100, 100))
    controller.on_left()
    controller.popup.pointer_entered.emit()  # the mouse reached the popup before the delay ran out
    qtbot.wait(500)
    assert controller.popup.isVisible()


def test_controller_korean_message(dictionary, qtbot):
    controller = DictionaryPopupController(dictionary)
    qtbot.addWidget(controller.popup)
    controller.on_hover("학교에 갔습니다", 0, QPoint(100, 100))
    assert controller.popup.isVisible()
    assert "No Korean dictionary yet" in controller.popup.browser.toPlainText()


class SlowFirstRunDictionary:
    """Not ready until prepare() has run on the worker thread."""

    def __init__(self, real):
        self.real = real
        self.ready = False
        self.prepared_on = None

    def is_ready(self):
        return self.ready

    def prepare(self, progress=None):
        self.prepared_on = threading.current_thread()
        for i in range(5):
            time.sleep(0.02)
            if progress:
                progress("words (JMdict)", i / 5, 1.0)
        self.ready = True

    def lookup(self, text, start=0, lang="auto"):
        return self.real.lookup(text, start, lang)


def test_controller_builds_the_index_off_the_gui_thread(dictionary, qtbot):
    fake = SlowFirstRunDictionary(dictionary)
    controller = DictionaryPopupController(fake)
    qtbot.addWidget(controller.popup)
    controller.on_hover("本を読む", 0, QPoint(100, 100))
    assert "Preparing the dictionary" in controller.popup.browser.toPlainText()
    qtbot.waitUntil(lambda: controller.popup.result is not None, timeout=5000)
    assert fake.prepared_on is not threading.main_thread()
    assert controller.popup.result.entries[0].headword == "本"


def test_prepare_in_background_at_start_up(dictionary, qtbot):
    fake = SlowFirstRunDictionary(dictionary)
    controller = DictionaryPopupController(fake)
    qtbot.addWidget(controller.popup)
    controller.prepare_in_background()
    controller.prepare_in_background()  # a second call while building does nothing
    qtbot.waitUntil(lambda: fake.ready, timeout=5000)
    qtbot.wait(50)
    assert fake.prepared_on is not threading.main_thread()
    controller.on_hover("本を読む", 0, QPoint(100, 100))
    assert controller.popup.result.entries[0].headword == "本"  # no "preparing" message once ready

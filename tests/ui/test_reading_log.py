"""The reading log window: this session's reads, newest at the bottom; edit, copy, export, crop on
hover; the overlay's dictionary popup on its text; fed by the app as reads come in."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import wired_app
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication

from app.flows.dictionary_hook import DictionaryHook
from app.history import History
from app.ui.reading_log import ReadingLog, export_text

env, make_app = wired_app.env, wired_app.make_app

pytestmark = pytest.mark.gui


@pytest.fixture
def history(tmp_path):
    h = History(tmp_path / "h.sqlite3")
    yield h
    h.close()


def png(qcolor="red") -> bytes:
    from PySide6.QtGui import QColor, QImage

    from app.flows.reads import png_bytes

    image = QImage(120, 40, QImage.Format.Format_RGB32)
    image.fill(QColor(qcolor))
    return png_bytes(image)


def test_the_log_lists_this_sessions_reads_oldest_first_and_new_ones_at_the_bottom(history, qtbot):
    history.add("昨日の話", created=time.time() - 7200, source="box")  # an earlier session
    since = time.time() - 60
    history.add("一つ目", created=since + 1, source="watch")
    history.add("二つ目", created=since + 2, source="click", thumbnail=png())
    log = ReadingLog(history, since)
    qtbot.addWidget(log)
    log.show()
    qtbot.waitUntil(lambda: not log.loading, timeout=5000)  # the history thread answered
    rows = [log.list.item(i).text() for i in range(log.list.count())]
    assert len(rows) == 2
    assert "一つ目" in rows[0] and rows[0].endswith("· watched")
    assert "二つ目" in rows[1] and rows[1].endswith("· clicked")
    assert log.count.text() == "2 reads this session"
    log.add(history.add("三つ目", source="clipboard"))
    assert "三つ目" in log.list.item(2).text()


def test_editing_a_line_saves_it_in_the_history_and_export_writes_every_line(
    history, qtbot, tmp_path
):
    since = time.time() - 10
    first = history.add("今日はいい天気", created=since + 1)
    history.add("明日は雨", created=since + 2)
    log = ReadingLog(history, since)
    qtbot.addWidget(log)
    log.show()
    qtbot.waitUntil(lambda: not log.loading, timeout=5000)
    log.list.setCurrentRow(0)
    assert log.editor.toPlainText() == "今日はいい天気"
    log.editor.setPlainText("今日はいい天気ですね")
    qtbot.waitUntil(lambda: history.get(first.id).text == "今日はいい天気ですね", timeout=3000)
    assert "今日はいい天気ですね" in log.list.item(0).text()
    path = log.export(str(tmp_path / "out.txt"))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [line.split("\t")[1] for line in lines] == ["今日はいい天気ですね", "明日は雨"]
    assert lines == export_text(log.entries).splitlines()
    QGuiApplication.clipboard().setText("")
    assert log.copy_text() == "今日はいい天気ですね"
    assert QGuiApplication.clipboard().text() == "今日はいい天気ですね"


def test_an_edit_typed_while_the_list_is_fetched_shows_in_the_list_and_the_editor(history, qtbot):
    since = time.time() - 10
    first = history.add("今日はいい天気", created=since + 1)
    history.add("明日は雨", created=since + 2)
    log = ReadingLog(history, since)
    qtbot.addWidget(log)
    log.show()
    qtbot.waitUntil(lambda: not log.loading, timeout=5000)
    log.list.setCurrentRow(0)
    log.refresh()  # asked before the edit: the answer has the old text
    log.editor.setPlainText("今日はいい天気ですね")  # typed before the answer is listed
    qtbot.waitUntil(lambda: not log.loading, timeout=5000)
    assert log.editor.toPlainText() == "今日はいい天気ですね"
    assert log.list.currentRow() == 0 and log.current_entry().id == first.id
    assert "今日はいい天気ですね" in log.list.item(0).text()
    assert log.entries[0].text == "今日はいい天気ですね"
    qtbot.waitUntil(lambda: history.get(first.id).text == "今日はいい天気ですね", timeout=3000)
    log.editor.setPlainText("今日は晴れ")  # the editor still edits that line
    qtbot.waitUntil(lambda: history.get(first.id).text == "今日は晴れ", timeout=3000)


# what random weights read: 128 tokens of kana, kanji and Latin, with and without spaces
LONG_READS = (
    ("ちょっと待って！どこへ行くの？" * 9, "click"),
    ("第3話", "box"),
    ("ＡＢＣabc漢字かなカナ123" * 12, "watch"),
    ("NOSPACESATALLINTHISLATINREADOFRANDOMWEIGHTS" * 4, "folder"),
    ("the quick brown fox jumps over the lazy dog " * 6, "clipboard"),
)


def text_lines(text: str, font, width: float) -> int:
    """How many lines `text` takes wrapped (anywhere, as Japanese wraps) at `width` px."""
    from PySide6.QtGui import QTextLayout, QTextOption

    layout = QTextLayout(text, font)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    layout.setTextOption(option)
    layout.beginLayout()
    while (line := layout.createLine()).isValid():
        line.setLineWidth(width)
    layout.endLayout()
    return layout.lineCount()


def test_rows_are_as_tall_as_their_wrapped_text_with_the_label_in_view_at_any_width(history, qtbot):
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtGui import QFontMetricsF

    since = time.time() - 60
    for i, (text, source) in enumerate(LONG_READS):
        history.add(text, created=since + i, source=source)
    log = ReadingLog(history, since)
    qtbot.addWidget(log)
    log.show()
    qtbot.waitUntil(lambda: not log.loading, timeout=5000)
    line = QFontMetricsF(log.list.font()).lineSpacing()
    for width in (620, 1100, 460):
        log.resize(width, 900)
        QCoreApplication.processEvents()  # the resize and what it posts
        viewport = log.list.viewport().rect()
        assert log.list.horizontalScrollBar().maximum() == 0  # nothing hides sideways
        bottom = -1
        for row in range(log.list.count()):
            item = log.list.item(row)
            rect = log.list.visualItemRect(item)
            text = LONG_READS[row][0]
            assert rect.top() == bottom + 1, (width, row)  # no blank gap above a row
            bottom = rect.bottom()
            assert rect.left() >= 0 and rect.right() <= viewport.right(), (width, row)
            # as tall as its text wrapped across the row (less the time and label beside it),
            # no more than a line taller
            most = text_lines(text, log.list.font(), viewport.width() - 220)
            least = text_lines(text, log.list.font(), viewport.width())
            assert least * line <= rect.height() <= (most + 1) * line + 20, (width, row)
            label = log.list.itemDelegate().label_rect(log.list.model().index(row, 0))
            assert rect.contains(label) and 0 <= label.left() <= label.right() <= viewport.right()
        assert log.count.text() == f"{log.list.count()} reads this session"


def test_the_count_is_the_rows_listed_with_reads_added_while_loading(history, qtbot):
    since = time.time() - 60
    history.add("一つ目", created=since + 1)
    log = ReadingLog(history, since)
    qtbot.addWidget(log)
    log.show()
    log.add(history.add("二つ目"))  # while the first answer is on its way
    qtbot.waitUntil(lambda: not log.loading, timeout=5000)
    log.add(history.add("三つ目"))
    log.refresh()
    log.add(history.add("四つ目"))
    qtbot.waitUntil(lambda: not log.loading, timeout=5000)
    rows = [log.list.item(i).text() for i in range(log.list.count())]
    assert [r.split()[1] for r in rows] == ["一つ目", "二つ目", "三つ目", "四つ目"]
    assert log.count.text() == "4 reads this session"


def test_hovering_a_line_shows_its_crop(history, qtbot):
    since = time.time() - 10
    history.add("絵のある行", created=since + 1, thumbnail=png())
    log = ReadingLog(history, since)
    qtbot.addWidget(log)
    log.show()
    qtbot.waitUntil(lambda: not log.loading, timeout=5000)
    log._show_crop(log.list.item(0))
    assert log.crop.isVisible()
    assert log.crop.pixmap().width() == 120


def test_the_app_feeds_the_log_and_the_one_popup_serves_it(make_app, qtbot, monkeypatch):
    from appcore_fakes import FakeRecognizer, FakeSession, make_selection

    looked_up = []

    class FakeController:
        dictionary = None

        def __init__(self):
            from PySide6.QtCore import QObject, Signal

            class Sig(QObject):
                highlight = Signal(int, int)

            self._sig = Sig()
            self.highlight = self._sig.highlight
            self.popup = SimpleNamespace(attach_anki=lambda actions: None, mining_context=None)

        def on_hover(self, text, index, pos, line=None, vertical=False):
            looked_up.append((text, index))
            self.highlight.emit(index, 2)

        def on_left(self):
            pass

        def hide(self):
            pass

        def watch(self, widget):
            pass

        def prepare_in_background(self):
            pass

    monkeypatch.setattr(DictionaryHook, "make_controller", lambda self: FakeController())
    app = make_app(FakeRecognizer("本を読む"))
    qtbot.waitUntil(lambda: app.dictionary_hook.controller is not None, timeout=3000)
    log = app.windows.show_log()
    app.reads.last_latency = None
    app.handle_command("capture")
    FakeSession.started[-1].select(make_selection())
    qtbot.waitUntil(lambda: log.list.count() == 1, timeout=5000)
    assert "本を読む" in log.list.item(0).text() and log.list.item(0).text().endswith("· boxed")
    # the log's text view asks the same popup controller as the overlay, and gets the highlight
    log.list.setCurrentRow(0)
    log.pointer._pointer(1, QPoint(10, 10), "hover")
    assert looked_up == [("本を読む", 1)]
    assert [s.cursor.selectedText() for s in log.editor.extraSelections()] == ["を読"]
    app.overlay.pointer._pointer(0, QPoint(10, 10), "hover")
    assert looked_up[-1] == ("本を読む", 0)
    assert log.editor.extraSelections() == []  # the highlight moved to the overlay
    log.close()


def test_mine_in_the_log_and_the_overlay_makes_cards_with_their_own_crop(make_app, qtbot):
    # Anki's stand-in (tests/anki/fake_ankiconnect.py) on loopback; the app's settings point at it
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "anki"))
    from appcore_fakes import FakeRecognizer, FakeSession, make_selection
    from fake_ankiconnect import FakeAnki

    with FakeAnki() as anki:
        app = make_app(FakeRecognizer("本を読む"))
        app.settings.set("anki/url", anki.url)
        assert app.overlay.mine_button.isVisibleTo(app.overlay)
        app.handle_command("capture")
        FakeSession.started[-1].select(make_selection())
        qtbot.waitUntil(lambda: app.overlay.text() == "本を読む", timeout=5000)
        qtbot.waitUntil(lambda: app.reads.shown is not None, timeout=5000)
        # the overlay's Mine: the whole line, with the crop of the read on screen
        qtbot.mouseClick(app.overlay.mine_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(anki.notes) == 1, timeout=10_000)
        qtbot.waitUntil(lambda: app.overlay.status.text() == "Added to Hayai.", timeout=5000)
        (note,) = anki.notes.values()
        assert note["fields"]["Word"] == "本を読む" and note["fields"]["Source"].startswith(
            "Hayai · box"
        )
        (crop,) = anki.media().values()
        assert crop.startswith(b"\x89PNG")
        # the log's Mine: the selected word of its current line, with that line's own thumbnail
        log = app.windows.show_log()
        assert log.mine_button.isVisibleTo(log)
        qtbot.waitUntil(lambda: log.list.count() == 1, timeout=5000)
        log.list.setCurrentRow(0)
        cursor = log.editor.textCursor()
        cursor.setPosition(2)
        cursor.setPosition(4, cursor.MoveMode.KeepAnchor)
        log.editor.setTextCursor(cursor)
        qtbot.mouseClick(log.mine_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(anki.notes) == 2, timeout=10_000)
        qtbot.waitUntil(lambda: log.hint.text() == "Added to Hayai.", timeout=5000)
        word = [n for n in anki.notes.values() if n["fields"]["Word"] == "読む"]
        assert word and word[0]["fields"]["Sentence"] == "本を<b>読む</b>"
        assert word[0]["fields"]["Source"].startswith("Hayai · box · ")
        assert len(anki.media()) == 2  # the line's thumbnail from the history
        log.close()

"""What the user typed is kept: a correction in the overlay, once committed (hidden or closed, the
next read, Copy, Mine), goes to the history (the model's text stays in `ocr_text`), the reading
log's line, the WebSocket and text-file outputs, and Anki."""

from __future__ import annotations

import json
import socket
import sqlite3
import sys
import threading
from pathlib import Path

import pytest
import wired_app
from appcore_fakes import FakeRecognizer, FakeSession, make_selection
from PySide6.QtCore import Qt
from websockets.sync.client import connect

from app.history import History
from app.settings import Settings

env, make_app = wired_app.env, wired_app.make_app

pytestmark = pytest.mark.gui

OLD_SCHEMA = """
CREATE TABLE captures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created REAL NOT NULL,
    screen TEXT NOT NULL DEFAULT '',
    box TEXT NOT NULL DEFAULT '[]',
    text TEXT NOT NULL,
    thumbnail BLOB
);
"""


def test_an_older_database_gains_the_ocr_text_column_and_loses_nothing(tmp_path):
    path = tmp_path / "history.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA)
    rows = [
        (1000.0 + i, "DP-1", json.dumps([i, 2, 30, 40]), f"行{i}", b"\x89PNG%d" % i)
        for i in range(3)
    ]
    db.executemany(
        "INSERT INTO captures (created, screen, box, text, thumbnail) VALUES (?, ?, ?, ?, ?)", rows
    )
    db.commit()
    db.close()
    history = History(path)
    entries = list(reversed(history.entries()))
    assert [(e.created, e.screen, list(e.box), e.text, e.thumbnail) for e in entries] == [
        (c, s, json.loads(b), t, th) for c, s, b, t, th in rows
    ]
    assert [e.ocr_text for e in entries] == ["行0", "行1", "行2"]  # all there was of the read
    assert history.moved_aside is None
    # a new read keeps both; a correction changes the text only
    entry_id = history.add("今日は天気", "DP-1", (0, 0, 5, 5)).id
    history.update_text(entry_id, "今日は天気だ")
    entry = history.get(entry_id)
    assert (entry.text, entry.ocr_text) == ("今日は天気だ", "今日は天気")
    history.close()
    reopened = History(path)  # migrated once; opening again changes nothing
    entry = reopened.entries()[0]
    assert (entry.text, entry.ocr_text) == ("今日は天気だ", "今日は天気")
    assert reopened.count() == 4
    reopened.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read(app, recognizer, qtbot, text: str) -> None:
    recognizer.text = text
    app.reads.last_latency = None
    app.handle_command("capture")
    FakeSession.started[-1].select(make_selection())
    qtbot.waitUntil(lambda: app.reads.last_latency is not None, timeout=5000)


def type_into_overlay(app, qtbot, extra: str) -> None:
    """What an input method does at the cursor (QTest cannot type kana)."""
    editor = app.overlay.editor
    editor.setFocus()
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    editor.insertPlainText(extra)


def test_a_correction_reaches_the_history_the_log_and_the_outputs_once_committed(
    make_app, qtbot, tmp_path
):
    port = free_port()
    settings = Settings()
    settings.update(
        {
            "reading/websocket": True,
            "reading/websocket_address": f"127.0.0.1:{port}",
            "reading/websocket_format": "json",
            "reading/log_file": str(tmp_path / "reads.txt"),
            "output/auto_copy": False,
        }
    )
    recognizer = FakeRecognizer("今日は天気")
    app = make_app(recognizer, settings=settings)
    with connect(f"ws://127.0.0.1:{port}") as client:
        received = []
        threading.Thread(target=lambda: received.extend(client), daemon=True).start()
        qtbot.waitUntil(lambda: app.channels.websocket.client_count == 1, timeout=5000)
        read(app, recognizer, qtbot, "今日は天気")
        log = app.windows.show_log()
        qtbot.waitUntil(lambda: not log.loading, timeout=5000)  # the history thread answered
        assert log.entries[-1].text == "今日は天気"
        type_into_overlay(app, qtbot, "だ")
        assert app.overlay.text() == "今日は天気だ"
        qtbot.wait(300)
        assert len(received) == 1  # typing alone commits nothing: nothing half-typed goes out
        entry = app.history.entries()[0]
        assert entry.text == "今日は天気"
        app.overlay.copy_text()  # Copy commits the correction
        qtbot.waitUntil(lambda: len(received) == 2, timeout=5000)
        entry = app.history.entries()[0]
        assert (entry.text, entry.ocr_text) == ("今日は天気だ", "今日は天気")
        assert log.entries[-1].text == "今日は天気だ" and "今日は天気だ" in log.list.item(0).text()
        frame = json.loads(received[1])
        assert frame["sentence"] == "今日は天気だ" and frame["source"] == "edit"
        app.overlay.close()  # the same text again: not sent twice
        # a second correction, committed by the next read
        read(app, recognizer, qtbot, "二つ目")
        qtbot.waitUntil(lambda: len(received) == 3, timeout=5000)
        type_into_overlay(app, qtbot, "です")
        read(app, recognizer, qtbot, "三つ目")
        qtbot.waitUntil(lambda: len(received) == 5, timeout=5000)
        assert [json.loads(m)["sentence"] for m in received] == [
            "今日は天気",
            "今日は天気だ",
            "二つ目",
            "二つ目です",
            "三つ目",
        ]
        texts = [(e.text, e.ocr_text) for e in app.history.entries()]
        assert texts == [
            ("三つ目", "三つ目"),
            ("二つ目です", "二つ目"),
            ("今日は天気だ", "今日は天気"),
        ]
        log.close()
    lines = (tmp_path / "reads.txt").read_text(encoding="utf-8").splitlines()
    assert lines == ["今日は天気", "今日は天気だ", "二つ目", "二つ目です", "三つ目"]
    app.channels.close()


def test_a_correction_made_before_the_history_row_exists_is_the_rows_text(make_app, qtbot):
    app = make_app(FakeRecognizer("誤字"))

    def edit_at_once(_request_id, _result):  # right after the text is shown, before its row
        app.overlay.editor.moveCursor(app.overlay.editor.textCursor().MoveOperation.End)
        app.overlay.editor.insertPlainText("なし")
        app.overlay.hide()

    app.worker.finished.connect(edit_at_once)  # runs after the app's own slot
    app.handle_command("capture")
    FakeSession.started[-1].select(make_selection())
    qtbot.waitUntil(lambda: app.history.count() == 1, timeout=5000)
    entry = app.history.entries()[0]
    assert (entry.text, entry.ocr_text) == ("誤字なし", "誤字")


def test_mine_makes_the_card_of_the_corrected_line(make_app, qtbot):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "anki"))
    from fake_ankiconnect import FakeAnki

    with FakeAnki() as anki:
        app = make_app(FakeRecognizer("本お読む"))
        app.settings.set("anki/url", anki.url)
        app.handle_command("capture")
        FakeSession.started[-1].select(make_selection())
        qtbot.waitUntil(lambda: app.reads.shown is not None, timeout=5000)
        qtbot.waitUntil(lambda: app.history.count() == 1, timeout=5000)
        editor = app.overlay.editor
        cursor = editor.textCursor()
        cursor.setPosition(1)
        cursor.setPosition(2, cursor.MoveMode.KeepAnchor)
        editor.setTextCursor(cursor)
        editor.insertPlainText("を")  # replaces the selected お
        qtbot.mouseClick(app.overlay.mine_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(anki.notes) == 1, timeout=10_000)
        (note,) = anki.notes.values()
        assert note["fields"]["Word"] == "本を読む"
        entry = app.history.entries()[0]  # Mine committed it
        assert (entry.text, entry.ocr_text) == ("本を読む", "本お読む")


# --- a failed Mine is read, not glimpsed (issue #20, item 8) -------------------------------------


def test_a_failed_mine_shows_its_whole_message_until_dismissed(make_app, qtbot):
    port = free_port()  # nothing listens there: "Anki is not running, or … not installed …"
    app = make_app(FakeRecognizer("本を読む"))
    app.settings.set("anki/url", f"http://127.0.0.1:{port}")
    app.handle_command("capture")
    FakeSession.started[-1].select(make_selection())
    qtbot.waitUntil(lambda: app.reads.shown is not None, timeout=5000)
    overlay = app.overlay
    before = overlay.height()
    qtbot.mouseClick(overlay.mine_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: overlay.note.isVisible(), timeout=10_000)
    message = overlay.note.text()
    assert message == (
        "Anki is not running, or the AnkiConnect add-on is not installed: nothing answers at "
        f"http://127.0.0.1:{port}."
    )
    qtbot.wait(2500)  # the old status-line flash was gone after 1.2 s
    assert overlay.note.isVisible() and overlay.note.text() == message
    label = overlay.note.label  # whole: wrapped, and the card grew to hold every line
    assert label.height() >= label.heightForWidth(label.width())
    assert overlay.height() > before
    bottom = label.mapTo(overlay, label.rect().bottomLeft()).y()
    assert bottom <= overlay.height()
    qtbot.mouseClick(overlay.note.close_button, Qt.MouseButton.LeftButton)
    assert not overlay.note.isVisible()
    qtbot.waitUntil(lambda: overlay.height() == before, timeout=2000)
    # the reading log shows the same failure the same way
    log = app.windows.show_log()
    qtbot.waitUntil(lambda: log.list.count() == 1, timeout=5000)
    log.list.setCurrentRow(0)
    qtbot.mouseClick(log.mine_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: log.note.isVisible(), timeout=10_000)
    assert log.note.text() == message
    qtbot.wait(3500)  # the hint's note timer is 3 s
    assert log.note.isVisible()
    log.close()


# --- typing over furigana (issue #40, item 4) ------------------------------------------------------

READINGS = {"今日": "きょう", "天気": "てんき"}


def ruby(text: str) -> list[tuple[str, str | None]]:
    """A furigana provider that knows two words (the dictionary's, for these texts)."""
    pairs, i = [], 0
    while i < len(text):
        word = next((w for w in READINGS if text.startswith(w, i)), text[i])
        pairs.append((word, READINGS.get(word)))
        i += len(word)
    return pairs


def test_typing_with_furigana_on_lands_in_the_text_and_the_readings_come_back(make_app, qtbot):
    app = make_app(FakeRecognizer("今日は天気"))
    overlay = app.overlay
    overlay.configure("Noto Sans CJK JP", 18, False, furigana_provider=ruby)
    app.handle_command("capture")
    FakeSession.started[-1].select(make_selection())
    qtbot.waitUntil(lambda: overlay.text() == "今日は天気", timeout=5000)
    qtbot.waitUntil(lambda: app.history.count() == 1, timeout=5000)
    qtbot.mouseClick(overlay.furigana_button, Qt.MouseButton.LeftButton)
    assert [m.text for m in overlay.painted.ruby_marks] == ["きょう", "てんき"]
    assert overlay.stack.currentWidget() is not overlay.editor
    overlay.activateWindow()
    qtbot.keyClick(overlay.painted, "x")  # the first key, over the readings
    assert overlay.text() == "今日は天気x"  # it landed
    assert overlay.stack.currentWidget() is overlay.editor and overlay.editor.hasFocus()
    qtbot.keyClick(overlay.editor, Qt.Key.Key_Backspace)  # the next ones go on in the editor
    overlay.editor.insertPlainText("だ")  # what an input method does (QTest cannot type kana)
    assert overlay.text() == "今日は天気だ"
    overlay.close_button.setFocus()  # done: the keyboard went elsewhere
    qtbot.waitUntil(lambda: overlay.stack.currentWidget() is not overlay.editor)
    assert overlay.furigana_button.isChecked()  # readings again, of the corrected text
    assert [m.text for m in overlay.painted.ruby_marks] == ["きょう", "てんき"]
    assert [c.char for c in overlay.painted.cells] == list("今日は天気だ")
    overlay.close()  # and the correction is kept
    qtbot.waitUntil(lambda: app.history.entries()[0].text == "今日は天気だ", timeout=5000)
    assert app.history.entries()[0].ocr_text == "今日は天気"

"""The capture history: SQLite store (newest first, last N, search, delete, clear) and its window."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.history import History
from app.ui.history_window import HistoryWindow


@pytest.fixture
def history(tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    h = History(limit=5)
    yield h
    h.close()


def test_stored_under_hayai_config_dir(history, tmp_path):
    assert history.path == tmp_path / "cfg" / "history.sqlite3"


def test_newest_first_with_box_screen_thumbnail(history):
    history.add("一", "DP-1", (1, 2, 3, 4), b"\x89PNG fake", created=100.0)
    history.add("二", "HDMI-1", (5, 6, 7, 8), None, created=200.0)
    entries = history.entries()
    assert [e.text for e in entries] == ["二", "一"]
    assert entries[1].box == (1, 2, 3, 4) and entries[1].screen == "DP-1"
    assert entries[1].thumbnail == b"\x89PNG fake" and entries[0].thumbnail is None


def test_only_the_last_n_are_kept(history):
    for i in range(8):
        history.add(f"text {i}", created=float(i))
    assert history.count() == 5
    assert [e.text for e in history.entries()] == [f"text {i}" for i in (7, 6, 5, 4, 3)]
    history.set_limit(2)
    assert [e.text for e in history.entries()] == ["text 7", "text 6"]


def test_search_delete_clear(history):
    a = history.add("今日はいい天気", created=1.0)
    history.add("100% sure_thing", created=2.0)
    history.add("明日も天気", created=3.0)
    assert [e.text for e in history.entries("天気")] == ["明日も天気", "今日はいい天気"]
    assert [e.text for e in history.entries("0%")] == ["100% sure_thing"]  # % is not a wildcard
    assert history.entries("r_") == []  # neither is _ (as a wildcard it would match "re")
    history.delete(a)
    assert history.get(a) is None and history.count() == 2
    history.clear()
    assert history.count() == 0


def test_survives_a_restart(tmp_path):
    path = tmp_path / "h.sqlite3"
    h = History(path)
    h.add("残る")
    h.close()
    again = History(path)
    assert [e.text for e in again.entries()] == ["残る"]
    again.close()


@pytest.mark.gui
def test_window_lists_searches_copies_deletes_and_clears(history, qtbot):
    history.add("今日はいい天気ですね。", "DP-1", (10, 20, 300, 40), created=1.0)
    history.add("第三話", "DP-1", (0, 0, 50, 200), created=2.0)
    window = HistoryWindow(history)
    qtbot.addWidget(window)
    window.show()
    assert window.list.count() == 2
    assert window.list.item(0).text().startswith("第三話")
    window.search.setText("天気")
    assert window.list.count() == 1
    QGuiApplication.clipboard().setText("")
    with qtbot.waitSignal(window.copied, timeout=1000):
        qtbot.mouseClick(window.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "今日はいい天気ですね。"
    window.search.setText("")
    window.list.setCurrentRow(0)
    qtbot.mouseClick(window.delete_button, Qt.MouseButton.LeftButton)
    assert [e.text for e in history.entries()] == ["今日はいい天気ですね。"]
    window.clear()
    assert window.list.count() == 0 and not window.copy_button.isEnabled()

"""The capture history: SQLite store (newest first, last N, search, delete, clear) and its window;
a file another program holds locked, or a full disk, loses no read and never stops the app."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
import wired_app
from appcore_fakes import FakeRecognizer
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.history import History
from app.ui.history_window import HistoryWindow

env, make_app, select = wired_app.env, wired_app.make_app, wired_app.select


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
    history.delete(a.id)
    assert history.get(a.id) is None and history.count() == 2
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
    qtbot.waitUntil(lambda: window.list.count() == 2, timeout=5000)
    assert window.list.item(0).text().startswith("第三話")
    window.search.setText("天気")
    qtbot.waitUntil(lambda: window.list.count() == 1, timeout=5000)
    QGuiApplication.clipboard().setText("")
    with qtbot.waitSignal(window.copied, timeout=1000):
        qtbot.mouseClick(window.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "今日はいい天気ですね。"
    window.search.setText("")
    qtbot.waitUntil(lambda: window.list.count() == 2, timeout=5000)
    window.list.setCurrentRow(0)
    qtbot.mouseClick(window.delete_button, Qt.MouseButton.LeftButton)
    assert [e.text for e in history.entries()] == ["今日はいい天気ですね。"]
    qtbot.waitUntil(lambda: window.list.count() == 1, timeout=5000)
    window.clear()
    qtbot.waitUntil(lambda: window.list.count() == 0, timeout=5000)
    assert not window.copy_button.isEnabled() and not window.clear_button.isEnabled()


# --- a file locked by another program, a full disk (issue #39, items 2 and 3) ---------------------

HOLD_LOCK = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
db.execute("ROLLBACK")
"""


class Locker:
    """Another program (an sqlite shell, a backup tool) holding the file locked until `release`."""

    def __init__(self, path: Path):
        self.path = path
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLD_LOCK, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "locked"

    def holds(self) -> bool:
        """Whether the lock is still held: a writer that does not wait is refused."""
        probe = sqlite3.connect(self.path, timeout=0, isolation_level=None)
        try:
            probe.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            return "locked" in str(exc)
        finally:
            probe.close()
        return False

    def release(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write("\n")
            self.proc.stdin.close()
            self.proc.wait(10)


@contextmanager
def locked(path: Path):
    locker = Locker(path)
    try:
        yield locker
    finally:
        locker.release()


def saved(path: Path) -> list[str]:
    """The texts in the file, newest first, as another program reads them."""
    db = sqlite3.connect(path, timeout=5)
    try:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'captures'").fetchone():
            return []  # not made yet
        return [
            r[0] for r in db.execute("SELECT text FROM captures ORDER BY created DESC, id DESC")
        ]
    finally:
        db.close()


@pytest.fixture
def small_disk(tmp_path):
    """A file system of 256 KiB of its own (tmpfs: mounting it needs root, as CI runs)."""
    where = tmp_path / "disk"
    where.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(where)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("a small disk is a tmpfs, and mounting one needs root")
    yield where
    subprocess.run(["umount", "-l", str(where)], check=True)


def fill(disk: Path) -> Path:
    """Take every free byte of `disk`; remove the file returned to make room again."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        with pytest.raises(OSError) as full:
            while True:
                f.write(b"\0" * 4096)
    assert full.value.errno == errno.ENOSPC
    return filler


@pytest.mark.gui
def test_a_history_locked_at_start_is_waited_for_and_kept(tmp_path, qtbot):
    path = tmp_path / "history.sqlite3"
    before = History(path)
    before.add("昨日の行", created=1.0)
    before.close()
    notices = []
    with locked(path) as other:
        history = History(path)
        history.notice.connect(lambda *notice: notices.append(notice))
        history.start()
        history.add("今日の行")  # queued: the call never waits for the lock
        qtbot.waitUntil(lambda: bool(notices), timeout=10_000)  # told while it is locked
        history.add("次の行")  # more reads meanwhile, more tries to save: told once
        assert [e.text for e in history.entries()] == ["次の行", "今日の行"]  # kept, and shown
        assert other.holds()
        assert history.moved_aside is None and not list(tmp_path.glob("*.corrupt-*"))
    qtbot.waitUntil(lambda: saved(path) == ["次の行", "今日の行", "昨日の行"], timeout=10_000)
    qtbot.waitUntil(lambda: len(notices) == 2, timeout=5000)
    (title, message, error), (_, again, fine) = notices
    assert error and title == "History not saved"
    assert message == (
        f"History can't be saved: another program is using the history file {path}. "
        "Your reads are kept and will be saved as soon as it lets go."
    )
    assert not fine and "saved again" in again
    assert [e.text for e in history.entries()] == ["次の行", "今日の行", "昨日の行"]
    history.close()


@pytest.mark.gui
def test_a_full_disk_keeps_the_reads_and_saves_them_when_there_is_room(small_disk, qtbot):
    path = small_disk / "history.sqlite3"
    history = History(path)
    notices = []
    history.notice.connect(lambda *notice: notices.append(notice))
    history.start()
    history.add("前の行")
    qtbot.waitUntil(lambda: saved(path) == ["前の行"], timeout=5000)
    filler = fill(small_disk)
    reads = [f"読み{i}" for i in range(6)]  # six reads in a row, each with a thumbnail
    for text in reads:
        history.add(text, thumbnail=os.urandom(3000))
    qtbot.waitUntil(lambda: bool(notices), timeout=10_000)
    assert notices == [
        (
            "History not saved",
            "History can't be saved: the disk is full. Your reads are kept and will be saved "
            "when there is room.",
            True,
        )
    ]
    assert saved(path) == ["前の行"]
    assert [e.text for e in history.entries()] == [*reversed(reads), "前の行"]
    filler.unlink()
    qtbot.waitUntil(lambda: saved(path) == [*reversed(reads), "前の行"], timeout=10_000)
    qtbot.waitUntil(lambda: len(notices) == 2, timeout=5000)
    assert notices[1][2] is False  # and once it is saved again, that is said too
    history.close()


@pytest.mark.gui
def test_a_long_wait_keeps_every_text_and_a_bounded_share_of_thumbnails(
    tmp_path, qtbot, monkeypatch, caplog
):
    import app.history as history_module

    monkeypatch.setattr(history_module, "MAX_QUEUED_THUMBNAILS", 10_000, raising=False)
    path = tmp_path / "history.sqlite3"
    History(path).close()
    history = History(path)
    with locked(path):
        history.start()
        # WHEN many reads with thumbnails come while the file cannot be saved
        reads = [f"読み{i}" for i in range(10)]
        for text in reads:
            history.add(text, thumbnail=os.urandom(3000))
        # THEN the thumbnails waiting in memory stay within the bound, every text is kept ...
        queued = [c[1] for c in history._changes if c[0] == "add"]
        assert [e.text for e in queued] == reads
        assert sum(len(e.thumbnail or b"") for e in queued) <= 10_000
        assert [e.thumbnail is not None for e in queued] == [True] * 3 + [False] * 7
        # ... and the log says so once
        told = [r for r in caplog.records if "without a thumbnail" in r.getMessage()]
        assert len(told) == 1
    # ... and when the file frees, every read is saved, the first with their thumbnails
    qtbot.waitUntil(lambda: saved(path) == list(reversed(reads)), timeout=10_000)
    history.close()
    db = sqlite3.connect(path)
    thumbs = [r[0] is not None for r in db.execute("SELECT thumbnail FROM captures ORDER BY id")]
    db.close()
    assert thumbs == [True] * 3 + [False] * 7


@pytest.mark.gui
@pytest.mark.parametrize(
    "error",
    [sqlite3.IntegrityError("NOT NULL constraint failed: captures.text"), TypeError("a bug")],
    ids=["integrity", "bug"],
)
def test_a_change_that_can_never_be_saved_is_left_out_once_and_the_rest_saved(
    tmp_path, qtbot, monkeypatch, caplog, error
):
    real = History._apply

    def apply(self, db, change):
        if change[0] == "add" and change[1].text == "壊れた行":
            raise error
        return real(self, db, change)

    monkeypatch.setattr(History, "_apply", apply)
    path = tmp_path / "history.sqlite3"
    history = History(path)
    notices = []
    history.notice.connect(lambda *notice: notices.append(notice))
    history.start()
    # WHEN a change fails by itself between two that can be saved
    for text in ("一つ目", "壊れた行", "三つ目"):
        history.add(text)
    # THEN the others are saved, in order, and the thread goes on
    qtbot.waitUntil(lambda: saved(path) == ["三つ目", "一つ目"], timeout=10_000)
    history.add("四つ目")
    qtbot.waitUntil(lambda: saved(path) == ["四つ目", "三つ目", "一つ目"], timeout=10_000)
    history.close()
    # ... it was logged once, with its traceback, and the user told once, in words
    logged = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(logged) == 1 and logged[0].exc_info is not None
    assert "a new read could not be saved after 3 tries" in logged[0].getMessage()
    # (the notice crosses from the history's thread in an event: a busy machine may bring it late)
    qtbot.waitUntil(lambda: bool(notices), timeout=5_000)
    assert notices == [
        (
            "History: a change not saved",
            f"Hayai could not save a new read to the history ({type(error).__name__}: {error}), "
            "so it was left out; everything else is saved. Hayai's log has the details "
            "(hayai -v).",
            True,
        )
    ]


def test_a_damaged_file_is_still_moved_aside(tmp_path):
    damaged = tmp_path / "damaged.sqlite3"
    damaged.write_bytes(b"SQLite format 3\x00" + os.urandom(3000))
    history = History(damaged)
    assert history.count() == 0 and history.moved_aside is not None
    history.close()


def test_reads_of_a_file_moved_aside_mid_session_never_touch_the_new_ones(tmp_path, qtbot):
    path = tmp_path / "history.sqlite3"
    history = History(path)
    old = history.add("前のファイルの行", created=1.0)
    qtbot.waitUntil(lambda: saved(path) == ["前のファイルの行"], timeout=5000)  # its row 1
    # WHEN the file is damaged while the app runs: it is moved aside at the next save
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4096)
    history.add("新しい行", created=2.0)
    qtbot.waitUntil(lambda: history.moved_aside is not None, timeout=5000)
    qtbot.waitUntil(lambda: saved(path) == ["新しい行"], timeout=5000)  # the new file's row 1
    # THEN a correction or a deletion of the read kept in the old file never lands on the new row
    history.update_text(old.id, "直した行")
    history.delete(old.id)
    history.close()  # everything queued is saved
    assert saved(path) == ["新しい行"]


@pytest.mark.gui
def test_a_locked_history_never_stops_the_app_and_loses_no_read(make_app, qtbot, tmp_path):
    """The GUI thread never waits on the file: reads go on, the History window opens and shows
    them, the user is told once; when the other program lets go, every read is saved."""
    path = tmp_path / "locked.sqlite3"
    History(path).close()
    recognizer = FakeRecognizer("一つ目")
    with locked(path) as other:
        app = make_app(recognizer, history=History(path))
        told = []
        app.history.notice.connect(lambda *notice: told.append(notice))
        for text in ("一つ目", "二つ目", "三つ目"):
            recognizer.text = text
            select(app, qtbot)  # the text is painted, and its row added, while the file is locked
        window = app.windows.show_history()
        qtbot.waitUntil(lambda: window.list.count() == 3, timeout=10_000)
        assert window.list.item(0).text().startswith("三つ目")
        qtbot.waitUntil(lambda: bool(told), timeout=10_000)
        assert other.holds()  # everything above happened while the other program held the file
    qtbot.waitUntil(lambda: saved(path) == ["三つ目", "二つ目", "一つ目"], timeout=10_000)
    qtbot.waitUntil(lambda: len(told) == 2, timeout=5000)
    assert [error for _, _, error in told] == [True, False]
    assert "another program is using" in told[0][1] and "Your reads are kept" in told[0][1]
    window.close()


@pytest.mark.gui
def test_a_full_disk_in_the_app_loses_no_read_and_says_so_once(make_app, qtbot, small_disk):
    path = small_disk / "history.sqlite3"
    recognizer = FakeRecognizer("前の行")
    app = make_app(recognizer, history=History(path))
    told = []
    app.history.notice.connect(lambda *notice: told.append(notice))
    select(app, qtbot)
    qtbot.waitUntil(lambda: saved(path) == ["前の行"], timeout=5000)
    filler = fill(small_disk)
    reads = [f"読み{i}" for i in range(6)]
    for text in reads:
        recognizer.text = text
        select(app, qtbot)
    qtbot.waitUntil(lambda: bool(told), timeout=10_000)
    window = app.windows.show_history()
    qtbot.waitUntil(lambda: window.list.count() == 7, timeout=10_000)  # nothing dropped
    filler.unlink()
    qtbot.waitUntil(lambda: saved(path) == [*reversed(reads), "前の行"], timeout=10_000)
    qtbot.waitUntil(lambda: len(told) == 2, timeout=5000)
    assert told[0] == (
        "History not saved",
        "History can't be saved: the disk is full. Your reads are kept and will be saved when "
        "there is room.",
        True,
    )
    assert told[1][2] is False
    window.close()

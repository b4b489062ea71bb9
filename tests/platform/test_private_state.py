"""Per-user state: private modes (0600 files in 0700 folders, fixed up, whatever the umask) and a
history file that cannot be read (corrupt, truncated, a folder) moved aside with the app still starting."""

from __future__ import annotations

import os
import sqlite3
import stat
import sys
from pathlib import Path

import pytest
from appcore_fakes import FakeRecognizer, FakeSession, factory_for, fake_captures
from PySide6.QtCore import QObject, Signal

from app.history import History
from app.platform.private_files import move_aside, private_dir, private_file


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask_0():
    """The loosest umask: anything created keeps 0666/0777 unless the code sets its own mode."""
    old = os.umask(0)
    yield
    os.umask(old)


@pytest.fixture
def config(tmp_path, monkeypatch):
    folder = tmp_path / "cfg"
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(folder))
    return folder


def test_private_dir_and_file_whatever_the_umask(tmp_path, umask_0):
    folder = private_dir(tmp_path / "a" / "b")
    assert mode(folder) == 0o700
    assert mode(private_file(folder / "f")) == 0o600
    os.umask(0o777)  # the other extreme: mkdir/open would give 000
    assert mode(private_dir(tmp_path / "c")) == 0o700
    assert mode(private_file(tmp_path / "c" / "g")) == 0o600


def test_existing_loose_modes_are_fixed(tmp_path):
    folder = tmp_path / "state"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    f = folder / "history.sqlite3"
    f.write_bytes(b"")
    os.chmod(f, 0o644)
    private_dir(folder)
    private_file(f)
    assert (mode(folder), mode(f)) == (0o700, 0o600)


def test_history_settings_lock_socket_and_dictionary_folder_are_private(
    qapp, config, umask_0, monkeypatch
):
    from app.dictionary.index import state_dir
    from app.platform import single_instance
    from app.settings import Settings, data_dir

    # GIVEN state left by an older version, readable by everyone
    config.mkdir(mode=0o755)
    os.chmod(config, 0o755)
    old = sqlite3.connect(config / "history.sqlite3")
    old.close()
    os.chmod(config / "history.sqlite3", 0o644)
    (config / "settings.ini").write_text("[output]\nauto_copy=true\n")
    os.chmod(config / "settings.ini", 0o644)
    # WHEN the app's state is opened and written
    history = History()
    history.add("秘密", thumbnail=b"x")
    settings = Settings()
    settings.set("history/length", 42)
    lock = single_instance.lock_file()
    assert lock.tryLock(0)
    from app.platform.private_files import tighten_file

    tighten_file(lock.fileName())  # what the launcher does once it holds the lock
    server = single_instance.InstanceServer()
    server.listen()
    try:
        # THEN every file is 0600 (the socket: no access for others) in 0700 folders
        assert mode(config) == 0o700 and mode(data_dir()) == 0o700
        assert mode(history.path) == 0o600
        assert mode(config / "settings.ini") == 0o600
        assert mode(lock.fileName()) == 0o600
        assert mode(single_instance.server_name()) & 0o077 == 0
        from app.dictionary import index

        def no_source():
            raise index.IndexBuildError("no source data in this test")

        monkeypatch.setattr(index, "jamdict_db_path", no_source)  # stop right after the mkdir
        with pytest.raises(index.IndexBuildError):
            index.build_index(state_dir() / "index.sqlite3")
        assert mode(state_dir()) == 0o700
    finally:
        server.close()
        lock.unlock()
        history.close()


def test_the_launcher_makes_its_lock_private(config, umask_0):
    import subprocess

    repo = Path(__file__).resolve().parents[2]
    code = (
        "import os, sys, stat\n"
        "from app import launcher\n"
        "launcher.run_app = lambda *a, **k: print(oct(stat.S_IMODE(os.stat("
        "os.path.join(os.environ['HAYAI_CONFIG_DIR'], 'instance.lock')).st_mode))) or 0\n"
        "from app.cli import build_parser\n"
        "raise SystemExit(launcher.main(build_parser().parse_args([])))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=str(repo)),
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0o600"


def test_debug_dir_captures_are_private(tmp_path, umask_0):
    from PIL import Image

    from app.diagnostics import DebugDir

    debug = DebugDir(tmp_path / "debug")
    record = debug.save(Image.new("RGB", (8, 8)), (0, 0, 8, 8), "s", "t", 1.0, 2.0)
    assert mode(tmp_path / "debug") == 0o700
    assert mode(record) == 0o600 and mode(record.with_suffix(".png")) == 0o600


def _damaged(kind: str, path: Path) -> None:
    if kind == "garbage":
        path.write_bytes(os.urandom(5000))
    elif kind == "truncated":
        db = sqlite3.connect(path)
        db.executescript(
            "CREATE TABLE t (x TEXT); "
            + "".join(f"INSERT INTO t VALUES ('{'x' * 500}');" for _ in range(200))
        )
        db.close()
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
    elif kind == "folder":
        path.mkdir()
        (path / "inside").write_text("x")
    elif kind == "other schema":
        db = sqlite3.connect(path)
        db.executescript("CREATE TABLE captures (id INTEGER PRIMARY KEY, blob BLOB);")
        db.close()


@pytest.mark.parametrize("kind", ["garbage", "truncated", "folder", "other schema"])
def test_an_unreadable_history_is_moved_aside_and_an_empty_one_starts(config, kind):
    config.mkdir()
    path = config / "history.sqlite3"
    _damaged(kind, path)
    history = History()
    try:
        assert history.count() == 0  # answered once the file is opened
        assert history.moved_aside is not None and history.moved_aside.name.startswith(
            "history.sqlite3.corrupt-"
        )
        assert history.moved_aside.exists()  # nothing lost: the old file is kept for the user
        history.add("new")
        assert [e.text for e in history.entries()] == ["new"]
        assert path.is_file()
    finally:
        history.close()


def test_a_healthy_history_is_not_moved(config):
    History().close()
    again = History()
    assert again.count() == 0 and again.moved_aside is None
    again.close()


def test_move_aside_never_overwrites(tmp_path):
    first = tmp_path / "f"
    first.write_text("1")
    a = move_aside(first)
    first.write_text("2")
    b = move_aside(first)
    assert a != b and a.read_text() == "1" and b.read_text() == "2"


class FakeHotkeys(QObject):
    triggered = Signal(str)

    def set_combos(self, combos):
        pass

    def start(self):
        pass

    def stop(self):
        pass


@pytest.mark.gui
def test_the_app_starts_with_a_corrupt_history_and_tells_the_user(qtbot, config, monkeypatch):
    from app.application import Application, Parts
    from app.engines import local
    from app.engines.worker import OcrWorker
    from app.flows.dictionary_hook import DictionaryHook
    from app.settings import Settings

    config.mkdir()
    (config / "history.sqlite3").write_bytes(b"SQLite format 3\x00" + os.urandom(3000))
    monkeypatch.setattr(DictionaryHook, "make_controller", lambda self: None)
    told = []
    monkeypatch.setattr(
        Application, "notify", lambda self, title, message, error=False: told.append(title)
    )
    settings = Settings()
    worker = OcrWorker(local.options(settings), factory=factory_for(FakeRecognizer()))
    app = Application(
        settings,
        Parts(
            worker=worker,
            hotkeys=FakeHotkeys(),
            grab_screens=lambda: fake_captures(),
            selection_factory=FakeSession,
        ),
        use_tray=False,
    )
    try:
        with qtbot.waitSignal(worker.ready, timeout=5000):
            app.start()
        qtbot.waitUntil(lambda: "History reset" in told, timeout=5000)  # from the history thread
        assert app.history is not None and app.history.count() == 0
        assert list(config.glob("history.sqlite3.corrupt-*"))
    finally:
        worker.stop()
        app.overlay.close()
        app.history.close()
        qtbot.wait(50)


@pytest.mark.gui
def test_history_thumbnails_go_through_the_safe_loader(qtbot, config):
    """A history file edited by someone else: thumbnails that are PostScript or declare a huge size
    are not decoded (no icon); a real one is shown."""
    import io

    from hostile_files import eps_payload, png_header_only
    from PIL import Image

    from app.ui.history_window import HistoryWindow

    good = io.BytesIO()
    Image.new("RGB", (96, 40), (200, 10, 10)).save(good, "PNG")
    history = History()
    marker = config / "eps-ran"
    history.add("eps", thumbnail=eps_payload(marker), created=1.0)
    history.add("huge", thumbnail=png_header_only(4000, 4000), created=2.0)
    history.add("good", thumbnail=good.getvalue(), created=3.0)
    window = HistoryWindow(history)
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: not window.loading, timeout=5000)
    try:
        from PySide6.QtGui import QTextDocumentFragment

        def shown(item) -> str:  # the tooltip's text (outside text is escaped rich text there)
            return QTextDocumentFragment.fromHtml(item.toolTip()).toPlainText()

        icons = {shown(window.list.item(i)): window.list.item(i).icon() for i in range(3)}
        assert not icons["good"].isNull()
        assert icons["eps"].isNull() and icons["huge"].isNull()
        assert not marker.exists()
    finally:
        history.close()


def test_rows_edited_by_hand_are_read_without_crashing(config):
    history = History()
    history.add("ok", box=(1, 2, 3, 4), created=5.0)
    history.close()
    with sqlite3.connect(history.path) as db:
        db.execute(
            "INSERT INTO captures (created, screen, box, text, thumbnail) VALUES (?, ?, ?, ?, ?)",
            ("yesterday", 7, "{not json", "bad", "not bytes"),
        )
    db.close()
    history = History()
    try:
        bad, good = sorted(history.entries(), key=lambda e: e.text)
        assert (bad.created, bad.screen, bad.box, bad.thumbnail) == (0.0, "7", (0, 0, 0, 0), None)
        assert good.box == (1, 2, 3, 4) and history.get(bad.id).text == "bad"
    finally:
        history.close()

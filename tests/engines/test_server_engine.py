"""The app reading through a Hayai server (Settings → Engine → a Hayai server): the same overlay, timings
and history as with the local model; an unreachable or hanging server is a clear message, never a
blocked GUI thread, and the app reads again once the server is back."""

from __future__ import annotations

import socket

import pytest
from appcore_fakes import FakeSession, fake_captures, make_selection
from PySide6.QtCore import QTimer
from serve_support import GatedRecognizer, serving
from wired_app import FakeHotkeys, select

from app import engines
from app.application import Application, Parts
from app.engines.worker import OcrWorker
from app.flows.dictionary_hook import DictionaryHook
from app.history import History
from app.platform.qt_images import qimage_to_pil
from app.serve.api import ServerConfig, create_app
from app.serve.batcher import Batcher, Schedule
from app.settings import Settings

pytestmark = pytest.mark.gui


@pytest.fixture
def server_app(qtbot, tmp_path, monkeypatch):
    """`make(url, key)`: the real Application whose settings say "read with a Hayai server" at url."""
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setattr(DictionaryHook, "make_controller", lambda self: None)
    monkeypatch.setattr("app.flows.capture.REPAINT_MS", 0)  # stand-in grabbers: nothing to repaint
    FakeSession.started.clear()
    apps = []

    def make(url: str, key: str = ""):
        settings = Settings()
        settings.update(
            {"engine/backend": "server", "engine/server_url": url, "engine/server_key": key}
        )
        parts = Parts(
            worker=OcrWorker(engines.options(settings)),  # the real backends (app/engines/)
            history=History(limit=50),
            hotkeys=FakeHotkeys(),
            grab_screens=lambda: fake_captures(),
            grab_region=lambda screen, box: make_selection(box=box).image,
            selection_factory=FakeSession,
        )
        app = Application(settings, parts, use_tray=False)
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.worker.stop()
        app.overlay.close()
        app.toast.close()
        app.history.close()


def test_the_app_reads_through_a_hayai_server(server_app, qtbot, hayai_server, tiny_recognizer):
    app = server_app(hayai_server.url, hayai_server.key)
    with qtbot.waitSignal(app.worker.ready, timeout=30_000) as ready:
        app.start()
    assert ready.args == [f"cpu @ 127.0.0.1:{hayai_server.port}", "v2.1"]
    before = hayai_server.get("/health")["stats"]["served"]
    select(app, qtbot, box=(10, 20, 90, 40))
    # the text the same model gives for the same crop here, with the server's token limit
    (local,) = tiny_recognizer.read(
        [qimage_to_pil(make_selection(box=(10, 20, 90, 40)).image)], max_new_tokens=16
    )
    assert app.overlay.text() == local.text
    assert app.overlay.status.text().endswith(f"· v2.1 · cpu @ 127.0.0.1:{hayai_server.port}")
    assert hayai_server.get("/health")["stats"]["served"] == before + 1  # the server read it
    assert app.reads.last_latency["ocr_ms"] > 0 and app.reads.last_latency["overhead_ms"] >= 0
    assert [e.text for e in app.history.entries()] == [local.text]


def test_a_wrong_key_says_so(server_app, qtbot, hayai_server):
    app = server_app(hayai_server.url, "not-the-key")
    with qtbot.waitSignal(app.worker.error, timeout=30_000) as error:
        app.start()
    message, hint = error.args
    assert "refused the key" in message and "Settings → Engine" in hint


def test_an_unreachable_server_is_a_clear_message_and_reads_work_once_it_is_back(server_app, qtbot):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # the address is ours, but nothing listens yet: connections refused
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app = server_app(url)
    with qtbot.waitSignal(app.worker.error, timeout=30_000) as error:
        app.start()
    message, hint = error.args
    assert message.startswith(f"The Hayai server at {url} cannot be reached")
    assert "Settings → Engine" in hint and "Traceback" not in message
    assert "server cannot be used" in app.toast.title.text()
    app.handle_command("capture")
    with qtbot.waitSignal(app.worker.failed, timeout=30_000) as failed:
        FakeSession.started[-1].select(make_selection())
    assert "cannot be reached" in failed.args[1]
    qtbot.waitUntil(lambda: "cannot be reached" in app.overlay.message.text(), timeout=5000)
    # WHEN a server comes up at that address THEN the next capture reads (no restart, no new settings)
    rec = GatedRecognizer()
    batcher = Batcher(rec, Schedule(max_batch=4, max_wait_ms=0)).start()
    config = ServerConfig("hayai-v2.1", "v2.1", "cpu", "exact", max_new_tokens=16)
    try:
        with serving(create_app(batcher, config), sock):
            select(app, qtbot, box=(10, 20, 60, 30))
            assert app.overlay.text() == "60x30"
    finally:
        batcher.close()


def test_a_server_that_never_answers_does_not_block_the_gui_thread(server_app, qtbot):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)  # connections are accepted by the kernel and then never answered
    app = server_app(f"http://127.0.0.1:{sock.getsockname()[1]}")
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(10)
    app.start()
    qtbot.waitUntil(lambda: len(ticks) >= 20, timeout=10_000)  # the GUI thread runs meanwhile
    assert app.status.state == "loading"  # the worker is still waiting on the server
    with qtbot.waitSignal(app.worker.error, timeout=30_000) as error:
        sock.close()  # the pending connection is reset
    assert "cannot be reached" in error.args[0]
    timer.stop()


def test_settings_engine_rows_in_words_and_a_server_without_address_is_refused(qtbot, tmp_path):
    from PySide6.QtWidgets import QComboBox, QLineEdit

    from app.ui.settings_dialog import SettingsDialog

    settings = Settings(tmp_path / "settings.ini")
    assert engines.options(settings)["backend"] == "local"
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    engine = dialog.editors["engine/backend"]
    assert isinstance(engine, QComboBox)
    assert [engine.itemText(i) for i in range(engine.count())] == [
        "this computer",
        "a Hayai server",
    ]
    assert engine.currentText() == "this computer"
    key = dialog.editors["engine/server_key"]
    assert isinstance(key, QLineEdit) and key.echoMode() == QLineEdit.EchoMode.PasswordEchoOnEdit
    assert not key.isEnabled()  # the server's rows wait until a server is chosen
    engine.setCurrentIndex(1)
    assert key.isEnabled() and dialog.editors["engine/server_url"].isEnabled()
    assert not dialog.save()  # a server needs an address
    assert "No server address" in dialog.error.text()
    assert settings.get("engine/backend") == "local"  # nothing was saved
    dialog.editors["engine/server_url"].setText("192.168.1.20:8000")
    key.setText("secret")
    assert dialog.save()
    assert settings.get("engine/backend") == "server"  # the value, not the words, is stored
    assert engines.options(settings) == {
        "backend": "server",
        "url": "192.168.1.20:8000",
        "key": "secret",
    }
    assert SettingsDialog(settings).editors["engine/backend"].currentText() == "a Hayai server"


def test_what_users_type_as_a_server_address():
    from app.engines.server import ServerError, base_url

    assert base_url("192.168.1.20:8000") == "http://192.168.1.20:8000"
    assert base_url(" https://gpu.lan:8443/v1/ ") == "https://gpu.lan:8443"
    assert base_url("http://host/prefix") == "http://host/prefix"
    for bad in ("", "ftp://host", "http://"):
        with pytest.raises(ServerError) as info:
            base_url(bad)
        assert "Settings → Engine" in info.value.hint


def test_switching_the_engine_reloads_and_unrelated_rows_do_not(qtbot, tmp_path, monkeypatch):
    from appcore_fakes import FakeRecognizer, factory_for

    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setattr(DictionaryHook, "make_controller", lambda self: None)
    settings = Settings()
    factory = factory_for(FakeRecognizer())
    worker = OcrWorker(engines.options(settings), factory=factory)
    app = Application(settings, Parts(worker=worker, hotkeys=FakeHotkeys()), use_tray=False)
    try:
        with qtbot.waitSignal(worker.ready, timeout=5000):
            app.start()
        assert factory.calls[-1]["backend"] == "local"
        reloads = []  # the app asks for a reload synchronously, in the settings' changed signal
        real_reload = worker.reload
        monkeypatch.setattr(
            worker, "reload", lambda options: (reloads.append(options), real_reload(options))
        )
        settings.update({"engine/server_url": "http://gpu:8000"})  # not used while local
        assert reloads == []
        with qtbot.waitSignal(worker.ready, timeout=5000):
            settings.update({"engine/backend": "server"})
        assert reloads == [{"backend": "server", "url": "http://gpu:8000", "key": ""}]
        assert factory.calls[-1] == reloads[-1]
        settings.update({"model/device": "cpu"})  # a model row: the server's business now
        assert len(reloads) == 1
        settings.update({"engine/server_key": "k"})
        assert reloads[-1] == {"backend": "server", "url": "http://gpu:8000", "key": "k"}
    finally:
        worker.stop()
        app.overlay.close()
        app.toast.close()

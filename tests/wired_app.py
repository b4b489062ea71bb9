"""The wired app for the tests of its flows: `make_app` builds an `Application` from stand-in parts
(appcore_fakes: a recognizer, captures, a selection session; `FakeHotkeys`), `env` gives it a
throwaway config folder, `select` reads one box through it. A test module binds the fixtures by
name: `env, make_app = wired_app.env, wired_app.make_app`."""

from __future__ import annotations

import pytest
from appcore_fakes import FakeRecognizer, FakeSession, factory_for, fake_captures, make_selection
from PySide6.QtCore import QObject, Signal

import app.flows.capture as capture_flow_module
from app.application import Application, Parts
from app.engines import local
from app.engines.worker import OcrWorker
from app.flows.dictionary_hook import DictionaryHook
from app.history import History
from app.settings import Settings


class FakeHotkeys(QObject):
    triggered = Signal(str)

    def __init__(self, error: str | None = None):
        super().__init__()
        self.error = error
        self.combos = None
        self.running = False

    def set_combos(self, combos):
        self.combos = combos

    def start(self):
        if self.error:
            from app.hotkey import HotkeyError

            raise HotkeyError(self.error)
        self.running = True

    def stop(self):
        self.running = False


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    # The real popup dictionary builds its index (~20 s of CPU) in a thread once the model is ready;
    # these tests are about the wiring, so they run without it (one test wires a stand-in).
    monkeypatch.setattr(DictionaryHook, "make_controller", lambda self: None)
    # The stand-in grabbers read no screen: no wait for windows below ours to repaint.
    monkeypatch.setattr(capture_flow_module, "REPAINT_MS", 0)
    FakeSession.started.clear()
    return tmp_path


@pytest.fixture
def make_app(qtbot, env):
    apps = []

    def make(
        recognizer=None,
        factory=None,
        with_tray=False,
        debug_dir=None,
        grab_screens=None,
        grab_region=None,
        selection_factory=FakeSession,
        hotkeys=None,
        settings=None,
        monkeypatch=None,
        verbose=0,
        history=None,
    ):
        recognizer = recognizer or FakeRecognizer()
        worker = OcrWorker(local.options(Settings()), factory=factory or factory_for(recognizer))
        settings = settings or Settings()
        parts = Parts(
            worker=worker,
            history=history or History(limit=500),
            hotkeys=hotkeys or FakeHotkeys(),
            grab_screens=grab_screens or (lambda: fake_captures()),
            grab_region=grab_region or (lambda screen, box: make_selection(box=box).image),
            selection_factory=selection_factory,
        )
        app = Application(settings, parts, use_tray=with_tray, debug_dir=debug_dir, verbose=verbose)
        app.recognizer = recognizer
        apps.append(app)
        with qtbot.waitSignal(worker.ready, timeout=5000):
            app.start()
        return app

    yield make
    for app in apps:
        app.worker.stop()
        if app.window is not None:
            app.window.close_for_quit()
        app.overlay.close()
        if app.history is not None:
            app.history.close()
    # Every other window a test opened (the reading log, Settings…) goes too: one left at the
    # origin would take the offscreen pointer from the next test's windows.
    from app.ui.views import own_windows

    for window in own_windows():
        window.close()


def select(app, qtbot, box=(10, 20, 60, 30)):
    """Trigger a capture and finish the (fake) selection; wait for the text to be painted."""
    app.reads.last_latency = None
    app.handle_command("capture")
    session = FakeSession.started[-1]
    session.select(make_selection(box=box))
    qtbot.waitUntil(lambda: app.reads.last_latency is not None, timeout=5000)

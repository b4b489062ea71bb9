"""The wired flow with a fake capture: trigger → selection → worker → overlay + clipboard + history,
re-scan, --debug-dir records, latency, errors that leave the app running, settings that take effect."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import wired_app
from appcore_fakes import FakeRecognizer, FakeSession, factory_for, fake_captures, make_selection
from PIL import Image
from PySide6.QtCore import QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication
from wired_app import FakeHotkeys, select

import app.flows.capture as capture_flow_module
from app.application import Application, Parts
from app.capture.region import Region
from app.engines import local
from app.engines.worker import OcrWorker
from app.flows.dictionary_hook import DictionaryHook
from app.settings import Settings
from app.ui.tray import Tray

env, make_app = wired_app.env, wired_app.make_app  # the wired app's fixtures

pytestmark = pytest.mark.gui


REAL_DICTIONARY_CONTROLLER = DictionaryHook.make_controller


def test_capture_reads_shows_copies_and_keeps_history(make_app, qtbot):
    app = make_app(FakeRecognizer("今日はいい天気ですね。"))
    QGuiApplication.clipboard().setText("before")
    select(app, qtbot)
    assert app.overlay.isVisible()
    assert app.overlay.text() == "今日はいい天気ですね。"
    assert app.overlay.status.text().endswith("· v2.1 · cpu")
    assert (
        QGuiApplication.clipboard().text() == "今日はいい天気ですね。"
    )  # auto-copy is on by default
    entries = app.history.entries()
    assert [e.text for e in entries] == ["今日はいい天気ですね。"]
    assert entries[0].box == (10, 20, 60, 30) and entries[0].screen == "fake-0"
    assert entries[0].thumbnail.startswith(b"\x89PNG")
    assert app.recognizer.reads == [(60, 30)]  # the crop of the box, in image pixels


def test_latency_is_measured_from_release_to_painted_text_hop_by_hop(make_app, qtbot, caplog):
    app = make_app(FakeRecognizer(delay_s=0.05))
    with caplog.at_level("INFO", logger="app.flows.reads"):
        select(app, qtbot)
    lat = app.reads.last_latency
    assert lat["ocr_ms"] >= 50  # the model's own time is the worker's, not the app's
    assert lat["overhead_ms"] >= 0 and lat["latency_ms"] == pytest.approx(
        lat["ocr_ms"] + lat["overhead_ms"]
    )
    # the log says where the app's share went (its size is `hayai bench --app`'s to report)
    shown = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("text shown"))
    for hop in (
        "release→submit",
        "queue",
        "worker beside the model",
        "hand-over",
        "result→painted",
    ):
        assert hop in shown, shown


def test_auto_copy_off_leaves_the_clipboard_alone(make_app, qtbot):
    settings = Settings()
    settings.set("output/auto_copy", False)
    app = make_app(settings=settings)
    QGuiApplication.clipboard().setText("mine")
    select(app, qtbot)
    assert QGuiApplication.clipboard().text() == "mine"


def test_history_off_keeps_nothing(make_app, qtbot):
    app = make_app()
    app.history.close()
    app.history = None
    select(app, qtbot)
    assert (
        app.windows.show_history() is None
    )  # says history is off instead of opening an empty window


def test_debug_dir_records_crop_and_json(make_app, qtbot, tmp_path):
    debug = tmp_path / "debug"
    app = make_app(debug_dir=str(debug))
    select(app, qtbot, box=(10, 20, 60, 30))
    select(app, qtbot, box=(0, 0, 32, 16))
    record = json.loads((debug / "0001.json").read_text(encoding="utf-8"))
    assert set(record) == {"box", "screen", "text", "ocr_ms", "latency_ms"}
    assert record["box"] == [10, 20, 60, 30] and record["screen"] == "fake-0"
    assert record["text"] == app.recognizer.text
    assert record["latency_ms"] >= record["ocr_ms"] >= 0
    # the PNG is exactly the crop given to the model
    crop = make_selection(box=(10, 20, 60, 30)).image
    png = Image.open(debug / "0001.png").convert("RGB")
    assert png.size == (60, 30)
    from app.platform.qt_images import qimage_to_pil

    assert png.tobytes() == qimage_to_pil(crop).tobytes()
    assert json.loads((debug / "0002.json").read_text())["box"] == [0, 0, 32, 16]


def test_debug_mode_draws_the_geometry_and_saves_the_whole_screen(make_app, qtbot, tmp_path):
    debug = tmp_path / "debug"
    app = make_app(debug_dir=str(debug), verbose=2)  # -vv / --debug
    select(app, qtbot, box=(10, 20, 60, 30))
    assert FakeSession.started[-1].debug  # the selection draws the screen's geometry
    record = json.loads((debug / "0001.json").read_text(encoding="utf-8"))
    assert record["screen_image"] == "0001-screen.png"
    screen = Image.open(debug / "0001-screen.png")
    assert screen.size == (320, 200)  # the whole frozen screen, beside the 60x30 crop
    assert Image.open(debug / "0001.png").size == (60, 30)


def test_plain_verbose_keeps_the_selection_and_the_debug_dir_lean(make_app, qtbot, tmp_path):
    debug = tmp_path / "debug"
    app = make_app(debug_dir=str(debug), verbose=1)  # -v
    select(app, qtbot)
    assert not FakeSession.started[-1].debug
    assert sorted(p.name for p in debug.iterdir()) == ["0001.json", "0001.png"]


def test_rescan_reads_the_same_box_again(make_app, qtbot):
    boxes = []

    def grab_region(screen, box):
        boxes.append((screen, box))
        return make_selection(box=box).image

    app = make_app(grab_region=grab_region)
    notes = []
    app.toast.show_message = lambda title, message, error=False: notes.append(title)
    app.handle_command("rescan")
    assert notes == ["Nothing to re-scan"] and boxes == []
    select(app, qtbot, box=(5, 6, 40, 20))
    with qtbot.waitSignal(app.worker.finished, timeout=5000):
        app.handle_command("rescan")
    assert boxes == [("fake-0", (5, 6, 40, 20))]
    assert app.recognizer.reads[-1] == (40, 20)


def test_triggers_while_a_selection_is_open_do_not_stack(make_app):
    app = make_app()
    for _ in range(20):
        app.handle_command("capture")
    assert len(FakeSession.started) == 1


def test_twenty_triggers_with_the_real_selection_leave_no_windows(make_app, qtbot):
    from app.ui.selection import SelectionSession

    app = make_app(selection_factory=SelectionSession)
    before = {id(w) for w in QApplication.topLevelWidgets() if w.isVisible()}
    for _ in range(20):
        app.handle_command("capture")
    open_windows = [
        w for w in QApplication.topLevelWidgets() if w.isVisible() and id(w) not in before
    ]
    assert len(open_windows) == 1  # one screen, one selection window
    qtbot.keyClick(open_windows[0], Qt.Key.Key_Escape)
    qtbot.waitUntil(
        lambda: (
            not any(w.objectName().startswith("selection:") for w in QApplication.topLevelWidgets())
        ),
        timeout=3000,
    )
    assert app.capture.session is None


def test_drag_on_the_real_selection_window_reads_that_box(make_app, qtbot):
    from app.ui.selection import SelectionSession

    app = make_app(FakeRecognizer("ドラッグ"), selection_factory=SelectionSession)
    app.handle_command("capture")
    window = next(
        w for w in QApplication.topLevelWidgets() if w.objectName().startswith("selection:")
    )
    qtbot.waitExposed(window)
    scale_x = 320 / window.width()
    start, end = QPoint(20, 30), QPoint(120, 90)
    qtbot.mousePress(window, Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(window, end)
    with qtbot.waitSignal(app.worker.finished, timeout=5000):
        qtbot.mouseRelease(window, Qt.MouseButton.LeftButton, pos=end)
    qtbot.waitUntil(lambda: app.overlay.text() == "ドラッグ", timeout=3000)
    w, h = app.recognizer.reads[-1]
    assert abs(w - 100 * scale_x) <= 2 and abs(h - 60 * scale_x) <= 2
    assert app.capture.last_region is not None and app.capture.last_region.screen_name == "fake-0"


def test_capture_failure_is_a_message_and_the_next_capture_works(make_app, qtbot):
    from app.capture import CaptureError

    calls = []

    def grab():
        calls.append(1)
        if len(calls) == 1:
            raise CaptureError("the screen could not be read (permission refused)")
        return fake_captures()

    app = make_app(grab_screens=grab)
    notes = []
    app.toast.show_message = lambda title, message, error=False: notes.append(
        (title, message, error)
    )
    app.handle_command("capture")
    assert notes and notes[0][0] == "Screen capture failed" and notes[0][2]
    assert "permission" in notes[0][1]
    select(app, qtbot)
    assert app.overlay.text() == app.recognizer.text


def test_read_failure_shows_in_the_overlay_and_the_app_recovers(make_app, qtbot):
    rec = FakeRecognizer("復活")
    rec.fail_next = [RuntimeError("CUDA out of memory")]
    app = make_app(rec)
    app.handle_command("capture")
    with qtbot.waitSignal(app.worker.failed, timeout=5000):
        FakeSession.started[-1].select(make_selection())
    qtbot.waitUntil(lambda: "Out of memory" in app.overlay.message.text(), timeout=2000)
    select(app, qtbot)
    assert app.overlay.text() == "復活"


def test_missing_model_opens_the_model_dialog_and_a_folder_choice_reloads(qtbot, env, monkeypatch):
    factory = factory_for(
        FakeRecognizer("loaded"), missing_first="The Hayai OCR v2.1 weights are not installed."
    )
    monkeypatch.setattr(Tray, "available", staticmethod(lambda: True))
    settings = Settings()
    worker = OcrWorker(local.options(settings), factory=factory)
    app = Application(
        settings,
        Parts(
            worker=worker,
            hotkeys=FakeHotkeys(),
            grab_screens=lambda: fake_captures(),
            selection_factory=FakeSession,
        ),
    )
    try:
        notes = []
        app.tray.notify = lambda title, message, error=False: notes.append((title, message, error))
        with qtbot.waitSignal(worker.error, timeout=5000):
            app.start()
        qtbot.waitUntil(lambda: "model" in app.windows.open, timeout=2000)
        dialog = app.windows.open["model"]
        assert "not installed" in dialog.details.plain_text()
        qtbot.waitUntil(lambda: app.tray.model_action.isEnabled(), timeout=2000)
        assert "click to fix" in app.tray.model_action.text()
        weights = env / "weights"
        weights.mkdir()
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            (weights / name).write_bytes(b"{}")
        with qtbot.waitSignal(worker.ready, timeout=5000):
            assert dialog.use_folder(str(weights))
        assert factory.calls[-1]["model_dir"] == str(env / "weights")
        assert Settings().get("model/folder") == str(env / "weights")
        qtbot.waitUntil(  # the line names the folder, not only the variant
            lambda: app.tray.model_action.text() == "Model: ready · cpu · v2.1 from “weights”",
            timeout=2000,
        )
        assert notes[-1][0] == "Model folder loaded" and "“weights”" in notes[-1][1]
    finally:
        worker.stop()
        app.tray.hide()
        app.overlay.close()
        for window in list(app.windows.open.values()):
            window.close()
        qtbot.wait(50)  # let deleteLater() run before the objects go out of scope


def test_a_model_folder_chosen_in_settings_is_confirmed_or_refused_by_name(make_app, qtbot, env):
    recognizer = FakeRecognizer()
    fails = []

    def factory(**options):
        if fails:
            raise RuntimeError(fails.pop())
        return recognizer

    app = make_app(recognizer, factory=factory)
    notes = []
    app.toast.show_message = lambda title, message, error=False: notes.append(
        (title, message, error)
    )
    line = app.window.model_button  # no tray here: the window's model line
    assert line.text() == "Model: ready · cpu · v2.1"  # the downloaded variant
    with qtbot.waitSignal(app.worker.ready, timeout=5000):
        app.settings.update({"model/folder": str(env / "hayai-nova-local")})
    qtbot.waitUntil(lambda: "“hayai-nova-local”" in line.text(), timeout=2000)
    assert notes[-1] == (
        "Model folder loaded",
        "Hayai now reads with the v2.1 model in the folder “hayai-nova-local” (cpu).",
        False,
    )
    fails.append("the file is truncated\nmore lines the log keeps")
    with qtbot.waitSignal(app.worker.error, timeout=5000):
        app.settings.update({"model/folder": str(env / "broken")})
    title, message, error = notes[-1]
    assert title == "Model folder not loaded" and error
    assert "“broken”" in message and "more lines" not in message
    assert line.text() == "Model: not ready — click to fix" and line.isEnabled()


def test_without_a_tray_the_window_reaches_every_action(make_app, qtbot, monkeypatch):
    quits = []
    monkeypatch.setattr(Application, "quit", lambda self: quits.append(self))
    app = make_app()  # use_tray=False: what --no-tray gives
    window = app.window
    assert app.tray is None and window.isVisible()
    assert window.model_button.text() == "Model: ready · cpu · v2.1"
    assert window.capture_button.text() == "Capture region   Ctrl+Alt+O"
    window.capture_button.click()
    assert len(FakeSession.started) == 1
    FakeSession.started[-1].select(make_selection())
    assert window.rescan_button.isEnabled()  # a region to re-scan now
    for button, name in (
        (window.settings_button, "settings"),
        (window.history_button, "history"),
        (window.about_button, "about"),
    ):
        button.click()
        assert app.windows.open[name].isVisible()
        app.windows.open[name].close()
    window.quit_button.click()
    assert quits == [app]


def test_settings_changes_take_effect(make_app, qtbot):
    hotkeys = FakeHotkeys()
    app = make_app(hotkeys=hotkeys)
    with qtbot.waitSignal(app.worker.ready, timeout=5000):
        app.settings.update({"model/device": "cpu"})  # a model key: the worker reloads
    app.settings.update({"hotkey/capture": "<ctrl>+<shift>+z"})
    assert hotkeys.combos["capture"] == "<ctrl>+<shift>+z" and hotkeys.running
    app.settings.update({"overlay/vertical": True, "dictionary/trigger": "click"})
    assert app.overlay.is_vertical() and app.overlay.pointer.trigger() == "click"
    app.settings.update({"history/length": 3})
    assert app.history.limit == 3


def test_hotkey_error_is_shown_and_the_app_keeps_running(make_app, qtbot):
    message = "Global hotkeys do not work on Wayland. Bind `hayai capture` as a desktop shortcut."
    app = make_app(hotkeys=FakeHotkeys(error=message))
    assert app.hotkey_control.error == message
    select(app, qtbot)  # captures still work through the other routes
    assert app.overlay.text() == app.recognizer.text


def test_the_hotkey_and_the_socket_commands_reach_the_same_actions(make_app, qtbot):
    from app.platform.single_instance import InstanceServer

    hotkeys = FakeHotkeys()
    app = make_app(hotkeys=hotkeys)
    hotkeys.triggered.emit("capture")
    assert len(FakeSession.started) == 1
    FakeSession.started[-1].cancel()
    server = InstanceServer()
    app.server = server
    server.command.connect(app.handle_command)
    server.command.emit("capture")  # what a second `hayai capture` delivers
    assert len(FakeSession.started) == 2


def test_the_dictionary_popup_is_wired_to_the_overlay(make_app, qtbot, monkeypatch):
    import app.ui.dictionary_popup_controller as popup_module

    calls = []

    class FakeDictionary:
        han_language = "ja"

        def furigana(self, text):
            return [(text, None)]

    class Controller(QObject):
        highlight = Signal(int, int)

        def __init__(self, dictionary):
            super().__init__()
            self.dictionary = FakeDictionary()
            self.popup = SimpleNamespace(
                attach_anki=lambda actions: calls.append("anki"), mining_context=None
            )

        def on_hover(self, text, index, pos, line=None, vertical=False):
            calls.append((text, index))
            self.highlight.emit(index, 2)

        def on_left(self):
            calls.append("left")

        def hide(self):
            calls.append("hide")

        def watch(self, widget):
            calls.append("watch")

        def prepare_in_background(self):
            calls.append("prepare")

    monkeypatch.setattr(popup_module, "DictionaryPopupController", Controller)
    monkeypatch.setattr(DictionaryHook, "make_controller", REAL_DICTIONARY_CONTROLLER)
    app = make_app()
    qtbot.waitUntil(
        lambda: app.dictionary_hook.controller is not None, timeout=2000
    )  # attached after the tray shows
    assert isinstance(app.dictionary_hook.controller, Controller) and calls[:2] == ["watch", "anki"]
    assert app.overlay.furigana_provider == app.dictionary_hook.controller.dictionary.furigana
    app.overlay.show_result("今日は天気", "0.1 s")
    app.overlay.word_hovered.emit("今日は天気", 3, QPoint(5, 5))
    assert ("今日は天気", 3) in calls
    assert [
        (s.cursor.selectionStart(), s.cursor.selectionEnd())
        for s in app.overlay.editor.extraSelections()
    ] == [(3, 5)]  # the controller's highlight reached the overlay
    app.overlay.word_left.emit()
    assert calls[-1] == "left"
    app.settings.set("dictionary/han_language", "zh")
    assert app.dictionary_hook.controller.dictionary.han_language == "zh"
    qtbot.waitUntil(
        lambda: "prepare" in calls, timeout=5000
    )  # the index is prepared after the model


class WordDictionary:
    """A dictionary that knows one word at every position (the wiring, not the data, is tested)."""

    def __init__(self, han_language="ja"):
        self.han_language = han_language

    def is_ready(self):
        return True

    def prepare(self, progress=None):
        pass

    def lookup(self, text, start=0, lang="auto"):
        from app.dictionary.models import Entry, LookupResult, Sense

        word = text[start : start + 2]
        entry = Entry(word, "", [], [], [Sense(["a word"], [])], "jmdict", word)
        return LookupResult(len(word), [entry], "ja")


def test_the_dictionary_popup_closes_when_the_text_is_edited_or_replaced(
    make_app, qtbot, monkeypatch
):
    import app.dictionary as dictionary_module

    monkeypatch.setattr(dictionary_module, "Dictionary", WordDictionary)
    monkeypatch.setattr(DictionaryHook, "make_controller", REAL_DICTIONARY_CONTROLLER)
    app = make_app()
    qtbot.waitUntil(lambda: app.dictionary_hook.controller is not None, timeout=2000)
    popup = app.dictionary_hook.controller.popup
    select(app, qtbot)

    def hover():
        app.overlay.word_hovered.emit(app.overlay.text(), 0, QPoint(40, 40))
        assert popup.isVisible()

    hover()
    app.overlay.editor.textCursor().insertText("x")  # the user fixes an OCR slip
    assert not popup.isVisible()
    hover()
    select(app, qtbot)  # a new capture's text replaces it
    assert not popup.isVisible()
    hover()
    app.overlay.show_error("Reading failed: out of memory")
    assert not popup.isVisible()
    popup.close()


def test_verbose_logs_one_system_info_block(make_app, qtbot, caplog):
    import logging

    caplog.set_level(logging.INFO, logger="app.flows.model_status")
    app = make_app()
    qtbot.waitUntil(lambda: app.status.state == "ready", timeout=3000)
    app.status.verbose = True
    app.status._info_logged = False
    app.status.log_system_info()
    app.status.log_system_info()
    blocks = [r.getMessage() for r in caplog.records if r.getMessage().startswith("system info:")]
    assert len(blocks) == 1
    block = blocks[0]
    for needle in (
        "qt_platform: offscreen",
        "screen ",
        "dpr",
        "session_type",
        "backends",
        "device: cpu (v2.1)",
    ):
        assert needle in block, needle


def test_our_windows_are_hidden_while_the_screen_is_frozen_and_come_back(
    make_app, qtbot, monkeypatch
):
    """The frozen screen is the desktop's: the no-tray window, the reading log, the watch frame…
    are hidden before the grab (with a moment for the windows below to repaint), shown again after."""
    monkeypatch.setattr(capture_flow_module, "REPAINT_MS", 60)
    at_grab = []
    holder = {}

    def grab():
        at_grab.append([w.isVisible() for w in holder["windows"]])
        return fake_captures()

    app = make_app(grab_screens=grab)
    log_window = app.windows.show_log()
    holder["windows"] = [app.window, log_window]
    assert all(w.isVisible() for w in holder["windows"])
    app.handle_command("capture")
    assert not app.window.isVisible() and not log_window.isVisible()  # hidden at once
    app.handle_command("capture")  # a second trigger while they are hidden: ignored
    qtbot.waitUntil(lambda: bool(FakeSession.started), timeout=3000)
    assert at_grab == [[False, False]]  # none of ours in the picture
    assert app.window.isVisible() and log_window.isVisible()  # back once the screen is grabbed
    assert len(FakeSession.started) == 1
    FakeSession.started[-1].cancel()


def read_once(make_app, qtbot):
    """An app that has read the box (5, 6, 40, 20), and the boxes its re-scans grab from now on."""
    boxes = []

    def grab_region(screen, box):
        boxes.append(box)
        return make_selection(box=box).image

    app = make_app(grab_region=grab_region)
    select(app, qtbot, box=(5, 6, 40, 20))
    return app, boxes


def test_rescan_waits_while_a_selection_is_open(make_app, qtbot):
    app, boxes = read_once(make_app, qtbot)
    app.handle_command("capture")  # a selection is open now
    assert FakeSession.started[-1].is_open
    app.handle_command("rescan")  # would hide the selection windows over the box
    assert boxes == []


def test_a_rescan_with_no_capture_backend_is_said_in_words(make_app, monkeypatch):
    app = make_app()
    app.capture.route.grab_region = None  # the real route: the backend is picked at the re-scan

    def no_backend(for_region=False):
        raise RuntimeError("no capture backend works here")

    monkeypatch.setattr(app.capture.route, "background", no_backend)
    app.capture.last_region = Region("fake-0", (0, 0, 10, 10), (0, 0, 10, 10), (0, 0, 10, 10))
    notes = []
    app.toast.show_message = lambda title, message, error=False: notes.append((title, message))
    app.capture.rescan()
    assert notes == [("Re-scan failed", "no capture backend works here")]


def test_commands_wait_while_settings_records_a_hotkey(make_app):
    """On GNOME the desktop's own shortcut runs `hayai capture` for the keys being recorded."""
    app = make_app()
    app.hotkey_control.suspend(True)
    app.handle_command("capture")
    assert FakeSession.started == []
    app.hotkey_control.suspend(False)
    app.handle_command("capture")
    assert len(FakeSession.started) == 1


def test_a_trigger_run_while_our_windows_are_hidden_opens_no_second_selection(
    make_app, qtbot, monkeypatch
):
    """Hiding our windows syncs with the window system, which runs Qt's queued events: a hotkey
    press queued meanwhile (twenty presses on a busy machine) ran inside the first trigger, opened a
    selection of its own, and the first one's opening then cancelled it and left the flow without
    its session, so every later press opened and cancelled another."""
    from app.ui.selection import SelectionSession

    monkeypatch.setattr(capture_flow_module, "REPAINT_MS", 60)
    opened = []

    def factory(*args, **kwargs):
        opened.append(SelectionSession(*args, **kwargs))
        return opened[-1]

    app = make_app(selection_factory=factory)
    app.window.show()  # one of ours to hide: the grab waits for the desktop to repaint

    def selections():
        return [
            w
            for w in QApplication.topLevelWidgets()
            if w.objectName().startswith("selection:") and w.isVisible()
        ]

    # GIVEN a second press queued behind the first
    QTimer.singleShot(0, lambda: app.handle_command("capture"))
    # WHEN the first runs
    app.handle_command("capture")
    qtbot.waitUntil(lambda: bool(selections()) and not app.capture._clearing_screen, timeout=3000)
    # THEN one selection was opened, and it is the flow's
    assert len(opened) == 1 and len(selections()) == 1
    assert app.capture.session is opened[0] and opened[0].is_open
    # and later presses are ignored while it is open
    for _ in range(3):
        app.handle_command("capture")
    assert not app.capture._clearing_screen  # not even hiding our windows for a grab
    assert selections() == [app.capture.session.windows[0]]
    qtbot.keyClick(selections()[0], Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not selections(), timeout=3000)
    assert app.capture.session is None


def test_a_selection_cancelled_by_a_newer_one_leaves_the_flow_with_the_newer(make_app, qtbot):
    """A selection session opening cancels one still open (app/ui/selection.py): that end is not
    the flow's, whose session is the new one."""
    from app.ui.selection import SelectionSession

    app = make_app(selection_factory=SelectionSession)
    app.capture._open_selection(fake_captures())
    first = app.capture.session
    app.capture._open_selection(fake_captures())  # as the flow never does, but the session allows
    assert not first.is_open
    assert app.capture.session is not first and app.capture.session.is_open
    app.capture.session.cancel()
    assert app.capture.session is None


def test_a_window_of_ours_deleted_while_hidden_for_the_grab_still_lets_the_selection_open(
    make_app, qtbot, monkeypatch
):
    from PySide6.QtWidgets import QWidget

    monkeypatch.setattr(capture_flow_module, "REPAINT_MS", 60)
    app = make_app()
    note = QWidget()  # a notice of ours that goes by itself (deleted when closed)
    note.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    note.show()
    app.handle_command("capture")
    assert not note.isVisible()  # hidden for the grab
    note.close()  # its time is up while the desktop repaints
    qtbot.waitUntil(lambda: bool(FakeSession.started), timeout=3000)
    FakeSession.started[-1].cancel()


def test_a_trigger_run_while_a_rescan_hides_our_windows_waits(make_app, qtbot, monkeypatch):
    """Re-scan hides our windows over its box the same way (and so runs queued events): a press
    queued meanwhile opened a selection that the re-scan's grab then read instead of the text."""
    app, boxes = read_once(make_app, qtbot)
    FakeSession.started.clear()
    monkeypatch.setattr(capture_flow_module, "REPAINT_MS", 60)
    app.window.setGeometry(0, 0, 300, 200)  # a window of ours over the box: hidden for the grab
    app.window.show()
    # GIVEN a capture press queued behind the re-scan
    QTimer.singleShot(0, lambda: app.handle_command("capture"))
    # WHEN the re-scan runs
    app.handle_command("rescan")
    qtbot.waitUntil(lambda: bool(boxes), timeout=3000)
    # THEN the press was ignored while the re-scan grabbed, and a press after it opens a selection
    assert FakeSession.started == []
    app.handle_command("capture")
    qtbot.waitUntil(lambda: len(FakeSession.started) == 1, timeout=3000)
    FakeSession.started[-1].cancel()

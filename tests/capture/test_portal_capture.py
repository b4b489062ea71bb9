"""Capture through the desktop portal without blocking the GUI: the app against a stand-in
Screenshot portal (tests/capture/screenshot_portal.py) that a private dbus-daemon D-Bus-activates,
as a session's bus activates xdg-desktop-portal. GNOME's and KDE's portals cannot run here; the
stand-in plays what they do that matters: a slow start, a first request that waits on a
permission dialog (or is never answered), refusals, and a world-readable screenshot file.

Also: the GNOME shortcuts question remembered and never modal, no selection under a modal dialog,
no Qt fallback on Wayland, the screenshot file gone before it is read.
"""

from __future__ import annotations

import builtins
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

pytest.importorskip("jeepney")

HERE = Path(__file__).resolve().parent
from appcore_fakes import FakeRecognizer, FakeSession, factory_for, pattern_image  # noqa: E402

pytestmark = pytest.mark.gui

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>{address}</listen>
  <auth>EXTERNAL</auth>
  <servicedir>{services}</servicedir>
  <policy context="default">
    <allow send_destination="*"/>
    <allow send_type="signal"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="signal"/>
    <allow receive_type="error"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""
SCREEN = (320, 200)  # the offscreen platform's screen is bigger; the stand-in's image is this


class Desktop:
    """A private session bus whose xdg-desktop-portal is the stand-in, started on demand."""

    def __init__(self, folder: Path, monkeypatch):
        if shutil.which("dbus-daemon") is None:
            pytest.skip("dbus-daemon is not installed (apt-get install dbus-daemon)")
        self.folder = folder
        self.monkeypatch = monkeypatch
        self.log = folder / "portal.log"
        self.shots = folder / "shots"
        self.shots.mkdir()
        self.daemon = None

    def start(self, start_delay=0.0, first_answer_delay="0", code=0, installed=True):
        from PySide6.QtGui import QGuiApplication

        screen = QGuiApplication.primaryScreen().geometry()
        image = self.folder / "desktop.png"
        pattern_image(screen.width(), screen.height()).save(str(image))
        services = self.folder / "services"
        services.mkdir()
        if installed:
            argv = [sys.executable, HERE / "screenshot_portal.py", "--image", image]
            argv += ["--folder", self.shots, "--log", self.log, "--start-delay", start_delay]
            argv += ["--first-answer-delay", first_answer_delay, "--code", code]
            (services / "portal.service").write_text(
                "[D-BUS Service]\nName=org.freedesktop.portal.Desktop\n"
                f"Exec={' '.join(str(a) for a in argv)}\n"
            )
        address = f"unix:path={self.folder}/bus"
        config = self.folder / "bus.conf"
        config.write_text(BUS_CONFIG.format(address=address, services=services))
        self.daemon = subprocess.Popen(
            ["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while not (self.folder / "bus").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        self.monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
        self.monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        return self

    def events(self, name: str | None = None) -> list[dict]:
        try:
            lines = self.log.read_text().splitlines()
        except OSError:
            return []
        events = [json.loads(line) for line in lines if line.strip()]
        return [e for e in events if name is None or e["event"] == name]

    def stop(self) -> None:
        for event in self.events("started"):
            subprocess.run(["kill", str(event["pid"])], capture_output=True)
        if self.daemon is not None:
            self.daemon.terminate()
            self.daemon.wait(timeout=10)


@pytest.fixture
def desktop(qapp, tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    desktop = Desktop(tmp_path, monkeypatch)
    yield desktop
    desktop.stop()


@pytest.fixture
def make_app(qtbot, monkeypatch):
    from app.application import Application, Parts
    from app.engines import local
    from app.engines.worker import OcrWorker
    from app.flows.dictionary_hook import DictionaryHook
    from app.history import History
    from app.settings import Settings

    monkeypatch.setattr(DictionaryHook, "make_controller", lambda self: None)
    # The stand-in portal's picture shows no real screen: no wait for windows below ours to repaint.
    monkeypatch.setattr("app.flows.capture.REPAINT_MS", 0)
    FakeSession.started.clear()
    apps = []

    def make(hotkeys=None, backend="portal"):
        from wired_app import FakeHotkeys

        settings = Settings()
        settings.set("capture/backend", backend)
        recognizer = FakeRecognizer()
        worker = OcrWorker(local.options(Settings()), factory=factory_for(recognizer))
        parts = Parts(
            worker=worker,
            history=History(limit=10),
            hotkeys=hotkeys or FakeHotkeys(),
            selection_factory=FakeSession,  # the real capture route, a fake selection
        )
        app = Application(settings, parts, use_tray=False)
        app.recognizer = recognizer
        apps.append(app)
        with qtbot.waitSignal(worker.ready, timeout=10000):
            app.start()
        return app

    yield make
    for app in apps:
        app.quit()


def ticking(qtbot):
    """A 20 ms timer counting its ticks: they stop while the GUI thread is blocked."""
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(20)
    return timer, ticks


def longest_gap(ticks: list[float]) -> float:
    return max((b - a for a, b in zip(ticks, ticks[1:])), default=0.0)


# --- the asynchronous capture -------------------------------------------------------------------


def test_the_gui_runs_while_the_desktop_asks_and_the_selection_opens_with_its_picture(
    desktop, make_app, qtbot
):
    # GIVEN a desktop whose first screenshot waits 4 s on its permission dialog
    desktop.start(first_answer_delay="4")
    app = make_app()
    timer, ticks = ticking(qtbot)
    # WHEN the user captures
    app.handle_command("capture")
    # THEN the GUI thread keeps running its timers while the desktop has not answered
    qtbot.waitUntil(lambda: bool(desktop.events("Screenshot")), timeout=20000)
    qtbot.waitUntil(
        lambda: app.capture.waiting is not None and app.capture.waiting.isVisible(), timeout=10000
    )
    # AND the waiting window says, in words, what it waits for; nothing is open meanwhile
    assert "may be asking whether Hayai may take screenshots" in app.capture.waiting.label.text()
    assert not FakeSession.started
    qtbot.waitUntil(lambda: bool(FakeSession.started), timeout=30000)
    timer.stop()
    assert len(ticks) > 50 and longest_gap(ticks) < 2.0, longest_gap(ticks)
    # AND the picture was taken again without the waiting window (it was on screen for the
    # first), and the selection shows the desktop's picture, every pixel
    assert len(desktop.events("Screenshot")) == 2
    assert not app.capture.waiting.isVisible()
    (capture,) = FakeSession.started[0].captures.values()
    expected = pattern_image(capture.image.width(), capture.image.height())
    assert capture.image == expected.convertToFormat(capture.image.format())
    # AND the screenshot file is gone
    assert list(desktop.shots.iterdir()) == []


def test_a_press_while_the_picture_is_taken_again_leaves_the_waiting_window_out_of_it(
    desktop, make_app, qtbot, monkeypatch
):
    """Hiding the waiting window for the second picture syncs with the window system, which runs
    Qt's queued events: a capture press among them showed the waiting window again just before
    that picture (taken once more only once, so it kept the window)."""
    from PySide6.QtGui import QGuiApplication

    desktop.start(first_answer_delay="4")
    app = make_app()
    real_sync, real_background = QGuiApplication.sync, app.capture.route.background
    waiting_shown_at_request = []

    def sync_with_a_press() -> None:  # a press comes in just as our windows are hidden
        QTimer.singleShot(0, lambda: app.handle_command("capture"))
        real_sync()

    def background(*args, **kwargs):
        waiting = app.capture.waiting
        waiting_shown_at_request.append(waiting is not None and waiting.isVisible())
        return real_background(*args, **kwargs)

    monkeypatch.setattr(QGuiApplication, "sync", staticmethod(sync_with_a_press))
    monkeypatch.setattr(app.capture.route, "background", background)
    # GIVEN a capture whose first picture shows the waiting window
    app.handle_command("capture")
    # WHEN the picture is taken again, a press coming in meanwhile
    qtbot.waitUntil(lambda: bool(FakeSession.started), timeout=30000)
    # THEN the waiting window was out of the second picture, and one selection opened
    assert len(desktop.events("Screenshot")) == 2
    assert waiting_shown_at_request == [False, False]
    assert len(FakeSession.started) == 1


def test_esc_in_the_waiting_window_cancels_and_the_next_capture_asks_again(
    desktop, make_app, qtbot
):
    # GIVEN a desktop that never answers the first screenshot (its dialog left open)
    desktop.start(first_answer_delay="never")
    app = make_app()
    app.handle_command("capture")
    qtbot.waitUntil(lambda: bool(desktop.events("Screenshot")), timeout=20000)
    qtbot.waitUntil(
        lambda: app.capture.waiting is not None and app.capture.waiting.isVisible(), timeout=20000
    )
    # WHEN the user presses Esc in the waiting window
    qtbot.keyClick(app.capture.waiting, Qt.Key.Key_Escape)
    # THEN the capture is dropped at once, the desktop's request is closed (its dialog with it)
    assert not app.capture.waiting.isVisible() and app.capture.background is None
    qtbot.waitUntil(lambda: bool(desktop.events("Close")), timeout=10000)
    (asked,) = desktop.events("Screenshot")
    assert desktop.events("Close")[0]["handle"] == asked["handle"]
    assert not FakeSession.started
    # AND capturing again sends a new request, which the desktop answers: the selection opens
    app.handle_command("capture")
    qtbot.waitUntil(lambda: bool(FakeSession.started), timeout=20000)
    assert len(desktop.events("Screenshot")) == 2


def test_the_cancel_button_cancels_too(desktop, make_app, qtbot):
    desktop.start(first_answer_delay="never")
    app = make_app()
    app.handle_command("capture")
    qtbot.waitUntil(lambda: bool(desktop.events("Screenshot")), timeout=20000)
    qtbot.waitUntil(
        lambda: app.capture.waiting is not None and app.capture.waiting.isVisible(), timeout=20000
    )
    app.handle_command("capture")  # a second trigger meanwhile starts nothing new
    qtbot.mouseClick(app.capture.waiting.cancel_button, Qt.MouseButton.LeftButton)
    assert app.capture.background is None and not app.capture.waiting.isVisible()
    qtbot.waitUntil(lambda: bool(desktop.events("Close")), timeout=10000)
    assert len(desktop.events("Screenshot")) == 1


def test_a_portal_that_is_still_starting_is_waited_for_and_said_so(desktop, make_app, qtbot):
    # GIVEN xdg-desktop-portal taking 6 s to start (the bus holds the calls meanwhile)
    desktop.start(start_delay=6)
    app = make_app()
    texts = []
    app.handle_command("capture")
    qtbot.waitUntil(
        lambda: app.capture.waiting is not None and app.capture.waiting.isVisible(), timeout=20000
    )
    texts.append(app.capture.waiting.label.text())
    # THEN the window says the portal is starting; the selection opens once it answers
    qtbot.waitUntil(lambda: bool(FakeSession.started), timeout=40000)
    assert "Waiting for the desktop portal to start" in texts[0]
    assert desktop.events("owns the name")


def test_a_portal_that_does_not_answer_in_time_is_named_and_the_next_capture_retries(
    desktop, make_app, qtbot, monkeypatch
):
    from app.platform import portal

    monkeypatch.setattr(portal, "STARTUP_BUDGET_S", 4.0)
    # GIVEN a portal that takes far longer to start than the app waits
    desktop.start(start_delay=1000)
    app = make_app()
    told = []
    monkeypatch.setattr(
        app.toast, "show_message", lambda title, message, error=False: told.append(message)
    )
    # WHEN the user captures
    app.handle_command("capture")
    qtbot.waitUntil(lambda: app.capture.background is None and bool(told), timeout=30000)
    # THEN the message says the truth: the portal did not answer yet; nothing to install
    assert "did not answer within 4 s" in told[-1] and "may still be starting" in told[-1]
    assert "jeepney" not in told[-1] and "install" not in told[-1]
    assert "Capture again in a moment" in told[-1]
    assert not FakeSession.started
    # AND the next capture tries again rather than remembering the failure
    app.handle_command("capture")
    assert app.capture.background is not None
    app.capture.cancel_waiting()


@pytest.mark.parametrize(
    ("code", "words"),
    [(1, "You cancelled the screenshot in your desktop's dialog"), (2, "refused the screenshot")],
)
def test_a_refusal_or_the_desktops_cancel_is_said_in_words(desktop, make_app, qtbot, code, words):
    desktop.start(code=code)
    app = make_app()
    told = []
    app.toast.show_message = lambda title, message, error=False: told.append((title, message))
    app.handle_command("capture")
    qtbot.waitUntil(lambda: bool(told) and app.capture.background is None, timeout=20000)
    title, message = told[-1]
    assert title == "Screen capture failed" and words in message
    assert "grim" not in message and not FakeSession.started


def test_no_portal_installed_says_what_to_install(desktop):
    from app.capture import REGISTRY
    from app.capture.backends import portal
    from app.platform.backends import BackendError, pick

    desktop.start(installed=False)
    assert not portal.is_available()
    with pytest.raises(BackendError, match="xdg-desktop-portal-gnome, -kde, -wlr") as raised:
        pick(REGISTRY, "portal", capability="capture")
    assert "jeepney" not in str(raised.value)  # it is installed: not named as missing


def test_is_available_does_not_wait_for_a_slow_portal(desktop):
    from app.capture.backends import portal

    desktop.start(start_delay=1000)
    started = time.monotonic()
    assert portal.is_available()  # activatable: the bus answers for it at once
    assert time.monotonic() - started < 3
    assert not desktop.events("owns the name")


# --- parts ---------------------------------------------------------------------------------------


def test_the_screenshot_file_is_unlinked_before_it_is_read(tmp_path, monkeypatch):
    from app.capture.backends import portal

    shot = tmp_path / "out.png"
    shot.write_bytes(b"picture")
    seen = []
    real_open = builtins.open

    class Watched:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def read(self):
            seen.append(shot.exists())
            return self.handle.read()

    monkeypatch.setattr(builtins, "open", lambda *a, **k: Watched(real_open(*a, **k)))
    assert portal.read_and_delete(shot) == b"picture"
    assert seen == [False] and not shot.exists()


def test_on_wayland_a_failed_portal_capture_never_falls_back_to_qt(qapp, monkeypatch):
    from app.capture import CaptureError, grab_screens
    from app.capture.backends import grim, portal, qt

    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    monkeypatch.setattr(grim, "is_available", lambda: False)
    monkeypatch.setattr(portal, "is_available", lambda: True)

    def refused(screens):
        raise CaptureError(portal.REFUSED)

    monkeypatch.setattr(portal, "grab", refused)
    monkeypatch.setattr(qt, "grab", lambda screens: pytest.fail("Qt's grab is black on Wayland"))
    with pytest.raises(CaptureError, match="refused the screenshot"):
        grab_screens()


# --- questions and modal dialogs ------------------------------------------------------------------


def gnome_hotkeys(installs: list):
    from wired_app import FakeHotkeys

    from app.hotkey import HotkeyError

    class GnomeHotkeys(FakeHotkeys):
        def start(self):
            def install():
                installs.append(True)
                return "GNOME now runs Hayai on Ctrl+Alt+O."

            raise HotkeyError("no hotkeys here", offer=("Add them as GNOME shortcuts?", install))

    return GnomeHotkeys()


def shortcuts_box(app):
    box = app.windows.open.get("shortcuts")
    return box if box is not None and box.isVisible() else None


@pytest.mark.parametrize(("button", "stored"), [(0, "add"), (1, "leave")])
def test_the_shortcuts_answer_is_remembered_and_never_modal(
    tmp_path, monkeypatch, make_app, qtbot, button, stored
):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    from app.settings import Settings

    installs = []
    # GIVEN the first start on GNOME: the question, in a window that blocks nothing
    app = make_app(hotkeys=gnome_hotkeys(installs), backend="auto")
    qtbot.waitUntil(lambda: shortcuts_box(app) is not None, timeout=5000)
    box = shortcuts_box(app)
    assert box.windowModality() == Qt.WindowModality.NonModal
    assert QApplication.activeModalWidget() is None
    # WHEN the user answers
    yes, no = box.button(QMessageBox.StandardButton.Yes), box.button(QMessageBox.StandardButton.No)
    qtbot.mouseClick((yes, no)[button], Qt.MouseButton.LeftButton)
    # THEN the answer is stored
    assert Settings().get("hotkey/desktop_shortcuts") == stored
    assert installs == ([True] if stored == "add" else [])
    app.quit()
    # AND the next start asks nothing: it updates the shortcuts, or leaves them alone
    again = make_app(hotkeys=gnome_hotkeys(installs), backend="auto")
    qtbot.wait(200)
    assert shortcuts_box(again) is None
    assert installs == ([True, True] if stored == "add" else [])


def test_a_question_waits_until_the_selection_is_closed(tmp_path, monkeypatch, make_app, qtbot):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    from wired_app import FakeHotkeys

    app = make_app(hotkeys=FakeHotkeys(), backend="auto")
    app.capture.route.grab_screens = lambda: {}
    # GIVEN an open selection
    app.handle_command("capture")
    (session,) = FakeSession.started
    # WHEN the shortcuts question comes up (the hotkeys restart: a changed combo)
    app.hotkey_control.offer_shortcuts("Add them as GNOME shortcuts?", lambda: "added")
    # THEN it is kept back while the selection is open, and asked once it closes
    qtbot.wait(100)
    assert shortcuts_box(app) is None
    session.cancel()
    qtbot.waitUntil(lambda: shortcuts_box(app) is not None, timeout=5000)


def test_no_selection_opens_while_one_of_our_modal_dialogs_is_up(make_app, qtbot, monkeypatch):
    from wired_app import FakeHotkeys

    app = make_app(hotkeys=FakeHotkeys(), backend="auto")
    app.capture.route.grab_screens = lambda: {}
    told = []
    monkeypatch.setattr(
        app.toast, "show_message", lambda title, message, error=False: told.append(message)
    )
    # GIVEN one of our application-modal dialogs (e.g. "Delete every capture in the history?")
    dialog = QMessageBox(QMessageBox.Icon.Question, "Clear history", "Delete every capture?")
    dialog.setWindowModality(Qt.WindowModality.ApplicationModal)
    dialog.show()
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is dialog, timeout=5000)
    # WHEN a capture is triggered (the hotkey)
    app.handle_command("capture")
    # THEN no selection opens over it; the user is told to close it first
    assert not FakeSession.started
    assert "Close the “Clear history” window first" in told[-1]
    dialog.close()
    app.handle_command("capture")
    assert len(FakeSession.started) == 1


def test_a_rescan_through_the_portal_reads_the_same_box_from_a_new_picture(
    desktop, make_app, qtbot
):
    from appcore_fakes import make_selection

    desktop.start()
    app = make_app()
    app.handle_command("capture")
    qtbot.waitUntil(lambda: bool(FakeSession.started), timeout=20000)
    (session,) = FakeSession.started
    (name,) = session.captures
    session.select(make_selection(box=(10, 20, 60, 30), screen=name))
    qtbot.waitUntil(lambda: app.reads.last_latency is not None, timeout=10000)
    # WHEN the user re-scans: a new picture from the portal, off the GUI thread
    app.reads.last_latency = None
    asked = len(desktop.events("Screenshot"))
    app.capture.rescan()
    assert app.capture.background is not None
    qtbot.waitUntil(lambda: app.reads.last_latency is not None, timeout=20000)
    # THEN the same box of a new picture was read
    assert len(desktop.events("Screenshot")) > asked
    assert app.recognizer.reads == [(60, 30), (60, 30)]

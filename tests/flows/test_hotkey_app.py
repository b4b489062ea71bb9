"""The global hotkeys in the app, with a stand-in backend (tests/hotkey/test_hotkey.py's FakeBackend):
the Settings recorder suspends them while it listens, and a combo that cannot work (an invalid
`--hotkey`) is said in the window's entries while the previous working one is kept."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFocusEvent
from PySide6.QtWidgets import QApplication

from app.hotkey import GlobalHotkeys
from app.settings import Settings
from app.ui.hotkey_edit import HotkeyEdit

sys.path.insert(
    0, str(Path(__file__).resolve().parents[1] / "hotkey")
)  # test_hotkey's stand-in backend
import test_hotkey  # noqa: E402  (the stand-in backend's fixture)
import wired_app
from appcore_fakes import FakeSession

env, make_app = wired_app.env, wired_app.make_app
fake_backend = test_hotkey.fake_backend


def _focus(widget, kind: QEvent.Type) -> None:
    QApplication.sendEvent(widget, QFocusEvent(kind, Qt.FocusReason.MouseFocusReason))


def test_the_capture_combo_pressed_in_the_recorder_is_recorded_not_a_capture(
    make_app, fake_backend, qtbot
):
    app = make_app(hotkeys=GlobalHotkeys({}))
    assert fake_backend.started[-1]["capture"] == "<ctrl>+<alt>+o"  # the real class, listening
    dialog = app.windows.show_settings()
    recorder = dialog.findChildren(HotkeyEdit)[0]
    # WHEN the user clicks the capture field and presses the capture combo
    _focus(recorder.field, QEvent.Type.FocusIn)
    assert app.hotkey_control.hotkeys.suspended
    recorder.key_pressed(
        Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
    )
    fake_backend.on_trigger("capture")  # the backend saw the same keys
    qtbot.wait(100)
    # THEN it is the field's new combo, and no capture opened
    assert recorder.combo() == "<ctrl>+<alt>+o"
    assert FakeSession.started == []
    # AND once the field lets go, the hotkey captures again
    _focus(recorder.field, QEvent.Type.FocusOut)
    assert not app.hotkey_control.hotkeys.suspended
    fake_backend.on_trigger("capture")
    qtbot.waitUntil(lambda: len(FakeSession.started) == 1, timeout=3000)
    FakeSession.started[-1].cancel()
    # AND a dialog closed while recording gives the hotkeys back too
    _focus(recorder.field, QEvent.Type.FocusIn)
    dialog.reject()
    assert not app.hotkey_control.hotkeys.suspended


def test_an_invalid_hotkey_option_is_said_in_the_window_and_the_saved_one_kept(
    make_app, fake_backend
):
    settings = Settings(overrides={"hotkey/capture": "ctrl+o"})  # `hayai --hotkey ctrl+o`
    app = make_app(hotkeys=GlobalHotkeys({}), settings=settings)
    # the backend listens for the saved combo, not for none
    assert fake_backend.started[-1]["capture"] == "<ctrl>+<alt>+o"
    window = app.window  # --no-tray: the window's entries
    assert window.capture_button.text() == "Capture region   Ctrl+Alt+O"
    problem = window.hotkey_problem
    assert not problem.isHidden()
    assert "The capture hotkey is invalid" in problem.text() and "ctrl+o" in problem.text()
    assert problem.text().startswith("Capture hotkey stays Ctrl+Alt+O: ")
    assert app.hotkey_control.error.startswith("The capture hotkey is invalid")


def test_a_combo_the_backend_refuses_with_nothing_to_keep_shows_no_combo(make_app, monkeypatch):
    from wired_app import FakeHotkeys

    app = make_app(hotkeys=FakeHotkeys(error="This desktop gives no global hotkeys."))
    assert app.window.capture_button.text() == "Capture region"  # never a combo that does nothing
    assert app.window.hotkey_problem.text() == "This desktop gives no global hotkeys."
    app.hotkey_control.hotkeys.error = None  # it works again: after a settings change the line goes
    app.settings.set("hotkey/capture", "<ctrl>+<shift>+o")
    assert app.window.capture_button.text() == "Capture region   Ctrl+Shift+O"
    assert app.window.hotkey_problem.isHidden()

"""The no-tray window: every tray action as a button, the model line, and closing it quits."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.ui.main_window import MainWindow

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot):
    w = MainWindow("Hayai was started without a tray icon, so its actions are here.")
    qtbot.addWidget(w)
    w.show()
    yield w
    w.close_for_quit()


@pytest.mark.parametrize(
    "button, signal",
    [
        ("capture_button", "capture_requested"),
        ("page_button", "page_requested"),
        ("history_button", "history_requested"),
        ("settings_button", "settings_requested"),
        ("about_button", "about_requested"),
        ("quit_button", "quit_requested"),
    ],
)
def test_each_button_emits_its_signal(window, qtbot, button, signal):
    with qtbot.waitSignal(getattr(window, signal), timeout=1000):
        qtbot.mouseClick(getattr(window, button), Qt.MouseButton.LeftButton)


def test_rescan_and_the_model_line_wait_until_they_can_act(window, qtbot):
    assert not window.rescan_button.isEnabled() and not window.model_button.isEnabled()
    window.set_rescan_enabled(True)
    with qtbot.waitSignal(window.rescan_requested, timeout=1000):
        qtbot.mouseClick(window.rescan_button, Qt.MouseButton.LeftButton)
    window.set_model_state("Model: not ready — click to fix", actionable=True)
    with qtbot.waitSignal(window.model_requested, timeout=1000):
        qtbot.mouseClick(window.model_button, Qt.MouseButton.LeftButton)


def test_hotkeys_are_shown_on_the_buttons(window):
    window.set_hotkeys("<ctrl>+<alt>+o", "<ctrl>+<alt>+r")
    assert window.capture_button.text().endswith("Ctrl+Alt+O")
    assert window.rescan_button.text().endswith("Ctrl+Alt+R")


def test_closing_the_window_quits_but_quitting_does_not_ask_again(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    seen = []
    w.quit_requested.connect(lambda: seen.append("quit"))
    w.close()
    assert seen == ["quit"]
    w.show()
    w.close_for_quit()
    assert seen == ["quit"]


def test_the_status_lines_have_rows_of_their_own(window, qtbot):
    window.set_watch_note("Covered by the Hayai window")
    window.set_hotkey_problem("Capture hotkey stays Ctrl+Alt+O: the combo is invalid")
    qtbot.waitUntil(lambda: window.watch_note.isVisible())
    note = window.watch_note.geometry()
    buttons = (window.log_button, window.history_button, window.watch_button)
    assert all(button.isVisible() for button in buttons)
    for button in buttons:
        assert not note.intersects(button.geometry()), button.text()

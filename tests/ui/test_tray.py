"""The tray view: menu entries in order, hotkeys shown, every entry and a left click only emit signals."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QSystemTrayIcon

from app.hotkey.combo import combo_label as hotkey_label
from app.ui import theme
from app.ui.tray import Toast, Tray

pytestmark = pytest.mark.gui


@pytest.fixture
def tray(qapp):
    t = Tray()
    yield t
    t.hide()


def entries(tray):
    return [a.text() for a in tray.menu.actions() if not a.isSeparator() and a.isVisible()]


def test_menu_entries_in_order(tray):
    tray.set_hotkeys("<ctrl>+<alt>+o", "<ctrl>+<alt>+r")
    assert entries(tray) == [
        "Capture region\tCtrl+Alt+O",
        "Read the whole screen",
        "Hover to read",
        "Re-scan last region\tCtrl+Alt+R",
        "Watch a region…",
        "History…",
        "Reading log…",
        "Settings…",
        "Model: starting…",
        "About Hayai",
        "Quit",
    ]
    assert not tray.rescan_action.isEnabled()  # nothing to re-scan yet


def test_the_watch_lines_follow_the_watch_state(tray):
    tray.set_watch_state("watching")
    assert tray.watch_toggle_action.isVisible() and tray.watch_stop_action.isVisible()
    assert tray.watch_toggle_action.text() == "Pause watching"
    tray.set_watch_state("paused")
    assert tray.watch_toggle_action.text() == "Resume watching"
    tray.set_watch_state("stopped")
    assert not tray.watch_toggle_action.isVisible() and not tray.watch_stop_action.isVisible()


@pytest.mark.parametrize(
    "action, signal",
    [
        ("capture_action", "capture_requested"),
        ("page_action", "page_requested"),
        ("history_action", "history_requested"),
        ("log_action", "log_requested"),
        ("watch_action", "watch_requested"),
        ("settings_action", "settings_requested"),
        ("about_action", "about_requested"),
        ("quit_action", "quit_requested"),
    ],
)
def test_each_entry_emits_its_signal(tray, qtbot, action, signal):
    with qtbot.waitSignal(getattr(tray, signal), timeout=1000):
        getattr(tray, action).trigger()


def test_hover_to_read_is_a_switch_that_names_its_key(tray, qtbot):
    # GIVEN the app says Hover to read is off, with Shift as its key
    tray.set_hover(False, "Shift")
    assert tray.hover_action.isCheckable() and not tray.hover_action.isChecked()
    assert tray.hover_action.text() == "Hover to read\thold Shift"
    # WHEN the user picks the entry THEN the view asks for it on, and changes nothing itself
    with qtbot.waitSignal(tray.hover_toggled, timeout=1000) as asked:
        tray.hover_action.trigger()
    assert asked.args == [True]
    # AND where it cannot work, the entry says why in its tooltip
    tray.set_hover(True, "Ctrl", "Hover to read needs an X11 session")
    assert tray.hover_action.isChecked()
    assert "X11 session" in tray.hover_action.toolTip()


def test_left_click_captures_and_other_clicks_do_not(tray, qtbot):
    seen = []
    tray.capture_requested.connect(lambda: seen.append(1))
    tray.icon.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
    tray.icon.activated.emit(QSystemTrayIcon.ActivationReason.Context)
    assert seen == [1]


def test_model_state_line_and_busy_icon(tray, qtbot):
    tray.set_model_state("Model: ready · cpu · v2.1")
    assert "Model: ready · cpu · v2.1" in entries(tray) and not tray.model_action.isEnabled()
    tray.set_model_state("Model: not ready — click to fix", actionable=True)
    with qtbot.waitSignal(tray.model_requested, timeout=1000):
        tray.model_action.trigger()
    idle = tray.icon.icon().pixmap(32, 32).toImage()
    tray.set_busy(True)
    assert tray.is_busy()
    assert tray.icon.icon().pixmap(32, 32).toImage() != idle


def test_hotkey_label():
    assert hotkey_label("<ctrl>+<shift>+<f9>") == "Ctrl+Shift+F9"
    assert hotkey_label("") == ""


def test_icons_exist_and_a_fallback_is_drawn_without_the_svg(qapp, monkeypatch):
    assert not theme.app_icon().isNull()
    import resources

    def missing(name):
        raise FileNotFoundError(name)

    monkeypatch.setattr(resources, "path", missing)
    monkeypatch.setattr(theme, "_icons", {})
    drawn = theme.app_icon()
    assert not drawn.isNull() and not drawn.pixmap(32, 32).isNull()


def test_toast_shows_a_message_without_a_tray(qtbot):
    toast = Toast()
    qtbot.addWidget(toast)
    toast.show_message("Hayai is running", "Quit with Ctrl+C", ms=200)
    assert toast.isVisible() and toast.body.text() == "Quit with Ctrl+C"
    qtbot.waitUntil(lambda: not toast.isVisible(), timeout=2000)

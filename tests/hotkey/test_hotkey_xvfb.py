"""Global hotkeys on a real X server: xdotool presses keys, pynput (XRecord) sees them."""

from __future__ import annotations

import pytest

from app.hotkey import GlobalHotkeys

pytestmark = [pytest.mark.xvfb, pytest.mark.gui]


@pytest.fixture
def hotkeys(xvfb, qtbot):
    hk = GlobalHotkeys({"capture": "<ctrl>+<alt>+o", "rescan": "<ctrl>+<alt>+r"})
    hk.start()
    yield hk
    hk.stop()


def test_xdotool_ctrl_alt_o_triggers_capture(hotkeys, xvfb, qtbot):
    # GIVEN the default hotkeys listening on the X server
    assert hotkeys.backend_name == "pynput"
    # WHEN xdotool presses ctrl+alt+o THEN triggered("capture") arrives on the GUI thread
    with qtbot.waitSignal(hotkeys.triggered, timeout=5000) as blocker:
        xvfb.xdotool("key", "ctrl+alt+o")
    assert blocker.args == ["capture"]
    with qtbot.waitSignal(hotkeys.triggered, timeout=5000) as blocker:
        xvfb.xdotool("key", "ctrl+alt+r")
    assert blocker.args == ["rescan"]


def test_superset_and_plain_typing_do_not_trigger(hotkeys, xvfb, qtbot):
    # GIVEN the default hotkeys; WHEN the user types o, Ctrl+O and Ctrl+Shift+Alt+R (GNOME's recorder)
    fired: list[str] = []
    hotkeys.triggered.connect(fired.append)
    xvfb.xdotool("key", "o", "ctrl+o", "ctrl+shift+alt+r", "alt+o")
    # THEN nothing fires; and a real combo afterwards still works (no stuck modifier)
    with qtbot.waitSignal(hotkeys.triggered, timeout=5000) as blocker:
        xvfb.xdotool("key", "ctrl+alt+o")
    assert blocker.args == ["capture"]
    assert fired == ["capture"]


def test_stop_ends_listening(hotkeys, xvfb, qtbot):
    fired: list[str] = []
    hotkeys.triggered.connect(fired.append)
    hotkeys.stop()
    xvfb.xdotool("key", "ctrl+alt+o")
    qtbot.wait(300)
    assert fired == []

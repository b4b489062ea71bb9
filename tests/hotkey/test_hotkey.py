"""Hotkey combos, exact matching, and GlobalHotkeys' contract (offscreen, with a fake backend)."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QThread

from app.hotkey import CLI_ROUTE, DEFAULT_HOTKEYS, GlobalHotkeys, HotkeyError, validate_combo
from app.hotkey import main as hotkey_main
from app.hotkey.combo import ComboMatcher


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("<ctrl>+<alt>+o", "<ctrl>+<alt>+o"),
        ("<Alt>+<CTRL>+O", "<ctrl>+<alt>+o"),
        (" <ctrl_l> + <shift> + <f9> ", "<ctrl>+<shift>+<f9>"),
        ("<f9>", "<f9>"),
        ("<print_screen>", "<print_screen>"),
        ("<cmd>+<shift>+2", "<shift>+<cmd>+2"),
        ("<ctrl>+<alt>+<65>", "<ctrl>+<alt>+<65>"),
        ("<ctrl>++", "<ctrl>++"),
    ],
)
def test_valid_combos_are_normalized(text, normalized):
    assert validate_combo(text) == normalized


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the hotkey is empty"),
        ("ctrl+alt+o", "'ctrl' in 'ctrl+alt+o' must be written in angle brackets: <ctrl>"),
        ("<ctrl>+<alt>", "has only modifiers"),
        ("<ctrl>+<hyper>+o", "'<hyper>' in '<ctrl>+<hyper>+o' is not a key pynput knows"),
        ("o", "has no modifier, so it would fire while typing"),
        ("<ctrl>+o+p", "more than one key besides the modifiers (o and p)"),
        ("<ctrl>+<ctrl>+o", "names <ctrl> twice"),
        ("<ctrl>+ab", "'ab' in '<ctrl>+ab' is not a key"),
        ("<ctrl>+", "has an empty part"),
    ],
)
def test_invalid_combos_say_which_part_is_wrong(text, message):
    with pytest.raises(HotkeyError) as error:
        validate_combo(text)
    assert message in str(error.value)


def test_defaults_are_valid_and_distinct():
    normalized = {name: validate_combo(combo) for name, combo in DEFAULT_HOTKEYS.items()}
    assert normalized == DEFAULT_HOTKEYS
    assert len(set(normalized.values())) == len(normalized)


def test_matcher_fires_on_exact_modifiers_only():
    m = ComboMatcher({"capture": "<ctrl>+<alt>+o", "rescan": "<ctrl>+<alt>+r"})
    # GIVEN ctrl+alt held WHEN o goes down THEN capture fires
    assert [m.press("ctrl"), m.press("alt"), m.press("o")] == [None, None, "capture"]
    # AND auto-repeat of o does not fire again until o is released
    assert m.press("o") is None
    m.release("o")
    assert m.press("o") == "capture"
    m.release("o")
    # WHEN shift is held too (GNOME's Ctrl+Shift+Alt+R) THEN rescan does not fire
    m.press("shift")
    assert m.press("r") is None
    m.release("r")
    m.release("shift")
    assert m.press("r") == "rescan"
    m.release("r")
    # WHEN only ctrl is held THEN nothing fires
    m.release("alt")
    assert m.press("o") is None


class FakeBackend:
    INSTALL_HINT = "nothing"

    def __init__(self):
        self.started: list[dict[str, str]] = []
        self.stopped = 0
        self.on_trigger = None

    def is_compatible(self):
        return True

    def is_available(self):
        return True

    def start(self, combos, on_trigger):
        self.started.append(combos)
        self.on_trigger = on_trigger
        return SimpleNamespace(stop=self._stop)

    def _stop(self):
        self.stopped += 1


@pytest.fixture
def fake_backend(monkeypatch):
    backend = FakeBackend()
    monkeypatch.setattr(hotkey_main, "REGISTRY", {"fake": backend})
    return backend


def test_start_passes_normalized_combos(fake_backend, qtbot):
    hk = GlobalHotkeys({"capture": "<Ctrl>+<Alt>+O", "rescan": ""})
    hk.start()
    # the empty rescan setting switches that hotkey off
    assert fake_backend.started == [{"capture": "<ctrl>+<alt>+o"}]
    assert hk.backend_name == "fake"
    hk.stop()
    hk.stop()
    assert fake_backend.stopped == 1


def test_triggers_from_a_foreign_thread_arrive_on_the_gui_thread(fake_backend, qtbot, qapp):
    # GIVEN started hotkeys WHEN the backend's own thread reports a hotkey
    hk = GlobalHotkeys(DEFAULT_HOTKEYS)
    hk.start()
    seen = []
    hk.triggered.connect(lambda name: seen.append((name, QThread.currentThread() is qapp.thread())))
    with qtbot.waitSignal(hk.triggered, timeout=2000):
        thread = threading.Thread(target=fake_backend.on_trigger, args=("rescan",))
        thread.start()
        thread.join()
    # THEN triggered("rescan") is delivered on the GUI thread
    assert seen == [("rescan", True)]
    hk.stop()


def test_invalid_combo_names_the_hotkey_and_the_part(fake_backend):
    hk = GlobalHotkeys({"capture": "<ctrl>+<alt>+o", "rescan": "ctrl+r"})
    with pytest.raises(
        HotkeyError, match=r"The rescan hotkey is invalid: 'ctrl' in 'ctrl\+r' must be written"
    ):
        hk.start()
    assert fake_backend.started == []


def test_two_hotkeys_with_the_same_combo_are_refused(fake_backend):
    with pytest.raises(HotkeyError, match="capture and rescan hotkeys are the same"):
        GlobalHotkeys({"capture": "<ctrl>+<alt>+o", "rescan": "<alt>+<ctrl>+o"}).start()


def test_set_combos_restarts_a_running_listener(fake_backend):
    hk = GlobalHotkeys(DEFAULT_HOTKEYS)
    hk.start()
    hk.set_combos({"capture": "<ctrl>+<shift>+<f9>"})
    assert fake_backend.started[-1] == {"capture": "<ctrl>+<shift>+<f9>"}
    assert fake_backend.stopped == 1
    hk.stop()


def test_wayland_session_explains_the_cli_route(monkeypatch):
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    with pytest.raises(HotkeyError) as error:
        GlobalHotkeys(DEFAULT_HOTKEYS).start()
    assert "Wayland" in str(error.value) and "hayai capture" in str(error.value)


def test_no_display_explains_the_cli_route(monkeypatch):
    for key in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE"):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(HotkeyError) as error:
        GlobalHotkeys(DEFAULT_HOTKEYS).start()
    assert CLI_ROUTE in str(error.value)

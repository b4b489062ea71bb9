"""Hover to read's key on Sway (app/hotkey/hold_sway.py) with its Sway and its glass stood in for:
the order of presses, releases and the events of earlier holds' glasses. The real ones run under
headless Sway in tests/hover/test_hover_sway.py."""

from __future__ import annotations

import pytest

from app.hotkey import hold_sway


class FakeGlass:
    """A glass that records its callbacks; `show()` fails when told to."""

    made: list[FakeGlass] = []
    refuse = ""

    def __init__(self, **callbacks):
        self.callbacks = callbacks
        self.shown = False
        FakeGlass.made.append(self)

    def show(self) -> None:
        if FakeGlass.refuse:
            raise hold_sway.glass_module.WaylandError(FakeGlass.refuse)
        self.shown = True

    def hide(self) -> None:
        self.shown = False


class FakeListener:
    def __init__(self, on_hover, on_reload, on_ended):
        self.on_hover, self.on_ended = on_hover, on_ended

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


@pytest.fixture
def key(qtbot, monkeypatch):
    FakeGlass.made, FakeGlass.refuse = [], ""
    monkeypatch.setattr(hold_sway.glass_module, "Glass", FakeGlass)
    monkeypatch.setattr(hold_sway.glass_module, "offered", lambda globals_: [])
    monkeypatch.setattr("app.platform.wayland.offered_globals", lambda: frozenset())
    monkeypatch.setattr(hold_sway.sway, "BindingListener", FakeListener)
    bound = []
    monkeypatch.setattr(hold_sway.sway, "bind", bound.append)
    monkeypatch.setattr(hold_sway.sway, "unbind", lambda symbol: bound.remove(symbol))
    held = hold_sway.SwayHeldKey("shift")
    held.start()
    events: list[str] = []
    for name in ("pressed", "released", "interrupted", "failed"):
        getattr(held, name).connect(lambda *args, name=name: events.append(name))
    held.events, held.bound = events, bound
    yield held
    held.stop()


def press(qtbot, key) -> None:
    key._listener.on_hover()  # Sway ran the binding (the listener's thread)
    qtbot.waitUntil(lambda: key.held and FakeGlass.made and FakeGlass.made[-1].shown)


def test_a_second_press_without_a_heard_release_starts_a_hold_that_stays(qtbot, key):
    # GIVEN a hold whose glass never heard the key come up (it never had the keyboard)
    press(qtbot, key)
    first = FakeGlass.made[-1]
    # WHEN the key is pressed again
    key._listener.on_hover()
    qtbot.waitUntil(lambda: len(FakeGlass.made) == 2 and FakeGlass.made[1].shown)
    # AND the first glass's last words arrive late (its end, a release it heard after all)
    first.callbacks["on_ended"]("the compositor closed the connection")
    first.callbacks["on_modifiers"](0)
    qtbot.wait(50)
    # THEN the new hold stays: released once (the first hold), pressed twice
    assert key.held and FakeGlass.made[1].shown and not first.shown
    assert key.events == ["pressed", "released", "pressed"]


def test_the_key_up_a_typed_key_or_the_keyboard_leaving_end_the_hold(qtbot, key):
    for end, expected in (
        (lambda glass: glass.callbacks["on_modifiers"](0), "released"),
        (lambda glass: glass.callbacks["on_key"](), "interrupted"),
        (lambda glass: glass.callbacks["on_left"](), "released"),
    ):
        press(qtbot, key)
        glass = FakeGlass.made[-1]
        glass.callbacks["on_modifiers"](1)  # Shift still down: nothing ends
        glass.callbacks["on_pointer"](10.4, 20.6)
        qtbot.wait(20)
        assert key.held and key.pointer().toTuple() == (10, 21)
        end(glass)
        qtbot.waitUntil(lambda: not key.held)
        assert key.events[-1] == expected and not glass.shown


def test_a_glass_that_cannot_be_shown_or_sway_gone_is_said(qtbot, key):
    FakeGlass.refuse = "the compositor does not offer zwlr_layer_shell_v1"
    key._listener.on_hover()
    qtbot.waitUntil(lambda: "failed" in key.events)
    assert not key.held
    FakeGlass.refuse = ""
    key._listener.on_ended("Sway closed its IPC connection")
    qtbot.waitUntil(lambda: key.events.count("failed") == 2)
    assert key._listener is None


def test_the_binding_is_added_at_start_and_taken_away_at_stop(key):
    assert key.bound == ["Shift_R"]
    key.stop()
    assert key.bound == []

"""The shared backend picker: order, environment matrix, overrides, and clear errors."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from app.capture import REGISTRY as CAPTURE
from app.hotkey import REGISTRY as HOTKEY
from app.platform import backends
from app.platform.backends import BackendError, pick, session_type


def fake(compatible: bool = True, available: bool = True, hint: str = "pip install thing"):
    return SimpleNamespace(
        is_compatible=lambda: compatible, is_available=lambda: available, INSTALL_HINT=hint
    )


def test_first_compatible_and_available_wins_and_is_logged(caplog):
    registry = {
        "a": fake(compatible=False),
        "b": fake(available=False, hint="apt install b"),
        "c": fake(),
        "d": fake(),
    }
    with caplog.at_level("INFO", logger="app.platform.backends"):
        choice = pick(registry, capability="demo")
    assert choice.name == "c"
    assert "a: not compatible" in choice.reason and "b: not available" in choice.reason
    assert "demo backend: c" in caplog.text
    assert backends.chosen()["demo"].startswith("c (")


def test_override_wins_even_over_an_incompatible_environment():
    registry = {"a": fake(), "b": fake(compatible=False)}
    choice = pick(registry, "b", capability="demo")
    assert choice.name == "b" and choice.reason.startswith("override")


def test_unknown_override_lists_the_choices():
    with pytest.raises(BackendError, match="unknown demo backend 'zzz'; choose one of: a, b"):
        pick({"a": fake(), "b": fake()}, "zzz", capability="demo")


def test_unavailable_override_gives_its_install_hint():
    with pytest.raises(BackendError, match="apt install b"):
        pick(
            {"a": fake(), "b": fake(available=False, hint="apt install b")}, "b", capability="demo"
        )


def test_nothing_usable_says_why_and_how_to_fix():
    with pytest.raises(
        BackendError,
        match=r"no demo backend works here \(a: not compatible; b: not available\)"
        r"\. To fix: b: apt install b",
    ):
        pick(
            {"a": fake(compatible=False), "b": fake(available=False, hint="apt install b")},
            capability="demo",
        )


ENVIRONMENTS = {
    # name: (sys.platform, environment variables)
    "x11": ("linux", {"DISPLAY": ":0", "XDG_SESSION_TYPE": "x11"}),
    "wayland": (
        "linux",
        {"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"},
    ),
    "wayland_without_session_type": ("linux", {"WAYLAND_DISPLAY": "wayland-0"}),
    "windows": ("win32", {}),
    "macos": ("darwin", {}),
    "headless": ("linux", {}),
}


@pytest.fixture
def environment(monkeypatch):
    def apply(name: str) -> None:
        platform, variables = ENVIRONMENTS[name]
        for key in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE"):
            monkeypatch.delenv(key, raising=False)
        for key, value in variables.items():
            monkeypatch.setenv(key, value)
        monkeypatch.setattr(sys, "platform", platform)
        # Availability is probed separately (imports, a display); here every backend is installed.
        for registry in (CAPTURE, HOTKEY):
            for module in registry.values():
                monkeypatch.setattr(module, "is_available", lambda: True)

    return apply


@pytest.mark.parametrize(
    ("env", "session", "capture", "hotkey"),
    [
        ("x11", "x11", "mss", "pynput"),
        ("wayland", "wayland", "grim", "portal"),
        ("wayland_without_session_type", "wayland", "grim", "portal"),
        ("windows", "windows", "mss", "pynput"),
        ("macos", "macos", "mss", "pynput"),
        ("headless", "unknown", "qt", None),
    ],
)
def test_pick_matrix(environment, env, session, capture, hotkey):
    # GIVEN a desktop environment WHEN each capability picks THEN the expected backend runs
    environment(env)
    assert session_type() == session
    assert pick(CAPTURE, capability="capture").name == capture
    if hotkey is None:
        with pytest.raises(BackendError, match="no hotkey backend works here"):
            pick(HOTKEY, capability="hotkey")
    else:
        assert pick(HOTKEY, capability="hotkey").name == hotkey


@pytest.mark.parametrize("env", ["x11", "wayland", "windows", "macos"])
def test_settings_override_wins_in_every_environment(environment, env):
    environment(env)
    assert pick(CAPTURE, "qt", capability="capture").name == "qt"
    assert pick(CAPTURE, "mss", capability="capture").name == "mss"
    assert pick(HOTKEY, "wayland", capability="hotkey").name == "wayland"


def test_every_backend_module_provides_its_capability_protocol():
    from app.capture.models import CaptureBackend
    from app.hotkey.models import HotkeyBackend

    for registry, protocol in ((CAPTURE, CaptureBackend), (HOTKEY, HotkeyBackend)):
        methods = {n for n, v in vars(protocol).items() if callable(v) and not n.startswith("_")}
        assert {"is_compatible", "is_available"} < methods  # the protocol is what is checked
        for name, module in registry.items():
            for method in methods:
                assert callable(getattr(module, method, None)), f"{name} lacks {method}()"
            assert isinstance(module.INSTALL_HINT, str) and module.INSTALL_HINT, name
            assert callable(getattr(module, "grab", None) or getattr(module, "start", None)), name


def test_on_wayland_without_screencopy_the_portal_captures(environment, monkeypatch):
    # GIVEN a Wayland desktop whose compositor offers no wlr-screencopy (GNOME, KDE)
    environment("wayland")
    monkeypatch.setattr(CAPTURE["grim"], "is_available", lambda: False)
    # THEN the desktop portal captures, and the reason names what was skipped
    choice = pick(CAPTURE, capability="capture")
    assert choice.name == "portal" and "grim: not available" in choice.reason
    # AND without a portal either, the error says what to install for each (jeepney is
    # installed here: the portal's hint names only the portal)
    monkeypatch.setattr(CAPTURE["portal"], "is_available", lambda: False)
    with pytest.raises(
        BackendError, match="grim: install grim.*portal: the desktop must run xdg-desktop-portal"
    ) as raised:
        pick(CAPTURE, capability="capture")
    assert "jeepney" not in str(raised.value)


def test_on_wayland_without_portal_shortcuts_the_wayland_backend_explains(environment, monkeypatch):
    environment("wayland")
    monkeypatch.setattr(HOTKEY["portal"], "is_available", lambda: False)
    assert pick(HOTKEY, capability="hotkey").name == "wayland"


def test_a_region_is_not_watched_through_the_screenshot_portal(environment, monkeypatch):
    from app.capture import watch_problem

    environment("x11")
    assert watch_problem() == ""  # mss reads the box directly
    environment("wayland")
    assert watch_problem() == ""  # grim, where the compositor offers screencopy
    monkeypatch.setattr(CAPTURE["grim"], "is_available", lambda: False)
    assert "install grim" in watch_problem()  # GNOME, KDE: only the portal

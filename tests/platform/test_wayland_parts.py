"""The Wayland parts that need no compositor: the portal image split per screen, the combos in
each desktop's format, GNOME's keybindings through a real gsettings, the settings' backend lists."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from app.capture.models import ScreenInfo
from app.hotkey import desktop


def test_combos_in_each_desktops_format():
    assert desktop.portal_trigger("<ctrl>+<alt>+o") == "CTRL+ALT+o"
    assert desktop.portal_trigger("<cmd>+<shift>+<f9>") == "SHIFT+LOGO+F9"
    assert desktop.gnome_binding("<ctrl>+<alt>+r") == "<Control><Alt>r"
    assert desktop.gnome_binding("<ctrl>+<page_up>") == "<Control>Prior"
    assert desktop.sway_binding("<ctrl>+<alt>+o") == "Ctrl+Mod1+o"
    assert desktop.hyprland_binding("<ctrl>+<alt>+o") == ("CTRL ALT", "O")
    assert desktop.label("<ctrl>+<alt>+<f9>") == "Ctrl+Alt+F9"
    with pytest.raises(ValueError, match="virtual key code"):
        desktop.portal_trigger("<ctrl>+<65>")


def test_a_shortcut_runs_this_installation_even_a_bundle(monkeypatch):
    import sys

    monkeypatch.delenv("APPIMAGE", raising=False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # a PyInstaller bundle
    monkeypatch.setattr(sys, "executable", "/opt/Hayai Desktop/hayai")
    assert desktop.hayai_command() == "'/opt/Hayai Desktop/hayai'"  # not a `hayai` on PATH
    monkeypatch.setenv("APPIMAGE", "/home/u/Hayai.AppImage")
    assert desktop.hayai_command() == "/home/u/Hayai.AppImage"


def test_sway_and_hyprland_lines_run_this_hayai(monkeypatch):
    monkeypatch.setattr(desktop, "hayai_command", lambda: "/opt/hayai/bin/hayai")
    combos = {"capture": "<ctrl>+<alt>+o", "rescan": "<ctrl>+<alt>+r"}
    assert desktop.config_lines(combos, "sway") == [
        "bindsym Ctrl+Mod1+o exec /opt/hayai/bin/hayai capture",
        "bindsym Ctrl+Mod1+r exec /opt/hayai/bin/hayai capture --repeat",
        'for_window [app_id="^hayai$"] floating enable',
    ]
    assert desktop.config_lines(combos, "hyprland")[:2] == [
        "bind = CTRL ALT, O, exec, /opt/hayai/bin/hayai capture",
        "bind = CTRL ALT, R, exec, /opt/hayai/bin/hayai capture --repeat",
    ]


def test_on_sway_the_hotkey_error_carries_the_config_lines(monkeypatch):
    from app.hotkey.backends import wayland

    monkeypatch.setenv("XDG_CURRENT_DESKTOP", "sway")
    error = wayland.explain({"capture": "<ctrl>+<alt>+o"})
    assert "~/.config/sway/config" in str(error) and "bindsym Ctrl+Mod1+o exec" in str(error)
    assert error.offer is None


def test_every_hotkey_of_the_app_has_a_desktop_shortcut_command(monkeypatch, tmp_path):
    # GIVEN the app's hotkeys by command, as Application hands them to the backend
    from app.flows.hotkeys import combos as app_combos
    from app.hotkey.backends import wayland
    from app.settings import Settings

    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("XDG_CURRENT_DESKTOP", "sway")
    monkeypatch.setattr(desktop, "hayai_command", lambda: "/usr/bin/hayai")
    combos = app_combos(Settings())
    # WHEN Sway is told which lines to add
    error = wayland.explain(combos)
    # THEN each hotkey runs its own command (not a KeyError's text as the message)
    assert set(combos) == set(desktop.COMMANDS) == set(desktop.TITLES)
    assert "bindsym Ctrl+Mod1+w exec /usr/bin/hayai watch --toggle" in str(error)
    assert "Global hotkeys do not work in a Wayland session" in str(error)


def test_watch_toggle_is_a_command_the_running_app_takes():
    import argparse

    from app.platform.single_instance import COMMANDS
    from app.reading import cli

    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers())
    assert cli.message(parser.parse_args(["watch", "--toggle"])) == "watch-toggle"
    assert "watch-toggle" in COMMANDS


def _gsettings_env(tmp_path, monkeypatch):
    if shutil.which("gsettings") is None:
        pytest.skip("gsettings is not installed (apt-get install libglib2.0-bin)")
    monkeypatch.setenv("GSETTINGS_BACKEND", "keyfile")  # a real gsettings, writing into tmp_path
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    if not desktop.gnome_can_install():
        pytest.skip(
            "GNOME's media-keys schema is not installed (apt-get install gnome-settings-daemon-common)"
        )


def test_gnome_offer_adds_the_custom_keybindings_and_keeps_the_users(tmp_path, monkeypatch):
    _gsettings_env(tmp_path, monkeypatch)
    from app.hotkey.backends import wayland

    schema = desktop.GNOME_SCHEMA
    mine = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/custom0/"
    subprocess.run(["gsettings", "set", schema, "custom-keybindings", f"['{mine}']"], check=True)
    monkeypatch.setenv("XDG_CURRENT_DESKTOP", "ubuntu:GNOME")
    monkeypatch.setattr(desktop, "hayai_command", lambda: "/usr/bin/hayai")
    error = wayland.explain({"capture": "<ctrl>+<alt>+o", "rescan": "<ctrl>+<alt>+r"})
    question, install = error.offer
    assert "Ctrl+Alt+O (capture), Ctrl+Alt+R (re-scan)" in question
    assert "GNOME now runs Hayai" in install()
    install()  # twice: updated in place, not added again
    listed = subprocess.run(
        ["gsettings", "get", schema, "custom-keybindings"], capture_output=True, text=True
    ).stdout
    assert listed.count("hayai-capture") == 1 and mine in listed
    assert desktop.gnome_bindings() == {
        desktop.GNOME_PATH.format(name="capture"): ("/usr/bin/hayai capture", "<Control><Alt>o"),
        desktop.GNOME_PATH.format(name="rescan"): (
            "/usr/bin/hayai capture --repeat",
            "<Control><Alt>r",
        ),
    }


def test_portal_image_is_split_per_screen_in_physical_pixels(qapp):
    from PySide6.QtGui import QColor, QImage

    from app.capture.backends import portal

    # a scale-1 screen (800x600) left of a scale-2 screen (logical 600x400): the portal's image
    # spans the layout (1400x600 logical) at scale 2
    screens = [
        ScreenInfo("A", (0, 0, 800, 600), (0, 0, 800, 600), 1.0),
        ScreenInfo("B", (800, 0, 600, 400), (800, 0, 1200, 800), 2.0),
    ]
    image = QImage(2800, 1200, QImage.Format.Format_RGB32)
    image.fill(QColor(10, 20, 30))
    for x in range(1600, 2800):
        for y in (0, 799):
            image.setPixelColor(x, y, QColor(200, 100, 50))
    captures = portal.split(image, screens)
    a, b = captures["A"], captures["B"]
    assert (a.image.width(), a.image.height()) == (800, 600)  # resampled to its physical size
    assert (b.image.width(), b.image.height()) == (1200, 800)  # its own pixels, uncut
    assert b.image.pixelColor(0, 0) == QColor(200, 100, 50)
    assert b.image.pixelColor(1199, 799) == QColor(200, 100, 50)
    assert b.image.pixelColor(5, 5) == QColor(10, 20, 30)
    assert b.screen.physical == (800, 0, 1200, 800)


def test_the_backend_settings_list_exactly_the_registries():
    from app.capture import REGISTRY as CAPTURE
    from app.hotkey import REGISTRY as HOTKEY
    from app.settings.table import BY_KEY

    assert BY_KEY["capture/backend"].choices == ("auto", *CAPTURE)
    assert BY_KEY["hotkey/backend"].choices == ("auto", *HOTKEY)
    from app.cli import build_parser

    args = build_parser().parse_args(["--capture-backend", "portal"])
    from app.settings import overrides_from_args

    assert overrides_from_args(args)["capture/backend"] == "portal"

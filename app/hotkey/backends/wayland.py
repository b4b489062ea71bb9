"""Wayland: compositors do not let an app see keys typed into others, so there is no global hotkey.

This "backend" is chosen on Wayland only to say so clearly and point at the route that works:
a desktop shortcut running `hayai capture`. (A GlobalShortcuts portal backend could live here later.)
"""

from __future__ import annotations

from collections.abc import Callable

from app.backends import session_type
from app.hotkey.models import CLI_ROUTE, HotkeyError

INSTALL_HINT = "nothing to install: bind `hayai capture` as a desktop shortcut"

MESSAGE = "Global hotkeys do not work in a Wayland session (the compositor keeps other apps' keys private). "


def is_compatible() -> bool:
    return session_type() == "wayland"


def is_available() -> bool:
    return True


def start(combos: dict[str, str], on_trigger: Callable[[str], None]):
    raise HotkeyError(MESSAGE + CLI_ROUTE)

"""Wayland without the GlobalShortcuts portal: no app may see keys typed into others there.

Chosen on Wayland when the portal backend is not offered, to say so and to set up the route that
works, a desktop shortcut running `hayai capture`: on GNOME the app offers to add the custom
keybindings itself (gsettings); on Sway and Hyprland the message (and the log) carries the exact
config lines to add; elsewhere it names the desktop's keyboard settings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from app.hotkey import desktop
from app.hotkey.models import CLI_ROUTE, HotkeyError
from app.platform.backends import session_type

log = logging.getLogger(__name__)

INSTALL_HINT = "nothing to install: bind `hayai capture` as a desktop shortcut"

MESSAGE = "Global hotkeys do not work in a Wayland session (the compositor keeps other apps' keys private). "


def is_compatible() -> bool:
    return session_type() == "wayland"


def is_available() -> bool:
    return True


def explain(combos: dict[str, str]) -> HotkeyError:
    """The error for this desktop: what to do, and on GNOME an offer to do it."""
    kind = desktop.desktop()
    if kind in ("sway", "hyprland"):
        lines = desktop.config_lines(combos, kind)
        text = "\n".join(lines)
        log.warning("add these lines to %s:\n%s", desktop.config_file(kind), text)
        return HotkeyError(
            f"{MESSAGE}Add these lines to {desktop.config_file(kind)} and reload it:\n{text}"
        )
    if kind == "gnome" and desktop.gnome_can_install():
        names = {"capture": "capture", "rescan": "re-scan", "watch-toggle": "pause/resume watching"}
        keys = ", ".join(f"{desktop.label(c)} ({names.get(n, n)})" for n, c in combos.items())

        def install() -> str:
            desktop.gnome_install(combos)
            return f"GNOME now runs Hayai on {keys} (Settings → Keyboard → Custom Shortcuts)."

        question = (
            "GNOME on Wayland keeps keys from other apps, so Hayai cannot listen for its hotkeys "
            f"itself. Add them as GNOME keyboard shortcuts ({keys}) that run Hayai?"
        )
        return HotkeyError(MESSAGE + CLI_ROUTE, offer=(question, install))
    return HotkeyError(MESSAGE + CLI_ROUTE)


def start(combos: dict[str, str], on_trigger: Callable[[str], None]):
    raise explain(combos)

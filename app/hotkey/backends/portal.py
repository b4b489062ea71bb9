"""Global shortcuts through the XDG desktop portal (KDE Plasma 6, GNOME 48+, Hyprland).

The desktop owns the keys: we create a GlobalShortcuts session, bind our two shortcuts with the
combos as *preferred* triggers (the desktop may show them to the user, who can change them in its
own settings), and a thread waits for `Activated(session, shortcut_id, ...)` signals. Stopping
closes the session, which unbinds them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from app.hotkey import desktop
from app.hotkey.models import HotkeyError
from app.platform.backends import session_type
from app.platform.portal import INSTALL_HINT as PORTAL_HINT
from app.platform.portal import Portal, PortalError, has_interface, token

log = logging.getLogger(__name__)

INTERFACE = "org.freedesktop.portal.GlobalShortcuts"
INSTALL_HINT = (
    "a desktop whose portal offers GlobalShortcuts (KDE Plasma 6, GNOME 48+, Hyprland); "
    + (PORTAL_HINT)
)
BIND_TIMEOUT_S = 120  # the desktop may ask the user to confirm the shortcuts the first time


def is_compatible() -> bool:
    return session_type() == "wayland"


def is_available() -> bool:
    return has_interface(INTERFACE)


class Listening:
    def __init__(self, portal: Portal, session_handle: str, on_trigger: Callable[[str], None]):
        self._portal = portal
        self.session_handle = session_handle
        self._on_trigger = on_trigger
        self._stopping = threading.Event()
        rule = {
            "interface": INTERFACE,
            "member": "Activated",
            "path": "/org/freedesktop/portal/desktop",
        }
        self._subscription = portal.subscribed(rule)
        self._queue = self._subscription.__enter__()
        self._thread = threading.Thread(
            target=self._run, name="hayai-portal-shortcuts", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                signal = self._portal.connection.recv_until_filtered(self._queue, timeout=0.25)
            except TimeoutError:
                continue
            except Exception as error:  # the connection went away
                if not self._stopping.is_set():
                    log.warning("global shortcuts stopped: %s", error)
                return
            session, shortcut_id = signal.body[0], signal.body[1]
            if session == self.session_handle:
                log.debug("portal shortcut %s activated", shortcut_id)
                self._on_trigger(shortcut_id)

    def stop(self) -> None:
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._thread.join(timeout=2)
        self._subscription.__exit__(None, None, None)
        try:
            self._portal.call(
                "org.freedesktop.portal.Session", "Close", "", (), path=self.session_handle
            )
        except (PortalError, OSError) as error:
            log.debug("closing the shortcuts session: %s", error)
        self._portal.close()


def start(combos: dict[str, str], on_trigger: Callable[[str], None]) -> Listening:
    try:
        portal = Portal(timeout_s=10.0)
    except PortalError as error:
        raise HotkeyError(f"The desktop portal is not reachable: {error}") from error
    try:
        created = portal.request(
            INTERFACE,
            "CreateSession",
            "a{sv}",
            ({"session_handle_token": ("s", token())},),
            timeout_s=30,
        )
        session_handle = str(created["session_handle"])
        shortcuts = [
            (
                name,
                {
                    "description": ("s", desktop.TITLES[name]),
                    "preferred_trigger": ("s", desktop.portal_trigger(combo)),
                },
            )
            for name, combo in combos.items()
        ]
        bound = portal.request(
            INTERFACE,
            "BindShortcuts",
            "oa(sa{sv})sa{sv}",
            (session_handle, shortcuts, "", {}),
            timeout_s=BIND_TIMEOUT_S,
        )
    except (PortalError, KeyError) as error:
        portal.close()
        raise HotkeyError(
            f"The desktop did not accept Hayai's global shortcuts: {error}"
        ) from error
    for shortcut_id, properties in bound.get("shortcuts", []):
        trigger = properties.get("trigger_description", ("s", "?"))[1]
        log.info("portal shortcut %s: %s", shortcut_id, trigger or "(not assigned yet)")
    return Listening(portal, session_handle, on_trigger)

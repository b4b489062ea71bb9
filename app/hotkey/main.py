"""`GlobalHotkeys`: a QObject that emits `triggered(name)` on the GUI thread when a hotkey is pressed."""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Qt, Signal

from app.hotkey.backends import portal as portal_backend
from app.hotkey.backends import pynput as pynput_backend
from app.hotkey.backends import wayland as wayland_backend
from app.hotkey.combo import validate_combo
from app.hotkey.models import CLI_ROUTE, HotkeyBackend, HotkeyError, Listening
from app.platform.backends import BackendError, pick
from app.settings.table import BY_KEY

log = logging.getLogger(__name__)

# pynput on X11, Windows and macOS; on Wayland the portal's GlobalShortcuts where the desktop
# offers them, else the wayland backend, which explains (and on GNOME sets up) desktop shortcuts.
REGISTRY: dict[str, HotkeyBackend] = {
    "pynput": pynput_backend,
    "portal": portal_backend,
    "wayland": wayland_backend,
}

# The defaults are the settings table's (app/settings/table.py says why Ctrl+Alt+O and Ctrl+Alt+R).
DEFAULT_HOTKEYS = {name: BY_KEY[f"hotkey/{name}"].default for name in ("capture", "rescan")}


class GlobalHotkeys(QObject):
    """`GlobalHotkeys({"capture": "<ctrl>+<alt>+o", "rescan": "<ctrl>+<alt>+r"}).start()`.

    `start()` raises HotkeyError with a message meant for the user (invalid combo and which part,
    Wayland, macOS permission); the app shows it and keeps running. `stop()` is safe to call twice.
    """

    triggered = Signal(str)
    # emitted from the backend's thread; queued into this object's (GUI) thread
    _fired = Signal(str)

    def __init__(
        self, combos: dict[str, str], backend: str | None = None, parent: QObject | None = None
    ):
        super().__init__(parent)
        self._combos = dict(combos)
        self.backend = backend  # a REGISTRY name, or None to pick by session; read by start()
        self._listening: Listening | None = None
        self.backend_name: str | None = None
        # True while Settings records a hotkey: the keys pressed there are the new combo, not a
        # capture (the backend keeps listening; its triggers are dropped here, on the GUI thread).
        self.suspended = False
        self._fired.connect(self._on_fired, Qt.ConnectionType.QueuedConnection)

    def _on_fired(self, name: str) -> None:
        if self.suspended:
            log.info("the %s hotkey was pressed while a hotkey is recorded: ignored", name)
            return
        self.triggered.emit(name)

    @property
    def combos(self) -> dict[str, str]:
        return dict(self._combos)

    def set_combos(self, combos: dict[str, str]) -> None:
        """Replace the combos; restarts listening when it was running (may raise HotkeyError)."""
        running = self._listening is not None
        self.stop()
        self._combos = dict(combos)
        if running:
            self.start()

    def start(self) -> None:
        self.stop()
        normalized = self._validated()
        try:
            choice = pick(REGISTRY, self.backend, capability="hotkey")
        except BackendError as error:
            raise HotkeyError(f"{error} {CLI_ROUTE}") from error
        self._listening = choice.module.start(normalized, self._fired.emit)
        self.backend_name = choice.name
        log.info(
            "hotkeys (%s): %s", choice.name, ", ".join(f"{n}={c}" for n, c in normalized.items())
        )

    def stop(self) -> None:
        listening, self._listening = self._listening, None
        if listening is not None:
            listening.stop()

    def _validated(self) -> dict[str, str]:
        normalized: dict[str, str] = {}
        for name, combo in self._combos.items():
            if not combo:
                continue  # an empty setting switches that hotkey off
            try:
                normalized[name] = validate_combo(combo)
            except HotkeyError as error:
                raise HotkeyError(f"The {name} hotkey is invalid: {error}.") from error
        by_combo: dict[str, str] = {}
        for name, combo in normalized.items():
            if combo in by_combo:
                raise HotkeyError(
                    f"The {by_combo[combo]} and {name} hotkeys are the same ({combo})."
                )
            by_combo[combo] = name
        return normalized

"""A key held down, heard globally: Hover to read's key (app/flows/hover.py).

`HeldKey("shift")` emits, on the GUI thread, `pressed` when the key goes down while no other key is
held, `released` when it comes up, and `interrupted` when another key goes down while it is held
(a capital typed, a shortcut): holding a modifier types nothing, pressing it with another key is
typing, not pointing. The listener is pynput's, as the hotkeys' (app/hotkey/backends/pynput.py):
it only listens, so the focused program still gets every key, and it costs nothing between key
events (it waits on the X server's record of them).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, QPoint, Qt, Signal
from PySide6.QtGui import QCursor

from app.hotkey.backends import pynput as pynput_backend
from app.hotkey.combo import MODIFIER_LABELS, MODIFIERS
from app.hotkey.models import HotkeyError

log = logging.getLogger(__name__)

HOLD_KEYS = MODIFIERS  # a key held while pointing must type nothing by itself

WAYLAND = (
    "Hover to read needs to hear a key held and know where the pointer is, which Wayland keeps "
    "from applications. It works on Sway (a key binding tells Hayai, see docs/wayland.md) and in "
    "an X11 session (on GNOME and KDE, choose the X11 or Xorg session at login). Box a region "
    "with the capture hotkey instead."
)


def key_label(key: str) -> str:
    """`shift` → `Shift` (`cmd` → `Super` on Linux), as the desktop writes it."""
    import sys

    return MODIFIER_LABELS.get(sys.platform, MODIFIER_LABELS["linux"]).get(key, key)


def held_key(key: str, parent: QObject | None = None):
    """The hover key's listener for this session: X11's (`HeldKey`) or Sway's
    (app/hotkey/hold_sway.py); `start()` says in HotkeyError where there is none."""
    from app.platform import sway

    if not pynput_backend.is_compatible() and sway.available():
        from app.hotkey.hold_sway import SwayHeldKey

        return SwayHeldKey(key, parent)
    return HeldKey(key, parent)


class HeldKey(QObject):
    """`HeldKey("shift").start()`; `stop()` is safe to call twice. `start()` raises HotkeyError
    with a sentence for the user where no key can be heard (Wayland, no pynput)."""

    pressed = Signal()
    released = Signal()
    interrupted = Signal()
    failed = Signal(str)  # the key can no longer be heard: why (Sway's backend; pynput's never)
    _event = Signal(str)  # from the listener's thread, queued to this object's (GUI) thread

    def __init__(self, key: str, parent: QObject | None = None):
        super().__init__(parent)
        if key not in HOLD_KEYS:
            raise HotkeyError(f"{key!r} cannot be held to read; one of {', '.join(HOLD_KEYS)}")
        self.key = key
        self.note = ""  # nothing for the user to know first (Sway's key has: hold_sway.py)
        self._listener = None
        self._event.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def _deliver(self, what: str) -> None:
        getattr(self, what).emit()

    def start(self) -> None:
        self.stop()
        if not pynput_backend.is_compatible():
            raise HotkeyError(WAYLAND)
        if not pynput_backend.is_available():
            raise HotkeyError(f"the keyboard cannot be heard here: {pynput_backend.INSTALL_HINT}")
        from pynput import keyboard

        down: set[str] = set()  # the keys held now, the hover key among them (listener thread)
        state = {"held": False, "interrupted": False}

        def on_press(key) -> None:
            try:
                name = token(key)
                if name is None or name in down:
                    return  # auto-repeat
                down.add(name)
                if name == self.key and len(down) == 1:
                    state.update(held=True, interrupted=False)
                    self._event.emit("pressed")
                elif state["held"] and not state["interrupted"]:
                    state["interrupted"] = True
                    self._event.emit("interrupted")
            except Exception:  # an exception here would silently stop pynput's listener
                log.exception("hover key listener failed")

        def on_release(key) -> None:
            try:
                name = token(key)
                down.discard(name or "")
                if name == self.key:
                    # a release the listener missed (a key held as it started, a screen lock)
                    # would keep "alone" false for good: the hover key's release starts afresh
                    down.clear()
                if name == self.key and state["held"]:
                    state["held"] = False
                    self._event.emit("released")
            except Exception:
                log.exception("hover key listener failed")

        listener = keyboard.Listener(on_press=on_press, on_release=on_release)
        token = pynput_backend.key_token(listener)
        listener.start()
        pynput_backend.wait_ready(listener)
        self._listener = listener
        log.info("hover to read: listening for %s held", key_label(self.key))

    def pointer(self) -> QPoint:
        """Where the pointer is (X11 tells Qt wherever it is)."""
        return QCursor.pos()

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.stop()

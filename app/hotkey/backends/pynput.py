"""Global hotkeys with pynput's keyboard listener: X11 (XRecord), Windows (low-level hook), macOS.

pynput only listens (it never grabs), so the focused app still sees the keys. Its own GlobalHotKeys
also fires on supersets of a combo, so we feed its events to our exact `ComboMatcher` instead.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

from app.hotkey.combo import MODIFIERS, NAMED_KEYS, ComboMatcher
from app.hotkey.models import CLI_ROUTE, HotkeyError, Listening
from app.platform.backends import session_type

log = logging.getLogger(__name__)

INSTALL_HINT = (
    "pip install pynput (X11 needs the XRecord extension, macOS the Input Monitoring permission)"
)

MACOS_PERMISSION = (
    "macOS has not allowed Hayai to watch the keyboard: open System Settings → Privacy & Security → "
    "Input Monitoring (and Accessibility), enable Hayai (or the terminal you start it from), then restart Hayai. "
)


def is_compatible() -> bool:
    # On Wayland pynput sees only keys typed into XWayland windows: useless as a global hotkey.
    return session_type() in ("x11", "windows", "macos")


def is_available() -> bool:
    try:
        import pynput.keyboard  # noqa: F401  (fails without an X connection on Linux)
    except Exception:  # ImportError, or Xlib display errors raised while importing
        return False
    return True


def key_token(listener) -> Callable[[object], str | None]:
    """Maps pynput key objects to matcher tokens ("ctrl", "o", "<f9>", "<65>")."""
    from pynput.keyboard import Key, KeyCode

    modifier_by_key = {listener.canonical(Key[m]): m for m in MODIFIERS}
    named_by_vk: dict[int, str] = {}
    for name in NAMED_KEYS:
        key = getattr(Key, name, None)
        if key is not None and key.value.vk is not None:
            named_by_vk.setdefault(key.value.vk, name)

    def token(key) -> str | None:
        if key is None:
            return None
        canonical = listener.canonical(key)
        if canonical in modifier_by_key:
            return modifier_by_key[canonical]
        if isinstance(canonical, KeyCode):
            vk = canonical.vk
            # Windows reports control characters for Ctrl+letter; the virtual key code is the letter.
            if (
                sys.platform == "win32"
                and vk is not None
                and (0x30 <= vk <= 0x39 or 0x41 <= vk <= 0x5A)
            ):
                return chr(vk).lower()
            if canonical.char:
                return canonical.char.lower()
            if vk is not None:
                return f"<{named_by_vk[vk]}>" if vk in named_by_vk else f"<{vk}>"
        return None

    return token


def start(combos: dict[str, str], on_trigger: Callable[[str], None]) -> Listening:
    """Start a listener thread; returns it (its `.stop()` ends listening)."""
    try:
        from pynput import keyboard
    except Exception as error:
        raise HotkeyError(
            f"pynput cannot listen to the keyboard here ({error}). {CLI_ROUTE}"
        ) from error

    matcher = ComboMatcher(combos)
    listener = None

    # a key with no token (None: pynput knows no name for it) is part of no combo
    def on_press(key: object) -> None:
        try:
            pressed = token(key)
            name = matcher.press(pressed) if pressed is not None else None
            if name:
                log.debug("hotkey %s", name)
                on_trigger(name)
        except Exception:  # an exception here would silently stop pynput's listener
            log.exception("hotkey callback failed")

    def on_release(key: object) -> None:
        try:
            released = token(key)
            if released is not None:
                matcher.release(released)
        except Exception:
            log.exception("hotkey callback failed")

    listener = keyboard.Listener(on_press=on_press, on_release=on_release)
    token = key_token(listener)
    listener.start()
    wait_ready(listener)
    if sys.platform == "darwin" and not getattr(listener, "IS_TRUSTED", True):
        listener.stop()
        raise HotkeyError(MACOS_PERMISSION + CLI_ROUTE)
    return listener


def wait_ready(listener, timeout_s: float = 2.0) -> None:
    # pynput's own wait() blocks forever when the listener thread dies before it is ready
    # (e.g. an X server without XRecord), so poll with a deadline instead.
    deadline = time.monotonic() + timeout_s
    while not getattr(listener, "_ready", True) and time.monotonic() < deadline:
        if not listener.is_alive():
            try:
                listener.join()
            except Exception as error:
                raise HotkeyError(
                    f"the keyboard listener failed to start ({error}). {CLI_ROUTE}"
                ) from error
            raise HotkeyError(f"the keyboard listener stopped at once. {CLI_ROUTE}")
        time.sleep(0.005)
    if not getattr(listener, "_ready", True):
        log.warning("the keyboard listener is slow to start; hotkeys may work a moment later")
